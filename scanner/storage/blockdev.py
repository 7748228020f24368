"""The block-device graph under /sys/block, and the stack below a mounted device.

sysfs layout this reads (relative symlinks, as the kernel makes them)::

    /sys/block/sda -> ../devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda
    /sys/block/sda/sda1/partition                 (a partition is a subdirectory of its disk)
    /sys/block/dm-3/dm/name                       sasvg-saswork
    /sys/block/dm-3/slaves/dm-0 -> ../../dm-0     (LVM on multipath)
    /sys/block/dm-0/dm/uuid                       mpath-3600508b400105e210000900000490000
    /sys/block/sda/queue/scheduler                [mq-deadline] kyber bfq none
    /sys/block/sda/queue/read_ahead_kb            128
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from ...rules.host_layout import LEGACY_DEFAULT_SCHEDULERS, MULTIPATH_UUID_PREFIX, SATA_VENDOR
from ..parsers.selection import Selection, parse_selection
from ..parsers.simple import ascii_int
from ..sources.hostroot import FactError, HostRoot
from ..unavailable import Unavailable


@dataclass
class BlockDevice:
    name: str
    sysfs: str  # in-root path of the device's directory
    kind: str  # disk | partition | dm | md
    parent: str | None = None  # a partition's disk
    dm_name: str | None = None
    dm_uuid: str | None = None
    slaves: tuple[str, ...] = ()
    scheduler: Selection | Unavailable | None = None  # None: no scheduler file
    read_ahead_kb: int | Unavailable | None = None
    wwid: str | None = None  # SCSI world-wide id: a name that survives reboots
    serial: str | None = None  # virtio-blk's serial (udev's ID_SERIAL), where no wwid exists
    vendor: str | None = None  # SCSI vendor; libata reports "ATA" for SATA disks
    model: str | None = None  # SCSI product (multipath's "product")
    hw_queues: int | None = None  # entries of queue's mq/ (blk-mq); None: not present
    # queue/minimum_io_size and optimal_io_size in bytes (None: absent or not a number):
    # dm-stripe and md publish their chunk and chunk x data devices there.
    io_min: int | None = None
    io_opt: int | None = None
    # queue/rotational: 0 for flash (NVMe, SSD, an all-flash array's LUN); None: absent
    rotational: int | None = None
    # ALUA support from the SCSI INQUIRY data (device/inquiry, byte 5 bits 4-5: TPGS), as
    # multipath-tools' get_target_port_group_support reads it; None: not shown
    tpgs: int | None = None
    # The ALUA state of a SCSI path as the kernel's device handler last read it
    # (device/access_state, drivers/scsi/scsi_sysfs.c, Linux 4.11+ and RHEL 7.4+):
    # active/optimized, active/non-optimized, standby, ...; None: not shown
    access_state: str | None = None

    @property
    def label(self) -> str:
        if self.dm_name:
            return f"{self.name} ({self.dm_name})"
        return self.name


@dataclass(frozen=True)
class StackLayer:
    device: str
    depth: int
    relation: str  # mounted | disk of partition | below
    parent: str | None = None  # the device above it in the stack


@dataclass
class BlockGraph:
    devices: dict[str, BlockDevice] = field(default_factory=dict)
    by_dm_name: dict[str, str] = field(default_factory=dict)
    by_dev: dict[str, str] = field(default_factory=dict)  # "major:minor" -> name
    problems: list[str] = field(default_factory=list)

    def stack(self, name: str) -> list[StackLayer]:
        """Every device that carries ``name``'s I/O, top first, each once."""
        # Depth first with an explicit stack (children pushed in reverse, so the order is
        # the recursive one): a doctored image may nest thousands of dm layers.
        layers: list[StackLayer] = []
        seen: set[str] = set()
        pending: list[tuple[str, int, str, str | None]] = [(name, 0, "mounted", None)]
        while pending:
            device_name, depth, relation, above = pending.pop()
            if device_name in seen or device_name not in self.devices:
                continue
            seen.add(device_name)
            layers.append(StackLayer(device_name, depth, relation, above))
            device = self.devices[device_name]
            children = [(slave, "below") for slave in device.slaves]
            if device.parent:
                children.insert(0, (device.parent, "disk of partition"))
            for child, child_relation in reversed(children):
                pending.append((child, depth + 1, child_relation, device_name))
        return layers

    def queue_device(self, name: str) -> str:
        """The device whose request queue serves ``name`` (a partition's disk)."""
        device = self.devices.get(name)
        if device is not None and device.parent:
            return device.parent
        return name


def lvm_dm_name(vg: str, lv: str) -> str:
    """VG-LV with dashes doubled, as device-mapper names LVs."""
    return f"{vg.replace('-', '--')}-{lv.replace('-', '--')}"


def _dm_name_from_lvm_path(path: str) -> str | None:
    """/dev/VG/LV -> its device-mapper name."""
    parts = path.split("/")
    if len(parts) == 4 and parts[1] == "dev" and parts[2] and parts[3]:
        return lvm_dm_name(parts[2], parts[3])
    return None


