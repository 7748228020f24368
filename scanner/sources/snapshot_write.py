"""Writing a snapshot: ``sascheck collect`` runs the fact collector on a recording root and
archives exactly what it read, listed and followed (symlinks kept as links, /sys's relative
ones relative), plus a manifest (snapshot.py reads it back)."""

from __future__ import annotations

import io
import json
import os
import posixpath
import stat
import tarfile
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

from ... import __version__
from ..facts import collect
from ..storage.blockdev import read_queue
from .hostroot import HostRoot
from .snapshot import ENVIRON, MANIFEST, ROOT_PREFIX, SNAPSHOT_SCHEMA


class RecordingRoot(HostRoot):
    """A HostRoot that remembers what the collector touched."""

    def __init__(self, root: str = "/") -> None:
        super().__init__(root)
        self.links: dict[str, str] = {}
        self.files: dict[str, bytes] = {}
        self.dirs: set[str] = set()
        self.existing: set[str] = set()
        self.executables: set[str] = set()  # init scripts: whether they run at boot
        self.errors: dict[str, str] = {}
        self.owners: dict[str, int] = {}  # files whose owner a check read

    def _note_link(self, path: str, target: str) -> None:
        self.links[path] = target

    def _note_file(self, path: str, data: bytes) -> None:
        if path == ENVIRON:  # init's environment may hold secrets: keep container= only
            data = b"\0".join(v for v in data.split(b"\0") if v.startswith(b"container="))
        self.files[path] = data

    def _note_exists(self, path: str) -> None:
        self.existing.add(path)

    def _note_executable(self, path: str) -> None:
        self.executables.add(path)

    def _note_name(self, path: str) -> None:
        if path not in self.links:  # listdir recorded links (SysV start links) already
            self.files.setdefault(path, b"")

    def _note_dir(self, path: str, entries: list[str]) -> None:
        self.dirs.add(path)
        # Entries that are links matter by name (slaves/, /sys/block), and so do those that
        # are directories (a queue's mq/<n>/ counts hardware queues).
        for name in entries:
            entry = posixpath.join(path, name)
            if os.path.islink(self.host_path(entry)):
                self.links[entry] = os.readlink(self.host_path(entry))
            elif os.path.isdir(self.host_path(entry)):
                self.dirs.add(entry)

    def _note_owner(self, path: str, uid: int) -> None:
        self.owners[path] = uid

    def _note_error(self, path: str, reason: str) -> None:
        if not reason.endswith(": missing"):
            self.errors[path] = reason


def record(root: str, values: Mapping[str, Any], origins: Mapping[str, str],
           sysctl_keys: list[str]) -> RecordingRoot:
    """Collect every fact, and the queue of every block device, on a recording root."""
    recorder = RecordingRoot(root)
    facts = collect(recorder, values, origins, "auto", sysctl_keys)
    for device in facts.block.devices.values():
        read_queue(recorder, device)  # any device may be a SAS device for another scan
    # What the scan only tested for existence is kept as a name (an empty file), never its
    # content: a probe is no licence to copy a file (a SAS account's link to a root-only
    # file, or a probed file swapped for one in a race, would land in the archive).
    for path in sorted(recorder.existing - set(recorder.files)):
        try:
            mode = os.lstat(recorder.host_path(path)).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            recorder.dirs.add(path)
        elif stat.S_ISREG(mode):
            recorder.files[path] = b""
    if isinstance(facts.mounts, list):  # oscap's partition probe stats every mount point
        recorder.dirs.update(m.mountpoint for m in facts.mounts if m.mountpoint.startswith("/"))
    return recorder


def _info(name: str, kind: bytes, mtime: int, size: int = 0, mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.mtime, info.mode = kind, size, mtime, mode
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def write_snapshot(recorder: RecordingRoot, output: IO[bytes], host: Mapping[str, Any],
                   sets: Sequence[str] = ()) -> None:
    """Write the archive to ``output`` (the caller decides where and how it lands)."""
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0") or 0) or int(time.time())
    manifest = {
        "schema": SNAPSHOT_SCHEMA, "sascheck": __version__,
        "collected_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime)),
        "host": dict(host), "sets": list(sets),
        "unreadable": [{"path": p, "reason": r} for p, r in sorted(recorder.errors.items())],
        "owners": [{"path": p, "uid": u} for p, u in sorted(recorder.owners.items())],
        "files": len(recorder.files), "links": len(recorder.links),
    }
    directories: set[str] = set()

    def parents(path: str) -> None:
        parent = posixpath.dirname(path)
        while parent not in ("/", "") and parent not in directories:
            directories.add(parent)
            parent = posixpath.dirname(parent)

    for path in [*recorder.files, *recorder.links, *recorder.dirs]:
        parents(path)
    directories.update(d for d in recorder.dirs if d != "/")
    directories -= set(recorder.links)
    with tarfile.open(fileobj=output, mode="w:gz") as archive:
        data = json.dumps(manifest, indent=2).encode()
        archive.addfile(_info(MANIFEST, tarfile.REGTYPE, mtime, len(data)), io.BytesIO(data))
        archive.addfile(_info(ROOT_PREFIX, tarfile.DIRTYPE, mtime, mode=0o755))
        for path in sorted(directories):
            archive.addfile(_info(ROOT_PREFIX + path, tarfile.DIRTYPE, mtime, mode=0o755))
        for path, content in sorted(recorder.files.items()):
            if path in recorder.links or path in directories:
                continue
            mode = 0o755 if path in recorder.executables else 0o644
            archive.addfile(_info(ROOT_PREFIX + path, tarfile.REGTYPE, mtime, len(content),
                                  mode), io.BytesIO(content))
        for path, target in sorted(recorder.links.items()):
            info = _info(ROOT_PREFIX + path, tarfile.SYMTYPE, mtime, mode=0o777)
            info.linkname = target
            archive.addfile(info)


# -- extraction ----------------------------------------------------------------------------
