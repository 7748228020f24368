"""A directory of code root will run (a fleet fix's playbook, planners and scripts), built
where no one else can change it and put in place whole.

A fleet fix's output is run as root on every host. Had it been written into a directory
another user made (an empty one planted in ``/tmp``), that user could rename its files away
after the fix and put their own in their place. So the output is built in a directory only
the caller can enter (``mkdtemp``: mode 0700), beside the one asked for, then renamed to its
name in one step; it is refused, with the reason, where:

- the name asked for exists and is a link, not a directory, not empty, not the caller's, or
  writable by group or others;
- a directory on the way to it may be changed by another user: not owned by root or the
  caller, or writable by group or others without the sticky bit (``/tmp`` is fine: there no
  one but its owner may rename an entry).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .rules.errors import UserInputError


class PrivateOutputError(UserInputError):
    """An output directory another user could change, with the reason."""


def _unsafe_ancestor(directory: str) -> str:
    """Why another user could rename an entry of ``directory`` or of one above it; ''."""
    me = os.geteuid()
    current = os.path.realpath(directory)
    while True:
        try:
            status = os.stat(current)
        except OSError as exc:
            return f"{current}: {exc.strerror}"
        if status.st_uid not in (0, me):
            return f"{current} belongs to uid {status.st_uid}"
        if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not status.st_mode & stat.S_ISVTX:
            return f"{current} is writable by group or others (and not sticky)"
        if current == "/":
            return ""
        current = os.path.dirname(current)


def _unsafe_existing(path: str) -> str:
    """Why an existing ``path`` may not become the output; '' where it may (or is new)."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return exc.strerror or "cannot be examined"
    if stat.S_ISLNK(status.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(status.st_mode):
        return "it is not a directory"
    if os.listdir(path):
        return ("it is not empty (one left from an earlier fix could hold a plan for a host "
                "this one refuses)")
    if status.st_uid != os.geteuid():
        return f"it belongs to uid {status.st_uid}, not to you"
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "it is writable by group or others"
    return ""


@contextlib.contextmanager
def private_directory(directory: str) -> Iterator[Path]:
    """A private directory to write the output in; renamed to ``directory`` when the block
    ends without an error, removed otherwise."""
    target = os.path.abspath(directory)
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        raise PrivateOutputError(f"{directory}: its directory {parent} does not exist")
    why = _unsafe_existing(target) or _unsafe_ancestor(parent)
    if why:
        raise PrivateOutputError(
            f"{directory}: {why}. A fix is code root runs: give a new directory (or an empty "
            "one of your own) where no other user can rename or replace its files")
    building = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.", dir=parent)
    try:
        yield Path(building)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(building, 0o755 & ~umask)  # readable as a report is; never writable by others
        try:
            os.rename(building, target)  # replaces an empty directory of the caller's, or fails
        except OSError as exc:
            raise PrivateOutputError(f"{directory}: cannot put the fix in place: "
                                     f"{exc.strerror} (changed while the fix was written?)"
                                     ) from None
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
