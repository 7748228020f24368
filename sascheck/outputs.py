"""Where the command line writes: files replaced atomically, devices and pipes in place.

An atomic write renames a temporary file over the target. That is right for a regular file
(a reader never sees half of it) and wrong for anything else: run as root,
``--json /dev/null`` would replace the null device with a regular file. So:

- a path that does not exist yet, or a regular file: a temporary file made with O_EXCL in the
  same directory, then renamed over it;
- a character device, FIFO or socket (``/dev/null``, ``/dev/stdout`` on a pipe): written in
  place, as a shell redirection would;
- a directory, or a symbolic link to anything else (a planted link at the report's name would
  make us replace the file it points to): refused.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO, Any

from .rules.errors import UserInputError

STDOUT = "-"
# Links the system itself provides for a process's own descriptors.
_DESCRIPTOR_LINKS = ("/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/self/fd/")


class OutputError(UserInputError):
    """An output that must not be written, with the reason."""


def _in_place(path: str) -> bool:
    """True for a device, FIFO or socket (or a descriptor link), False for a regular file or
    a new name; OutputError for what must not be written at all."""
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}") from exc
    if stat.S_ISDIR(link.st_mode):
        raise OutputError(f"cannot write {path}: it is a directory")
    if not stat.S_ISLNK(link.st_mode):
        return not stat.S_ISREG(link.st_mode)
    try:
        target = os.stat(path)
    except OSError:
        raise OutputError(f"cannot write {path}: a symbolic link to nothing; name the file "
                          "itself") from None
    if not stat.S_ISREG(target.st_mode) and not stat.S_ISDIR(target.st_mode):
        return True
    if path.startswith(_DESCRIPTOR_LINKS) and stat.S_ISREG(target.st_mode):
        return True  # --json /dev/stdout > file: the shell's redirection, as it asked
    raise OutputError(f"cannot write {path}: it is a symbolic link to "
                      f"{os.path.realpath(path)}; name the file itself")


@contextlib.contextmanager
def opened_output(path: str, binary: bool = False) -> Iterator[IO[Any]]:
    """A handle that becomes ``path`` when the block ends without an error."""
    if path == STDOUT:
        stream = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    mode = "wb" if binary else "w"
    encoding = None if binary else "utf-8"
    if _in_place(path):
        with open(path, mode, encoding=encoding) as handle:
            yield handle
        return
    directory = os.path.dirname(path) or "."
    name = os.path.basename(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=directory)  # O_EXCL, 0600
    try:
        umask = os.umask(0)  # a report is meant to be shared: honour the umask, not 0600
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, mode, encoding=encoding) as handle:
            yield handle
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def write_output(path: str, text: str | Iterable[str]) -> None:
    """Write ``text`` (or its pieces, in order) to ``path`` as described above; '-' is
    standard output."""
    try:
        with opened_output(path) as handle:
            if isinstance(text, str):
                handle.write(text)
            else:
                handle.writelines(text)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc


def check_destinations(outputs: Iterable[str | None], inputs: Iterable[str | None] = ()) -> None:
    """Refuse outputs that would collide: two on standard output, two the same file, or an
    output that is one of the inputs (it would be overwritten before it was read)."""
    wanted = [path for path in outputs if path]
    if wanted.count(STDOUT) > 1:
        raise OutputError("only one output can go to standard output ('-')")
    seen: dict[tuple[int, int] | str, str] = {}
    for path in [p for p in inputs if p and p != STDOUT]:
        seen[_identity(path)] = f"input {path}"
    for path in wanted:
        if path == STDOUT:
            continue
        identity = _identity(path)
        if identity in seen and not _in_place(path):
            raise OutputError(f"output {path} is the same file as the {seen[identity]}")
        seen[identity] = f"output {path}"


def _identity(path: str) -> tuple[int, int] | str:
    """The file a path names (device and inode), or its absolute name if it is new."""
    try:
        status = os.stat(path)
    except OSError:
        return os.path.abspath(path)
    return (status.st_dev, status.st_ino)