def read_topology(root: HostRoot) -> BlockGraph:
    """Names, partitions, dm names and slaves of every block device."""
    graph = BlockGraph()
    try:
        names = root.listdir("/sys/block")
    except FactError as exc:
        graph.problems.append(str(exc))
        return graph
    for name in names:
        try:
            sysfs = root.resolve(f"/sys/block/{name}")
        except FactError as exc:
            graph.problems.append(str(exc))
            continue
        if not root.is_dir(sysfs):
            graph.problems.append(f"/sys/block/{name}: not a directory")
            continue
        kind = "dm" if name.startswith("dm-") else "md" if name.startswith("md") else "disk"
        device = BlockDevice(name=name, sysfs=sysfs, kind=kind)
        if kind == "dm":
            device.dm_name = _optional_line(root, f"{sysfs}/dm/name", graph)
            device.dm_uuid = _optional_line(root, f"{sysfs}/dm/uuid", graph)
            if device.dm_name:
                graph.by_dm_name[device.dm_name] = name
        try:
            device.slaves = tuple(root.listdir(f"{sysfs}/slaves"))
            entries = root.listdir(sysfs)
        except FactError as exc:
            graph.problems.append(str(exc))
            entries = []
        graph.devices[name] = device
        _note_dev(root, graph, name, sysfs)
        for entry in entries:
            if entry.startswith(name) and entry != name and root.exists(
                    f"{sysfs}/{entry}/partition"):
                graph.devices[entry] = BlockDevice(name=entry, sysfs=f"{sysfs}/{entry}",
                                                   kind="partition", parent=name)
                _note_dev(root, graph, entry, f"{sysfs}/{entry}")
    return graph


def _note_dev(root: HostRoot, graph: BlockGraph, name: str, sysfs: str) -> None:
    """The device's major:minor (its ``dev`` file), for mounts named by no device node."""
    number = _optional_line(root, f"{sysfs}/dev", graph)
    if number and number not in graph.by_dev:
        graph.by_dev[number] = name


def _optional_line(root: HostRoot, path: str, graph: BlockGraph) -> str | None:
    try:
        text = root.read_optional(path, 4096)
    except FactError as exc:
        graph.problems.append(str(exc))
        return None
    return text.strip() if text and text.strip() else None


def _optional_attribute(root: HostRoot, path: str) -> str | None:
    """A sysfs attribute with its padding stripped (SCSI pads vendor and model with blanks);
    None when absent, empty or unreadable."""
    try:
        value = root.read_optional(path, 4096)
    except FactError:
        return None
    return value.strip() if value and value.strip() else None


def _optional_number(root: HostRoot, path: str) -> int | None:
    text = _optional_attribute(root, path)
    return ascii_int(text) if text is not None else None


def stripe_published(root: HostRoot, graph: BlockGraph) -> bool:
    """Whether any block device's queue publishes an optimal I/O size (a stripe: md, LVM
    striping, a RAID LUN), SAS's or not: read for every device, as the OVAL platform reads
    /sys/block/*/queue/optimal_io_size."""
    return any(_optional_number(root, f"{device.sysfs}/queue/optimal_io_size")
               for device in graph.devices.values() if device.kind != "partition")


def _tpgs(root: HostRoot, path: str) -> int | None:
    """Target port group support (0 none, 1 implicit, 2 explicit, 3 both ALUA modes) from a
    standard INQUIRY response (SPC: byte 5, bits 4-5); None where the kernel shows none."""
    try:
        if not root.exists(path):
            return None
        data = root.read_bytes(path, 4096)
    except FactError:
        return None
    return (data[5] >> 4) & 0x3 if len(data) > 5 else None


def disk_vendors(root: HostRoot, graph: BlockGraph) -> frozenset[str]:
    """The SCSI vendors of every disk (device/vendor), SAS's or not, as the OVAL platform
    reads /sys/block/*/device/vendor."""
    return frozenset(vendor for device in graph.devices.values() if device.kind == "disk"
                     if (vendor := _optional_attribute(root, f"{device.sysfs}/device/vendor")))


# drivers/scsi/scsi_sysfs.c sdev_access_states (scsi_access_state names).
ACCESS_STATES = ("active/optimized", "active/non-optimized", "standby", "unavailable",
                 "lba-dependent", "offline", "transitioning")


