"""Removing an extracted tree however deep it is: shutil.rmtree recurses once per level and
raises RecursionError near a thousand, leaving the tree (hundreds of MiB in /dev/shm on
every run). This walk keeps its own stack, never follows a link, and goes on past what it
cannot remove."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable


def remove_tree(path: str) -> None:
    """Remove ``path`` and everything below it; a missing path is no error."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return
    except OSError:
        return
    stack = [(path, False)]
    while stack:
        directory, listed = stack.pop()
        if listed:  # its entries are gone: the directory itself
            _quietly(os.rmdir, directory)
            continue
        stack.append((directory, True))
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                is_directory = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_directory = False
            if is_directory:
                stack.append((entry.path, False))
            else:
                _quietly(os.unlink, entry.path)


def _quietly(action: Callable[[str], None], path: str) -> None:
    with contextlib.suppress(OSError):
        action(path)
