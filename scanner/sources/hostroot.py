"""Read-only access to a system's files under a root directory.

The root is the live system (``/``) or a directory holding another system's
files. Symlinks are resolved *inside* the root, as if chrooted: an absolute
target is re-rooted and ``..`` stops at the root, so a test root or a snapshot
never makes us read the scanning host's files.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import posixpath
import stat
from collections.abc import Mapping
from dataclasses import dataclass

from ...rules.errors import UserInputError

MAX_SYMLINKS = 40
_DIRECTORY_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
DEFAULT_READ_LIMIT = 4 * 1024 * 1024
# What a scan read, listed and could not read, and where a link took it: `scan -v` shows it
# (host text: the command line's handler escapes it for the terminal).
READ_LOG = logging.getLogger("sascheck.host")


class FactError(UserInputError):
    """A file could not be read or understood; the message says why."""


class OutsideTreeError(FactError):
    """A file of an account's tree that leads out of it, or is a second name of another
    file: not read, whether or not what it leads to exists."""


@dataclass(frozen=True)
class AccountTree:
    """A directory tree an account other than root writes (the CAS configuration): a file
    in it is read only where it resolves inside the tree to a file with one hard link.
    Its links are recorded as links (a snapshot names them); a link out of the tree, or a
    hard link the account made to a file it cannot read (possible without
    fs.protected_hardlinks, as on RHEL 6), never makes root read that file."""
    path: str
    name: str


PARTIAL_ROOT_MARKER = ".sascheck-partial-root"  # beside an extracted snapshot's root
# Beside it too: {in-root path: uid} of the files whose owner the collector recorded (an
# archive's copies are the collector's, so owners travel in its manifest).
RECORDED_OWNERS = ".sascheck-owners.json"


def mark_partial_root(root: str, owners: Mapping[str, int] | None = None) -> None:
    """Mark an extracted snapshot or sosreport root (in its private parent directory), with
    the owners its collector recorded."""
    parent = os.path.dirname(os.path.realpath(root))
    with open(os.path.join(parent, PARTIAL_ROOT_MARKER), "w", encoding="utf-8"):
        pass
    with open(os.path.join(parent, RECORDED_OWNERS), "w", encoding="utf-8") as handle:
        json.dump(dict(owners or {}), handle)


class HostRoot:
    """A system's file tree, opened read-only."""

    def __init__(self, root: str | os.PathLike[str] = "/") -> None:
        self.root = os.path.realpath(os.fspath(root))
        if not os.path.isdir(self.root):
            raise FactError(f"root {self.root} is not a directory")
        # A whole system (this host, a mounted image), or the files a snapshot or sosreport
        # kept (their private extraction directory marks it): only in a whole system does a
        # missing directory mean the system lacks it.
        self.whole_system = not os.path.exists(
            os.path.join(os.path.dirname(self.root), PARTIAL_ROOT_MARKER))

    def host_path(self, path: str) -> str:
        """Where ``path`` (absolute, inside the root) lives on this machine, unresolved."""
        relative = posixpath.normpath("/" + path).lstrip("/")
        return os.path.join(self.root, relative) if relative else self.root

    def resolve(self, path: str) -> str:
        """Resolve symlinks in ``path`` within the root; return the in-root path.

        Missing components are kept as they are (like ``realpath``), so the caller
        can still report what it looked for.
        """
        pending = [part for part in path.split("/") if part]
        pending.reverse()
        resolved: list[str] = []
        hops = 0
        while pending:
            part = pending.pop()
            if part == ".":
                continue
            if part == "..":
                if resolved:
                    resolved.pop()
                continue
            candidate = "/" + "/".join([*resolved, part])
            try:
                mode = os.lstat(self.host_path(candidate)).st_mode
            except OSError:
                resolved.append(part)
                continue
            if not stat.S_ISLNK(mode):
                resolved.append(part)
                continue
            hops += 1
            if hops > MAX_SYMLINKS:
                raise FactError(f"{path}: too many levels of symbolic links")
            target = os.readlink(self.host_path(candidate))
            self._note_link(candidate, target)
            if target.startswith("/"):
                resolved = []
            pending.extend(reversed([p for p in target.split("/") if p]))
        return "/" + "/".join(resolved)

    def exists(self, path: str) -> bool:
        try:
            resolved = self.resolve(path)
        except FactError:
            return False
        found = os.path.exists(self.host_path(resolved))
        if found:
            self._note_exists(resolved)
        return found

    def probe(self, path: str) -> bool:
        """Whether ``path`` exists; FactError when that cannot be told (a directory on the
        way that may not be searched, a link loop): unreadable is not the same as missing."""
        resolved = self.resolve(path)
        try:
            os.stat(self.host_path(resolved))
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError as exc:
            self._note_error(path, exc.strerror or "cannot tell")
            raise FactError(f"{path}: cannot tell whether it exists: {exc.strerror}") from None
        self._note_exists(resolved)
        return True

    def is_executable(self, path: str) -> bool:
        """A regular file with its owner's execute bit (what systemd's
        ConditionFileIsExecutable and SysV's rc test before running a script)."""
        try:
            resolved = self.resolve(path)
            mode = os.stat(self.host_path(resolved)).st_mode
        except (FactError, OSError):
            return False
        executable = stat.S_ISREG(mode) and bool(mode & stat.S_IXUSR)
        if executable:
            self._note_executable(resolved)
        return executable

    def owner(self, path: str) -> int:
        """The numeric owner of ``path`` (links resolved in the root); in a snapshot or
        sosreport, as its collector recorded it."""
        resolved = self.resolve(path)
        if not self.whole_system:
            recorded = self._recorded_owners().get(resolved)
            if recorded is None:
                raise FactError(f"{path}: its owner was not recorded by the collector")
            return recorded
        try:
            uid = os.stat(self.host_path(resolved)).st_uid
        except OSError as exc:
            raise FactError(f"{path}: cannot tell its owner: {exc.strerror}") from None
        self._note_owner(resolved, uid)
        return uid

    def _recorded_owners(self) -> dict[str, int]:
        try:
            with open(os.path.join(os.path.dirname(self.root), RECORDED_OWNERS),
                      encoding="utf-8") as handle:
                owners = json.load(handle)
        except (OSError, ValueError):
            return {}
        return owners if isinstance(owners, dict) else {}

    def _note_owner(self, path: str, uid: int) -> None:
        """A hook for a recording root."""

    def is_dir(self, path: str) -> bool:
        try:
            resolved = self.resolve(path)
        except FactError:
            return False
        found = os.path.isdir(self.host_path(resolved))
        if found:
            self._note_exists(resolved)
        return found

    def is_symlink(self, path: str) -> bool:
        """Whether the last component is a link; the ones before it are resolved inside the
        root like every other path (a root's etc/systemd -> /outside stays inside)."""
        parent, name = posixpath.split(posixpath.normpath("/" + path))
        if not name:
            return False
        try:
            resolved = posixpath.join(self.resolve(parent), name)
        except FactError:
            return False
        return os.path.islink(self.host_path(resolved))

    def listdir(self, path: str) -> list[str]:
        """Sorted entries of a directory; [] when it is missing."""
        resolved = self.resolve(path)
        try:
            entries = sorted(os.listdir(self.host_path(resolved)))
        except (FileNotFoundError, NotADirectoryError):
            READ_LOG.debug("listed %s: missing", path)
            return []
        except OSError as exc:
            self._note_error(path, exc.strerror or "cannot list")
            READ_LOG.debug("listed %s: %s", path, exc.strerror)
            raise FactError(f"{path}: cannot list: {exc.strerror}") from exc
        self._note_dir(resolved, entries)
        READ_LOG.debug("listed %s%s: %d entries", path, _at(path, resolved), len(entries))
        return entries

    def read_bytes(self, path: str, limit: int = DEFAULT_READ_LIMIT,
                   tree: AccountTree | None = None) -> bytes:
        try:
            data, resolved = self._read_bytes(path, limit, tree)
        except FactError as exc:
            self._note_error(path, str(exc))
            READ_LOG.debug("not read: %s", exc)
            raise
        self._note_file(resolved, data)
        READ_LOG.debug("read %s%s: %d bytes", path, _at(path, resolved), len(data))
        return data

    def _read_bytes(self, path: str, limit: int,
                    tree: AccountTree | None = None) -> tuple[bytes, str]:
        resolved = self.resolve(path)
        if tree is not None:
            inside = self.resolve(tree.path).rstrip("/")
            if resolved != inside and not resolved.startswith(inside + "/"):
                raise OutsideTreeError(f"{path}: a link out of {tree.name} ({tree.path}) to "
                                       f"{resolved}; kept as a link, not read")
        try:
            fd = self.open_resolved(resolved)
        except FileNotFoundError:
            raise FactError(f"{path}: missing") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR
                                            and self._link_on_the_way(resolved)):
                raise FactError(f"{path}: a link where none was (changed while read)") from None
            raise FactError(f"{path}: cannot read: {exc.strerror}") from None
        try:
            status = os.fstat(fd)  # the file opened, not a name that may change meanwhile
            if not stat.S_ISREG(status.st_mode):
                raise FactError(f"{path}: not a regular file")
            if tree is not None and status.st_nlink > 1:
                raise OutsideTreeError(f"{path}: a file with {status.st_nlink} hard links in "
                                       f"{tree.name}; not read")
            with os.fdopen(fd, "rb", closefd=False) as handle:
                data = handle.read(limit + 1)
        except OSError as exc:
            raise FactError(f"{path}: cannot read: {exc.strerror}") from None
        finally:
            os.close(fd)
        if len(data) > limit:
            raise FactError(f"{path}: larger than {limit} bytes")
        return data, resolved

    def _link_on_the_way(self, resolved: str) -> bool:
        parts = [part for part in resolved.split("/") if part]
        return any(os.path.islink(self.host_path("/".join(parts[:end])))
                   for end in range(1, len(parts) + 1))

    def open_resolved(self, resolved: str) -> int:
        """A read-only descriptor of the resolved in-root path, opened one directory at a
        time below the root, none of them through a link (O_NOFOLLOW on each): a component
        swapped for a link after ``resolve`` (a race by whoever owns the directory) fails
        with ELOOP or ENOTDIR instead of reaching a file outside. O_NONBLOCK: a FIFO planted
        in a hostile root must not hang the scan."""
        parts = [part for part in resolved.split("/") if part]
        # O_PATH: a directory is passed through as open(2) would (search permission alone),
        # so a scan without root reads what it could read before.
        directory = os.open(self.root, _DIRECTORY_FLAGS & ~os.O_NOFOLLOW)
        try:
            for part in parts[:-1]:
                below = os.open(part, _DIRECTORY_FLAGS, dir_fd=directory)
                os.close(directory)
                directory = below
            if not parts:
                return os.dup(directory)
            return os.open(parts[-1], os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW,
                           dir_fd=directory)
        finally:
            os.close(directory)

    def read_text(self, path: str, limit: int = DEFAULT_READ_LIMIT,
                  allow_nul: bool = False, tree: AccountTree | None = None) -> str:
        """The file's text. Binary content is an error, not garbage passed on, unless
        the caller's parser judges it line by line (``allow_nul``)."""
        data = self.read_bytes(path, limit, tree)
        if b"\0" in data and not allow_nul:
            raise FactError(f"{path}: binary content")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return data.decode("latin-1")

    def read_optional(self, path: str, limit: int = DEFAULT_READ_LIMIT,
                      tree: AccountTree | None = None) -> str | None:
        """The file's text, or None when it does not exist (other problems raise: a
        directory on the way that may not be searched is not a missing file). With ``tree``,
        read as an account's file (AccountTree)."""
        try:
            return self.read_text(path, limit, tree=tree)
        except OutsideTreeError:
            raise  # said whether or not its target exists (a snapshot holds only the link)
        except FactError:
            if self._missing(self.resolve(path)):
                return None
            raise

    def _missing(self, resolved: str) -> bool:
        """The path is not there (ENOENT, ENOTDIR); False where lstat fails otherwise."""
        try:
            os.lstat(self.host_path(resolved))
        except (FileNotFoundError, NotADirectoryError):
            return True
        except OSError:
            return False
        return False

    def read_first_line(self, path: str) -> str:
        text = self.read_text(path, 64 * 1024)
        return text.splitlines()[0].strip() if text.strip() else ""

    def entry_names(self, directory: str, suffix: str = "") -> list[str]:
        """Names of the entries of ``directory`` ending with ``suffix``, where only the names
        count (libvirt guests): a recording root keeps them as empty files, never their
        content."""
        names = [name for name in self.listdir(directory) if name.endswith(suffix)]
        if names:
            resolved = self.resolve(directory)
            for name in names:
                self._note_name(posixpath.join(resolved, name))
        return names

    def glob_files(self, directory: str, suffix: str = "") -> list[str]:
        """In-root paths of the entries of ``directory`` ending with ``suffix``."""
        return [posixpath.join(directory, name) for name in self.listdir(directory)
                if name.endswith(suffix)]

    # Hooks for a recording root (sascheck collect): what was read, listed, followed.
    def _note_link(self, path: str, target: str) -> None:
        pass

    def _note_file(self, path: str, data: bytes) -> None:
        pass

    def _note_exists(self, path: str) -> None:
        pass

    def _note_name(self, path: str) -> None:
        pass

    def _note_executable(self, path: str) -> None:
        pass

    def _note_dir(self, path: str, entries: list[str]) -> None:
        pass

    def _note_error(self, path: str, reason: str) -> None:
        pass


def _at(path: str, resolved: str) -> str:
    """Where links took a path, for the read log."""
    return f" (at {resolved})" if resolved != path else ""
