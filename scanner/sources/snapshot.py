"""Snapshots: the files a scan reads, in one archive, and their safe extraction.

``sascheck collect`` writes one (snapshot_write.py). ``--snapshot`` takes such an archive
wherever ``--root`` is taken; extraction refuses anything that could escape the extraction
directory or exhaust the disk.
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

from ...rules.errors import UserInputError
from .hostroot import mark_partial_root
from .tree_remove import remove_tree

ROOT_PREFIX = "root"
MANIFEST = "manifest.json"
SNAPSHOT_SCHEMA = "sascheck-snapshot/1"
MAX_MEMBERS = 200_000
MAX_TOTAL_BYTES = 1 << 30
MAX_MEMBER_BYTES = 64 << 20
# Every member's declared size, extracted or skipped: a compressed archive is decompressed
# to reach the next member, so a skipped 40 GB member costs as much as an extracted one.
MAX_ARCHIVE_BYTES = 4 << 30
# A snapshot or sosreport nests about 12 deep; a deeper member is refused, so that neither
# its extraction (every member's directories are checked) nor its removal grows with depth.
MAX_DEPTH = 64
# Site values given to the collection (collect --set, collect.sh --set), kept in the
# manifest so that the scan elsewhere judges the host as its administrator described it.
MAX_SETS, MAX_SET_CHARS = 64, 4096
ENVIRON = "/proc/1/environ"


class SnapshotError(UserInputError):
    """An archive that cannot be used, with the reason; nothing is left behind."""


def _inside(name: str) -> str:
    """The in-root path of a member name, or a SnapshotError."""
    if name.startswith("/"):
        raise SnapshotError(f"member {name!r}: absolute name")
    parts = name.split("/")
    if ".." in parts:
        raise SnapshotError(f"member {name!r}: climbs out with '..'")
    if parts[0] != ROOT_PREFIX:
        raise SnapshotError(f"member {name!r}: outside {ROOT_PREFIX}/")
    return "/" + "/".join(p for p in parts[1:] if p not in ("", "."))


def _safe_link(path: str, target: str) -> str:
    """A link target that stays inside the root: absolute ones become relative."""
    if target.startswith("/"):
        target = posixpath.relpath(posixpath.normpath(target), posixpath.dirname(path) or "/")
    # Relative to the root, so that '..' past the top is seen rather than clamped.
    landing = posixpath.normpath(posixpath.join(posixpath.dirname(path).lstrip("/"), target))
    if landing == ".." or landing.startswith("../"):
        raise SnapshotError(f"link {path!r} -> {target!r} points outside the snapshot")
    return target


def extract(archive_path: str, destination: str) -> dict[str, Any]:
    """Extract into ``destination``/root; on any problem remove everything and raise."""
    manifest: dict[str, Any] = {}

    def place(archive: tarfile.TarFile, member: tarfile.TarInfo) -> str | None:
        if member.name == MANIFEST and member.isfile():
            manifest.update(_read_manifest(archive, member))
            return None
        return _inside(member.name.rstrip("/"))

    extract_members(archive_path, os.path.join(destination, ROOT_PREFIX), place)
    if manifest.get("schema") != SNAPSHOT_SCHEMA:
        remove_tree(destination)
        raise SnapshotError(f"{archive_path}: no {SNAPSHOT_SCHEMA} manifest")
    return manifest


def _read_manifest(archive: tarfile.TarFile, member: tarfile.TarInfo) -> dict[str, Any]:
    if member.size > 1 << 20:
        raise SnapshotError("manifest larger than 1 MiB")
    handle = archive.extractfile(member)
    try:
        manifest = json.loads(handle.read()) if handle else {}
    except ValueError as exc:
        raise SnapshotError(f"manifest is not JSON ({exc})") from exc
    except RecursionError:
        raise SnapshotError("manifest is nested too deeply") from None
    if not isinstance(manifest, dict):
        raise SnapshotError("manifest is not a JSON object")
    return manifest


Placement = Callable[[tarfile.TarFile, tarfile.TarInfo], "str | None"]


def extract_members(archive_path: str, root: str, place: Placement) -> None:
    """Extract the members ``place`` maps to an in-root path (None: skip it) into ``root``,
    within the limits; on any problem remove ``root``'s parent and raise SnapshotError."""
    destination = os.path.dirname(root)
    try:
        try:
            archive = tarfile.open(archive_path, "r:*")  # noqa: SIM115 - closed by the with below
        except (OSError, tarfile.TarError) as exc:
            raise SnapshotError(f"{archive_path}: not a readable tar archive ({exc})") from exc
        with archive:
            total = count = declared = 0
            made: set[str] = set()  # directories this extraction made or checked
            os.makedirs(root)
            for member in archive:
                count += 1
                if count > MAX_MEMBERS:
                    raise SnapshotError(f"more than {MAX_MEMBERS} members")
                declared += max(member.size, 0)
                if declared > MAX_ARCHIVE_BYTES:
                    raise SnapshotError(
                        f"member {member.name!r}: the members declare more than "
                        f"{MAX_ARCHIVE_BYTES >> 30} GiB in all; unpack the archive and give "
                        "sascheck the directory, whose unneeded files are never read")
                path = place(archive, member)
                if path is None or path == "/":
                    continue
                if path.count("/") > MAX_DEPTH + 1:
                    raise SnapshotError(f"member {member.name[:200]!r}: nested more than "
                                        f"{MAX_DEPTH} deep")
                make_directories(root, posixpath.dirname(path), made)
                if member.isdir():
                    make_directories(root, path, made)
                elif member.isreg():
                    total += member.size
                    _check_size(member.name, member.size, total)
                    source = archive.extractfile(member)
                    _write_file(root, path, source, bool(member.mode & stat.S_IXUSR))
                elif member.issym():
                    add_link(root, path, member.linkname)
                else:
                    kind = "hard link" if member.islnk() else "device or FIFO"
                    raise SnapshotError(f"member {member.name!r}: a {kind}, refused")
    except (SnapshotError, OSError, tarfile.TarError, EOFError) as exc:
        remove_tree(destination)
        if isinstance(exc, SnapshotError):
            raise
        raise SnapshotError(f"{archive_path}: {exc}") from exc


