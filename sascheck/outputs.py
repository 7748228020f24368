"""Where the command line writes: files replaced atomically, devices and pipes in place.

An atomic write renames a temporary file over the target. That is right for a regular file
(a reader never sees half of it) and wrong for anything else: run as root,
``--json /dev/null`` would replace the null device with a regular file. So:

- a path that does not exist yet, or a regular file: a temporary file made with O_EXCL in the
  same directory, given its mode on the descriptor, then renamed over it;
- ``/dev/null`` and the links to this process's own descriptors (``/dev/stdout``,
  ``/dev/fd/N``: the caller's shell redirection) are written in place, opened without
  blocking (a FIFO with no reader is an error, never a hang);
- anything else is refused: a directory, a device, a FIFO or socket, a symbolic link (a link
  planted at the report's name would make root write the block device or file it points to).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO, Any

from .rules.errors import UserInputError

# A host's file names need not be UTF-8 (Python carries such bytes as lone surrogates): they
# are written as backslash escapes, which in JSON text is the escape of that same character,
# rather than failing the whole output.
TEXT_ERRORS = "backslashreplace"

STDOUT = "-"
DEV_NULL = "/dev/null"
# Links the system itself provides for a process's own descriptors (nothing may follow the
# number: /dev/fd/../../etc/passwd resolves to a file).
_DESCRIPTOR_LINK = re.compile(r"/dev/std(?:out|err)|/(?:dev|proc/self)/fd/[0-9]{1,6}")


class OutputError(UserInputError):
    """An output that must not be written, with the reason."""


def _in_place(path: str) -> bool:
    """True for /dev/null and this process's descriptor links, False for a regular file or
    a new name; OutputError for what must not be written at all."""
    if path == DEV_NULL or _DESCRIPTOR_LINK.fullmatch(path):
        return True
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}") from exc
    if stat.S_ISREG(link.st_mode):
        return False
    if stat.S_ISDIR(link.st_mode):
        raise OutputError(f"cannot write {path}: it is a directory")
    if stat.S_ISLNK(link.st_mode):
        raise OutputError(f"cannot write {path}: it is a symbolic link to "
                          f"{os.path.realpath(path)}; name the file itself")
    raise OutputError(f"cannot write {path}: not a regular file (a device, FIFO or socket); "
                      f"only {DEV_NULL} and '-' are written in place")


def _open_in_place(path: str, binary: bool) -> IO[Any]:
    """Open without blocking (a FIFO nobody reads fails at once), then write normally."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}") from exc
    os.set_blocking(fd, True)
    if path == DEV_NULL and not stat.S_ISCHR(os.fstat(fd).st_mode):
        os.close(fd)
        raise OutputError(f"cannot write {path}: not the null device")
    return os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8",
                     errors=None if binary else TEXT_ERRORS)


@contextlib.contextmanager
def opened_output(path: str, binary: bool = False, mode: int | None = None
                  ) -> Iterator[IO[Any]]:
    """A handle that becomes ``path`` when the block ends without an error; a new file gets
    ``mode`` (default: 0666 less the umask) before it takes the name."""
    if path == STDOUT:
        if not binary and isinstance(sys.stdout, io.TextIOWrapper):
            sys.stdout.reconfigure(errors=TEXT_ERRORS)
        stream = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    file_mode = "wb" if binary else "w"
    encoding = None if binary else "utf-8"
    if _in_place(path):
        with _open_in_place(path, binary) as handle:
            yield handle
        return
    directory = os.path.dirname(path) or "."
    name = os.path.basename(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=directory)  # O_EXCL, 0600
    try:
        if mode is None:
            umask = os.umask(0)  # a report is meant to be shared: honour the umask, not 0600
            os.umask(umask)
            mode = 0o666 & ~umask
        os.fchmod(fd, mode)  # on the descriptor: nothing renamed in can be chmod'ed by name
        with os.fdopen(fd, file_mode, encoding=encoding,
                       errors=None if binary else TEXT_ERRORS) as handle:
            yield handle
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def write_output(path: str, text: str | Iterable[str], mode: int | None = None) -> None:
    """Write ``text`` (or its pieces, in order) to ``path`` as described above; '-' is
    standard output."""
    try:
        with opened_output(path, mode=mode) as handle:
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


def console_options() -> dict[str, Any]:
    """What every terminal table is printed with: no escape sequences at all where NO_COLOR
    is set (no-color.org; rich alone would still send bold and dim), colour only where rich
    finds a terminal."""
    return {"color_system": None} if os.environ.get("NO_COLOR") else {}
