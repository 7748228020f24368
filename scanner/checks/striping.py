"""Striping of the SAS volumes, and the SAS page size against their stripe unit.

Both read the layout the kernel publishes in a volume's queue limits: dm-stripe and md set
minimum_io_size to the stripe unit and optimal_io_size to the unit times the data devices.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ...rules.host_layout import (
    MULTIPATH_UUID_PATTERN,
    QUEUE_IO_MIN,
    QUEUE_IO_OPT,
    SAS_DEFAULT_PAGE_MAX,
    SAS_DEFAULT_PAGE_STEP,
)
from .. import linear_re as re
from ..facts import Facts
from ..results import Evidence, Outcome, Verdict
from ..storage.blockdev import BlockDevice
from ..storage.filesystems import SasFilesystem
from .storage import _device_layers, _filesystems, _outcome, _subject, _unplaced

_MULTIPATH = re.compile(MULTIPATH_UUID_PATTERN)


@dataclass(frozen=True)
class Layout:
    """What the scan can say of one SAS file system's volume."""
    subject: str
    source: str
    device: str = ""
    stripes: int = 0  # data devices the volume stripes over (0: not striped)
    unit: int = 0  # stripe unit in bytes
    luns: int = 0  # distinct devices directly below it
    hardware: bool = False  # the stripe is the LUN's own (a RAID array or controller)
    # Set when the volume cannot be judged: (verdict, what was seen, why).
    skipped: tuple[Verdict, str, str] | None = None

    @property
    def actual(self) -> str:
        if self.stripes and self.hardware:
            return f"the LUN's RAID: {self.stripes} strips of {_size(self.unit)}"
        if self.stripes:
            return f"{self.stripes} stripes of {_size(self.unit)}"
        return f"not striped ({self.luns} device{'s' if self.luns != 1 else ''} below)"


def _size(size: int) -> str:
    return f"{size // 1024} KiB" if size % 1024 == 0 else f"{size} bytes"


# kpartx names a multipath map's partitions part<N>-<the map's uuid> (kpartx/devmapper.c).
_KPARTX_UUID = re.compile(r"^part[0-9]+-(mpath-.+)$")


def _lun_of(facts: Facts, name: str) -> str:
    """The LUN a device below a volume belongs to: a partition counts as its disk, and a
    kpartx partition of a multipath map as the map's LUN."""
    device = facts.block.devices.get(name)
    if device is None:
        return name
    if match := _KPARTX_UUID.match(device.dm_uuid or ""):
        return match.group(1)
    return facts.block.queue_device(name)


def _distinct_below(facts: Facts, device: BlockDevice) -> int:
    """The LUNs a volume sits on (two partitions of one LUN are one LUN)."""
    return len({_lun_of(facts, name) for name in device.slaves})


