"""Where the SAS directories live: the mount holding each (the longest mount-point prefix),
the block devices below it, an NFS mount's bdi, a Veritas VxVM volume's array LUNs; and the
configured directories that cannot be placed, with the reason."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ...rules.host_layout import BDI_CLASS, MOUNTINFO
from ..parsers.mounts import MountEntry
from ..parsers.simple import ascii_int
from ..sources.hostroot import FactError, HostRoot
from ..unavailable import Unavailable
from .blockdev import BlockGraph, StackLayer, device_for_mount, read_queue
from .sasdirs import SasDir


@dataclass(frozen=True)
class BdiReadAhead:
    """A network file system's read-ahead: /sys/class/bdi/<major:minor>/read_ahead_kb."""
    path: str
    value: int | Unavailable


@dataclass
class SasFilesystem:
    mount: MountEntry
    dirs: list[SasDir]
    device: str | Unavailable
    stack: list[StackLayer]
    bdi: BdiReadAhead | None = None  # NFS: what its read-ahead is
    veritas: bool = False  # a VxVM volume: its stack is the array's LUNs (array_vendors)

    @property
    def roles(self) -> set[str]:
        return {d.role for d in self.dirs}


def _mount_for(path: str, mounts: list[MountEntry]) -> MountEntry | None:
    """The mount holding ``path``: longest mount-point prefix; the last such mount wins."""
    best: MountEntry | None = None
    for entry in mounts:
        point = entry.mountpoint.rstrip("/") or "/"
        if (path == point or point == "/" or path.startswith(point + "/")) and (
                best is None or len(point) >= len(best.mountpoint.rstrip("/") or "/")):
            best = entry
    return best


def _missing_dir(root: HostRoot, sas_dir: SasDir) -> str:
    """Why a configured SAS directory cannot be placed on a file system: it does not exist
    (a typo such as /sasdta would otherwise be judged as the root file system), is not a
    directory, or cannot be searched. Told only for a whole system: a snapshot or sosreport
    keeps no SAS directories."""
    if not root.whole_system:
        return ""
    try:
        present = root.probe(sas_dir.path)
    except FactError as exc:
        return str(exc)
    if present and root.is_dir(sas_dir.path):
        return ""
    what = "is not a directory" if present else "does not exist"
    return (f"{sas_dir.role} directory {sas_dir.path} ({sas_dir.source}) {what} on this host: "
            "no file system is judged for it (check the name)")


def place_sas_dirs(root: HostRoot, dirs: list[SasDir], mounts: list[MountEntry],
                   graph: BlockGraph, numbers: dict[str, str] | None = None
                   ) -> tuple[list[SasFilesystem], list[tuple[SasDir, str]]]:
    by_mount: dict[tuple[str, int], SasFilesystem] = {}
    unplaced: list[tuple[SasDir, str]] = []
    for sas_dir in dirs:
        try:
            resolved = root.resolve(sas_dir.path)
        except FactError as exc:
            unplaced.append((sas_dir, str(exc)))
            continue
        missing = _missing_dir(root, sas_dir)
        if missing:
            unplaced.append((sas_dir, missing))
            continue
        mount = _mount_for(posixpath.normpath(resolved), mounts)
        if mount is None:
            unplaced.append((sas_dir, f"{sas_dir.path}: no mount holds it"))
            continue
        key = (mount.mountpoint, mount.line)
        if key not in by_mount:
            device = device_for_mount(root, graph, mount.device,
                                      (numbers or {}).get(mount.mountpoint))
            stack = graph.stack(device) if isinstance(device, str) else []
            by_mount[key] = SasFilesystem(mount, [], device, stack)
        by_mount[key].dirs.append(sas_dir)
    return list(by_mount.values()), unplaced


def scratch_mounts(root: HostRoot, dirs: list[str], mounts: list[MountEntry]
                   ) -> dict[tuple[str, int], str]:
    """The mounts holding the site's throw-away scratch directories (scratch_dirs), keyed as
    place_sas_dirs keys its file systems, each with the first such directory it holds. One
    that is not a directory on this host (a typo would otherwise lift the rule for the file
    system above it), cannot be resolved, or that no mount holds lifts nothing."""
    held: dict[tuple[str, int], str] = {}
    for path in dirs:
        try:
            resolved = root.resolve(path)
        except FactError:
            continue
        if not root.is_dir(resolved):
            continue
        mount = _mount_for(posixpath.normpath(resolved), mounts)
        if mount is not None:
            held.setdefault((mount.mountpoint, mount.line), path)
    return held


def place_on_array(root: HostRoot, graph: BlockGraph, filesystem: SasFilesystem,
                    vendors: list[str]) -> None:
    """A VxVM volume: its I/O goes to the LUNs of the site's arrays (array_vendors)."""
    luns = []
    for name, device in sorted(graph.devices.items()):
        if device.kind == "disk" and device.vendor is None:
            read_queue(root, device)  # reads the SCSI vendor with the queue
        if device.kind == "disk" and device.vendor in vendors:
            luns.append(name)
    if not luns:
        filesystem.device = Unavailable(
            f"{filesystem.mount.device}: a Veritas VxVM volume, and no SCSI disk of "
            f"{' or '.join(vendors) or 'any array'} (array_vendors) was found below it")
        return
    filesystem.veritas = True
    filesystem.device = luns[0]
    filesystem.stack = [StackLayer(lun, 1, "array LUN below VxVM", None) for lun in luns]


def read_bdi(root: HostRoot, number: str | None) -> BdiReadAhead:
    if number is None:
        return BdiReadAhead(MOUNTINFO, Unavailable(
            f"{MOUNTINFO} does not list the mount: its bdi cannot be found"))
    path = f"{BDI_CLASS}/{number}/read_ahead_kb"
    try:
        value = ascii_int(root.read_text(path, 64).strip())
    except FactError as exc:
        return BdiReadAhead(path, Unavailable(str(exc)))
    return BdiReadAhead(path, value if value is not None else Unavailable(
        f"{path}: not a number"))