def _check_size(name: str, size: int, total: int) -> None:
    if size > MAX_MEMBER_BYTES or total > MAX_TOTAL_BYTES:
        raise SnapshotError(f"member {name!r}: over the size limits ({MAX_MEMBER_BYTES} per "
                            f"file, {MAX_TOTAL_BYTES} in all)")


def _write_file(root: str, path: str, source: IO[bytes] | None, executable: bool) -> None:
    target = os.path.join(root, path.lstrip("/"))
    with open(target, "xb") as output:
        if source:
            shutil.copyfileobj(source, output)
    # Only the owner's execute bit is kept (scripts run at boot or not).
    os.chmod(target, 0o755 if executable else 0o644)


def add_link(root: str, path: str, target: str) -> None:
    """A link at in-root ``path``; an absolute or escaping target is made safe or refused."""
    os.symlink(_safe_link(path, target), os.path.join(root, path.lstrip("/")))


def make_directories(root: str, path: str, made: set[str] | None = None) -> None:
    """Make the in-root directory ``path`` one component at a time, refusing to pass
    through any link: an earlier member's link, however it resolves (``a/b/c/y -> ../../..``
    then ``w -> a/b/c/y/../../..`` looks inside but lands outside), is never followed
    while extracting. Links are for the scan, which resolves them inside the root.
    ``made``: directories already made or checked by this extraction, which never removes
    or replaces one, so they are not checked again (each member costs its new components)."""
    current = root
    for part in [p for p in path.split("/") if p]:
        current = os.path.join(current, part)
        if made is not None:
            if current in made:
                continue
            made.add(current)
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            os.mkdir(current, 0o755)
            continue
        if stat.S_ISLNK(mode):
            raise SnapshotError(f"member under {path!r}: would be written through a link")
        if not stat.S_ISDIR(mode):
            raise SnapshotError(f"member under {path!r}: {part!r} is not a directory")