def _layout(facts: Facts, filesystem: SasFilesystem) -> Iterator[Layout | Evidence]:
    subject = _subject(filesystem)
    if filesystem.bdi is not None:
        yield Layout(subject, "/proc/mounts", skipped=(
            Verdict.NOTAPPLICABLE, filesystem.mount.device,
            "a network file system: its server lays out the storage"))
        return
    if not isinstance(filesystem.device, str):
        yield from _device_layers(facts, filesystem, lambda device: None)
        return
    if filesystem.veritas:
        yield Layout(subject, "vxprint", skipped=(
            Verdict.NOTCHECKED, filesystem.mount.device,
            "a Veritas VxVM volume keeps its layout in VxVM's configuration database: "
            f"vxprint -ht shows its stripe columns and unit ({filesystem.mount.device})"))
        return
    device = facts.block.devices[facts.block.queue_device(filesystem.device)]
    source = f"{device.sysfs}/queue/{QUEUE_IO_OPT}"
    luns = _distinct_below(facts, device)
    label = f"{subject} on {device.label}"
    if device.kind in ("dm", "md") and not _MULTIPATH.match(device.dm_uuid or ""):
        if device.io_min is None or device.io_opt is None:
            yield Layout(label, source, device.name, skipped=(
                Verdict.ERROR, "unreadable",
                f"{device.sysfs}/queue/{QUEUE_IO_MIN} or {QUEUE_IO_OPT}: missing or not a "
                "number"))
            return
        stripes = _ratio(device)
        if 2 <= stripes <= luns:  # dm-stripe or md: the host stripes over its LUNs
            yield Layout(label, source, device.name, stripes, device.io_min or 0, luns)
            return
    # The host does not stripe: the LUN itself may (a RAID array or controller publishes its
    # strip as minimum_io_size and the stripe as optimal_io_size), or be flash.
    below = _luns_below(facts, device)
    if below and all(lun.rotational == 0 for lun in below):
        yield Layout(label, f"{below[0].sysfs}/queue/rotational", device.name, luns=len(below),
                     skipped=(Verdict.NOTAPPLICABLE, "flash",
                              f"{', '.join(lun.label for lun in below)}: flash (rotational 0): "
                              "an NVMe device or an all-flash array spreads I/O itself and "
                              "needs no striping (seed 003: XtremIO has no RAID groups to "
                              "stripe over)"))
        return
    units = {(lun.io_min, _ratio(lun)) for lun in below}
    if below and len(units) == 1 and 2 <= (ratio := _ratio(below[0])) <= MAX_RAID_DATA_DISKS:
        yield Layout(label, f"{below[0].sysfs}/queue/{QUEUE_IO_OPT}", device.name, ratio,
                     below[0].io_min or 0, len(below), hardware=True)
        return
    if facts.role.name == "kvm_guest" and below and all(
            lun.name.startswith("vd") and not lun.io_opt for lun in below):
        yield Layout(label, f"{below[0].sysfs}/queue/{QUEUE_IO_OPT}", device.name,
                     luns=len(below), skipped=(
                         Verdict.NOTCHECKED, "virtio disk",
                         f"{', '.join(lun.label for lun in below)}: a KVM guest's virtio-blk "
                         "disk publishes no optimal I/O size unless QEMU is told one "
                         "(opt_io_size), so the host's striping cannot be seen from the "
                         "guest (seed 000 §6.2: host LVs given to guests): judge it on the "
                         "KVM host"))
        return
    one_lun = bool(_MULTIPATH.match(device.dm_uuid or ""))  # its paths lead to one LUN
    yield Layout(label, source, device.name, luns=1 if one_lun else max(luns, 1))


# A hardware RAID set stripes over its data disks; a larger "stripe" is a transfer-size hint.
MAX_RAID_DATA_DISKS = 64


def _ratio(device: BlockDevice) -> int:
    """optimal_io_size / minimum_io_size where the one is a whole multiple of the other."""
    io_min, io_opt = device.io_min, device.io_opt
    return io_opt // io_min if io_min and io_opt and io_opt % io_min == 0 else 0


def _luns_below(facts: Facts, device: BlockDevice) -> list[BlockDevice]:
    """The LUNs under a volume that the host does not stripe: a disk or multipath map is its
    own; a linear volume's are the distinct LUNs below it."""
    if device.kind == "disk" or _MULTIPATH.match(device.dm_uuid or ""):
        return [device]
    names = dict.fromkeys(_lun_of(facts, name) for name in device.slaves)
    found = [facts.block.devices[name] for name in names if name in facts.block.devices]
    return [lun for lun in found if lun.kind == "disk" or _MULTIPATH.match(lun.dm_uuid or "")]


def _striping_outcome(expected: str, evidence: list[Evidence], none_message: str,
                      flash_applies: bool = False) -> Outcome:
    """storage._outcome; where every volume is flash, striping does not apply and the
    volume's note says why."""
    if flash_applies and evidence and all(e.verdict == Verdict.NOTAPPLICABLE for e in evidence):
        none_message = evidence[0].note
    return _outcome(expected, evidence, none_message)


