"""Copying an unpacked tree (a sosreport directory) that its owner may change meanwhile.

The tree may belong to another user who races the copy: a file turned into a link after it
was examined, a directory swapped for a link to /root, a link to /dev/zero. Every entry is
therefore opened relative to its parent's descriptor with ``O_NOFOLLOW``, checked with
``fstat`` against what was listed, and read through that descriptor with a byte cap; the
walk keeps its own stack and depth bound instead of recursing.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from collections.abc import Callable

from .snapshot import (
    MAX_DEPTH,
    MAX_MEMBER_BYTES,
    MAX_MEMBERS,
    MAX_TOTAL_BYTES,
    SnapshotError,
    add_link,
    make_directories,
)

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def copy_tree(source: str, root: str, place: Callable[[str], str | None]) -> None:
    """Copy an unpacked tree into ``root`` with the archive's rules: ``place`` maps each
    relative name to an in-root path or None; links are re-made safe, never followed;
    anything but files, directories and links is left out. A file that changed kind while
    being copied is left out too (a scan sees it missing); limits raise SnapshotError."""
    os.makedirs(root)
    budget = _Budget()
    try:
        top = os.open(source, _DIRECTORY_FLAGS)
    except OSError as exc:
        raise SnapshotError(f"{source}: {exc.strerror}") from exc
    pending: list[tuple[int, str]] = [(top, "")]
    try:
        while pending:
            directory, relative = pending.pop()
            try:
                pending.extend(reversed(_copy_directory(directory, relative, root, place,
                                                        budget)))
            finally:
                os.close(directory)
    except OSError as exc:
        raise SnapshotError(f"{source}: {exc}") from exc
    finally:
        for directory, _ in pending:
            os.close(directory)


class _Budget:
    def __init__(self) -> None:
        self.entries = 0
        self.bytes = 0

    def entry(self) -> None:
        self.entries += 1
        if self.entries > MAX_MEMBERS:
            raise SnapshotError(f"more than {MAX_MEMBERS} entries")

    def size(self, name: str, size: int) -> None:
        """Refuse at once what is listed too large (the copy itself counts what it reads)."""
        if size > MAX_MEMBER_BYTES or self.bytes + size > MAX_TOTAL_BYTES:
            self.refuse(name)

    def allowance(self) -> int:
        """The most the next file may add: a file may grow after it was listed."""
        return min(MAX_MEMBER_BYTES, MAX_TOTAL_BYTES - self.bytes)

    def copied(self, name: str, size: int) -> None:
        self.bytes += size
        if self.bytes > MAX_TOTAL_BYTES:
            self.refuse(name)

    def refuse(self, name: str) -> None:
        raise SnapshotError(f"{name!r}: over the size limits ({MAX_MEMBER_BYTES} per "
                            f"file, {MAX_TOTAL_BYTES} in all)")


def _copy_directory(directory: int, relative: str, root: str,
                    place: Callable[[str], str | None], budget: _Budget) -> list[tuple[int, str]]:
    """Copy one directory's entries; return its subdirectories, opened, to walk next."""
    subdirectories: list[tuple[int, str]] = []
    try:
        for name in sorted(os.listdir(directory)):
            budget.entry()
            child = posixpath.join(relative, name) if relative else name
            path = place(child)
            if path is None:
                continue  # a skipped directory is not walked
            try:
                listed = os.lstat(name, dir_fd=directory)
            except FileNotFoundError:
                continue
            make_directories(root, posixpath.dirname(path))
            if stat.S_ISLNK(listed.st_mode):
                add_link(root, path, os.readlink(name, dir_fd=directory))
            elif stat.S_ISDIR(listed.st_mode):
                if child.count("/") + 1 > MAX_DEPTH:
                    raise SnapshotError(f"{child!r}: nested more than {MAX_DEPTH} deep")
                opened = _open_same(name, directory, listed, _DIRECTORY_FLAGS)
                if opened is not None:
                    make_directories(root, path)
                    subdirectories.append((opened, child))
            elif stat.S_ISREG(listed.st_mode):
                budget.size(child, listed.st_size)
                budget.copied(child, _copy_file(name, directory, listed, root, path,
                                                budget.allowance()))
    except BaseException:
        for opened, _ in subdirectories:
            os.close(opened)
        raise
    return subdirectories


def _open_same(name: str, directory: int, listed: os.stat_result, flags: int) -> int | None:
    """A descriptor for ``name`` if it is still the object that was listed, else None."""
    try:
        descriptor = os.open(name, flags, dir_fd=directory)
    except (PermissionError, FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:  # ELOOP: it became a link
        if exc.errno == errno.ELOOP:
            return None
        raise
    opened = os.fstat(descriptor)
    if (opened.st_dev, opened.st_ino) != (listed.st_dev, listed.st_ino) \
            or stat.S_IFMT(opened.st_mode) != stat.S_IFMT(listed.st_mode):
        os.close(descriptor)
        return None
    return descriptor


def _copy_file(name: str, directory: int, listed: os.stat_result, root: str, path: str,
               allowance: int) -> int:
    """Copy at most ``allowance`` bytes (a file that grows past it is refused); the bytes
    copied, which are what the budget counts."""
    descriptor = _open_same(name, directory, listed, _FILE_FLAGS)
    if descriptor is None:
        return 0  # unreadable, gone or replaced: a missing file, as a scan would see it
    target = os.path.join(root, path.lstrip("/"))
    copied = 0
    with os.fdopen(descriptor, "rb") as source, open(target, "xb") as output:
        while copied <= allowance:
            block = source.read(min(allowance + 1 - copied, 1 << 20))
            if not block:
                break
            output.write(block)
            copied += len(block)
        if copied > allowance:
            raise SnapshotError(f"{path!r}: grew over the size limits while copied "
                                f"({MAX_MEMBER_BYTES} per file, {MAX_TOTAL_BYTES} in all)")
    # Only the owner's execute bit is kept (scripts run at boot or not).
    os.chmod(target, 0o755 if listed.st_mode & stat.S_IXUSR else 0o644)
    return copied