@dataclass
class OpenedSnapshot:
    path: str  # the archive, as named
    root: str  # its extracted root, removed when the context ends
    sets: list[str] = field(default_factory=list)
    collected_at: str = ""
    collector: str = ""

    def named(self, data: dict[str, Any]) -> dict[str, Any]:
        """Results that name the archive scanned (not its removed temporary root) and the
        site values its collection carried."""
        data["host"]["root"] = self.path
        notes = [f"collected {self.collected_at or 'at an unknown time'} by "
                 f"{self.collector or 'an unknown collector'}"]
        if self.sets:
            notes.append("site values given to the collection: " + ", ".join(self.sets))
        data["source"] = {"kind": "snapshot", "path": self.path, "notes": notes}
        return data


def manifest_sets(manifest: Mapping[str, Any], archive_path: str) -> list[str]:
    """The manifest's NAME=VALUE site values, checked for shape (the scan checks names and
    values as it does for --set); an archive from before they were kept has none."""
    sets = manifest.get("sets", [])
    if not isinstance(sets, list) or len(sets) > MAX_SETS or not all(
            isinstance(item, str) and "=" in item and len(item) <= MAX_SET_CHARS
            for item in sets):
        raise SnapshotError(f"{archive_path}: the manifest's 'sets' is not a list of at most "
                            f"{MAX_SETS} NAME=VALUE strings")
    return list(sets)


MAX_OWNERS = 4096


def manifest_owners(manifest: Mapping[str, Any]) -> dict[str, int]:
    """The files' owners the collector recorded ({"path", "uid"} items), those well formed:
    an absolute path of at most 4096 characters, a uid from 0 to 2**32 - 2."""
    owners: dict[str, int] = {}
    items = manifest.get("owners")
    for item in (items if isinstance(items, list) else [])[:MAX_OWNERS]:
        if not isinstance(item, dict):
            continue
        path, uid = item.get("path"), item.get("uid")
        if (isinstance(path, str) and path.startswith("/") and len(path) <= 4096
                and "\0" not in path and isinstance(uid, int) and not isinstance(uid, bool)
                and 0 <= uid < 2**32 - 1):
            owners[posixpath.normpath(path)] = uid
    return owners


def _manifest_text(manifest: Mapping[str, Any], key: str) -> str:
    value = manifest.get(key, "")
    return value[:128] if isinstance(value, str) else ""


def _collector(stamp: str) -> str:
    """Who wrote the archive: collect.sh says so, sascheck collect writes its version."""
    return stamp if stamp in ("", "collect.sh") else f"sascheck collect {stamp}"


@contextmanager
def opened_snapshot(archive_path: str, scratch: str | None = None
                    ) -> Iterator[OpenedSnapshot]:
    """An extracted snapshot with what its manifest says, removed afterwards; extracted in
    ``scratch`` (default: the temporary directory)."""
    destination = tempfile.mkdtemp(prefix="sascheck-snapshot-", dir=scratch)
    try:
        manifest = extract(archive_path, destination)
        sets = manifest_sets(manifest, archive_path)
        mark_partial_root(os.path.join(destination, ROOT_PREFIX), manifest_owners(manifest))
        yield OpenedSnapshot(archive_path, os.path.join(destination, ROOT_PREFIX), sets,
                             _manifest_text(manifest, "collected_at"),
                             _collector(_manifest_text(manifest, "sascheck")))
    finally:
        remove_tree(destination)


@contextmanager
def opened(archive_path: str) -> Iterator[str]:
    """The root directory of an extracted snapshot, removed afterwards."""
    with opened_snapshot(archive_path) as snapshot:
        yield snapshot.root