def _layouts(facts: Facts) -> Iterator[Layout | Evidence]:
    for filesystem in _filesystems(facts):
        yield from _layout(facts, filesystem)


def volume_striped(params: Mapping[str, Any], facts: Facts,
                   values: Mapping[str, Any]) -> Outcome:
    expected = ("each SAS file system's volume stripes over at least 2 LUNs "
                f"({QUEUE_IO_OPT} = N x {QUEUE_IO_MIN}, N >= 2)")
    evidence = _unplaced(facts)
    for layout in _layouts(facts):
        if isinstance(layout, Evidence):
            evidence.append(layout)
        elif layout.skipped:
            verdict, actual, note = layout.skipped
            evidence.append(Evidence(layout.subject, layout.source, actual, verdict, note,
                                     device=layout.device))
        else:
            evidence.append(Evidence(
                layout.subject, layout.source, layout.actual,
                Verdict.PASS if layout.stripes else Verdict.FAIL,
                ("striped by the array or RAID controller, which publishes its strip and "
                 "stripe in the LUN's queue limits") if layout.hardware else
                "" if layout.stripes else "one LUN (or a concatenation) carries all its I/O",
                device=layout.device))
    return _striping_outcome(expected, evidence,
                             "no local block device under the SAS file systems",
                             flash_applies=any(e.actual == "flash" for e in evidence))


def _page_size(facts: Facts, values: Mapping[str, Any]) -> tuple[int | None, str]:
    """The BUFSIZE in effect (None: SAS picks per data set) and where it comes from."""
    if values["sas_bufsize_bytes"]:
        return int(values["sas_bufsize_bytes"]), "site value sas_bufsize_bytes"
    configured = facts.discovery.bufsize
    if configured:
        return configured[0], f"-BUFSIZE in {configured[1]}"
    return None, "no -BUFSIZE set"


def _nests(page: int, unit: int) -> bool:
    """A page and a stripe unit where one divides the other: a page that is a whole number of
    units covers whole units; a page dividing the unit lies inside one unit, never split."""
    return page % unit == 0 or unit % page == 0


def bufsize_matches_stripe(params: Mapping[str, Any], facts: Facts,
                           values: Mapping[str, Any]) -> Outcome:
    page, origin = _page_size(facts, values)
    judged = page or SAS_DEFAULT_PAGE_MAX
    shown = (_size(page) if page else
             f"SAS's own choice, multiples of {_size(SAS_DEFAULT_PAGE_STEP)} up to "
             f"{_size(SAS_DEFAULT_PAGE_MAX)}, judged as {_size(SAS_DEFAULT_PAGE_MAX)}")
    expected = "a BUFSIZE and stripe unit where one divides the other (the slides: match)"
    evidence = _unplaced(facts)
    for layout in _layouts(facts):
        if isinstance(layout, Evidence):
            evidence.append(layout)
            continue
        if layout.skipped or not layout.stripes:
            verdict, note = ((layout.skipped[0], layout.skipped[2]) if layout.skipped
                             else (Verdict.NOTAPPLICABLE, "not striped: no stripe unit"))
            evidence.append(Evidence(layout.subject, layout.source, layout.actual, verdict, note,
                                     device=layout.device))
            continue
        nests = _nests(judged, layout.unit)
        if not nests:
            note = (f"set -BUFSIZE to a multiple or a divisor of {_size(layout.unit)} "
                    f"(best: {_size(layout.unit)} or a multiple)")
        elif judged != layout.unit:
            note = (f"pages {'span whole units' if judged > layout.unit else 'lie inside a unit'}"
                    f"; the RHEL/SAS slides ask for BUFSIZE to match the stripe unit "
                    f"({_size(layout.unit)})")
        else:
            note = ""
        evidence.append(Evidence(
            layout.subject, origin, f"BUFSIZE {shown}, stripe unit {_size(layout.unit)}",
            Verdict.PASS if nests else Verdict.FAIL, note, device=layout.device))
    return _striping_outcome(expected, evidence, "no SAS file system is on a striped volume")