def read_queue(root: HostRoot, device: BlockDevice) -> None:
    """Fill in scheduler and read-ahead for one device (partitions have no queue)."""
    if device.kind == "partition":
        return
    if device.kind == "disk":
        try:
            wwid = root.read_optional(f"{device.sysfs}/device/wwid", 4096)
        except FactError:
            wwid = None
        device.wwid = wwid.strip() if wwid and wwid.strip() else None
        try:  # virtio-blk: 60-persistent-storage.rules makes ID_SERIAL of it
            serial = root.read_optional(f"{device.sysfs}/serial", 4096)
        except FactError:
            serial = None
        device.serial = serial.strip() if serial and serial.strip() else None
        device.tpgs = _tpgs(root, f"{device.sysfs}/device/inquiry")
        state = _optional_attribute(root, f"{device.sysfs}/device/access_state")
        device.access_state = state if state in ACCESS_STATES else None
        device.vendor = _optional_attribute(root, f"{device.sysfs}/device/vendor")
        device.model = _optional_attribute(root, f"{device.sysfs}/device/model")
    try:
        queues = [name for name in root.listdir(f"{device.sysfs}/mq") if name.isascii() and name.isdigit()]
    except FactError:
        queues = []
    device.hw_queues = len(queues) or None
    queue = f"{device.sysfs}/queue"
    device.io_min = _optional_number(root, f"{queue}/minimum_io_size")
    device.io_opt = _optional_number(root, f"{queue}/optimal_io_size")
    device.rotational = _optional_number(root, f"{queue}/rotational")
    try:
        text = root.read_optional(f"{queue}/scheduler", 4096)
        device.scheduler = parse_selection(text) if text is not None else None
    except FactError as exc:
        device.scheduler = Unavailable(str(exc))
    except ValueError as exc:
        device.scheduler = Unavailable(f"{queue}/scheduler: {exc}")
    try:
        text = root.read_optional(f"{queue}/read_ahead_kb", 4096)
    except FactError as exc:
        device.read_ahead_kb = Unavailable(str(exc))
    else:
        if text is None:
            device.read_ahead_kb = Unavailable(f"{queue}/read_ahead_kb: missing")
        elif ascii_int(text) is not None:
            device.read_ahead_kb = ascii_int(text)
        else:
            device.read_ahead_kb = Unavailable(
                f"{queue}/read_ahead_kb: not a number: {text.strip()[:40]!r}")


def device_for_mount(root: HostRoot, graph: BlockGraph, source: str,
                     number: str | None = None) -> str | Unavailable:
    """Map a /proc/mounts device field to a block device name: by its name, through the
    root's /dev links, else by the major:minor /proc/self/mountinfo gives the mount."""
    if not source.startswith("/dev/"):
        return Unavailable(f"{source!r} is not a block device")
    found = _device_by_name(root, graph, source)
    if isinstance(found, Unavailable) and number in graph.by_dev:
        return graph.by_dev[number]
    return found


def _device_by_name(root: HostRoot, graph: BlockGraph, source: str) -> str | Unavailable:
    if source.startswith("/dev/mapper/"):
        name = source[len("/dev/mapper/"):]
        if name in graph.by_dm_name:
            return graph.by_dm_name[name]
    base = posixpath.basename(source)
    if base in graph.devices and posixpath.dirname(source) == "/dev":
        return base
    lvm_name = _dm_name_from_lvm_path(source)
    if lvm_name and lvm_name in graph.by_dm_name:
        return graph.by_dm_name[lvm_name]
    # /dev/disk/by-uuid/..., /dev/md/name, /dev/VG/LV as symlinks inside the root.
    try:
        target = root.resolve(source)
    except FactError as exc:
        return Unavailable(str(exc))
    base = posixpath.basename(target)
    if target != source and base in graph.devices:
        return base
    return Unavailable(f"{source}: no matching device under /sys/block")


def default_scheduler(kernel: str, device: BlockDevice) -> tuple[str, str] | None:
    """(scheduler, why) the kernel gives ``device`` when nothing configures one, or None
    when the kernel release is unknown.

    blk-mq (``elevator_get_default``): mq-deadline for a queue with one hardware queue,
    none for several. RHEL 7's 3.10: deadline, but cfq for SATA disks (RHEL 7 Performance
    Tuning Guide, "I/O schedulers"). RHEL 5 and 6: cfq.
    """
    if not kernel:
        return None
    for prefix, scheduler in LEGACY_DEFAULT_SCHEDULERS:
        if kernel.startswith(prefix):
            if scheduler == "deadline" and device.vendor == SATA_VENDOR:
                return "cfq", f"kernel {kernel}: cfq for SATA disks (vendor {SATA_VENDOR})"
            return scheduler, f"kernel {kernel}: default {scheduler}"
    if device.hw_queues and device.hw_queues > 1:
        return "none", f"blk-mq with {device.hw_queues} hardware queues"
    counted = "one hardware queue" if device.hw_queues else "no mq/ directory: one queue assumed"
    return "mq-deadline", f"blk-mq with {counted}"


def multipath_paths(block: BlockGraph) -> dict[str, str]:
    """Path device -> map label, for request-based dm-multipath maps (those with a
    scheduler; a bio-based map, queue_mode bio, leaves scheduling to its paths)."""
    paths: dict[str, str] = {}
    for device in block.devices.values():
        if ((device.dm_uuid or "").startswith(MULTIPATH_UUID_PREFIX) and
                isinstance(device.scheduler, Selection) and device.scheduler.offers_choice):
            paths.update((slave, device.label) for slave in device.slaves)
    return paths
