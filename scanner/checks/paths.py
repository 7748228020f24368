"""How many paths reach each XtremIO LUN under SAS (seed 003 "XtremIO Storage Tuning": the
paper's hosts were zoned to at most 16 paths per volume, EMC's XtremIO best practice)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ...rules.host_layout import MULTIPATH_UUID_PREFIX, XTREMIO_VENDOR
from ..facts import Facts
from ..results import Evidence, Outcome, Verdict
from ..storage.blockdev import BlockDevice
from ..storage.filesystems import SasFilesystem
from .storage import _filesystems, _outcome, _unplaced


def _counted(subject: str, source: str, paths: int, limit: int, device: str) -> Evidence:
    over = paths > limit
    return Evidence(subject, source, f"{paths} path{'s' if paths != 1 else ''}",
                    Verdict.FAIL if over else Verdict.PASS,
                    f"more than {limit}: zone fewer storage ports to this host" if over else
                    "one path: nothing to multipath" if paths == 1 else "", device=device)


def _dmp_luns(facts: Facts, filesystem: SasFilesystem, limit: int,
              seen: set[str]) -> Iterator[Evidence]:
    """Veritas DMP: every XtremIO disk below the volume is a path; a LUN's paths share its
    wwid (the SCSI layer's device/wwid)."""
    subject = filesystem.mount.mountpoint
    disks = [facts.block.devices[layer.device] for layer in filesystem.stack]
    xtremio = [disk for disk in disks if disk.vendor == XTREMIO_VENDOR]
    unnamed = [disk.name for disk in xtremio if not disk.wwid]
    if unnamed:
        yield Evidence(subject, f"{xtremio[0].sysfs}/device/wwid", "no wwid", Verdict.NOTCHECKED,
                       f"{', '.join(unnamed[:4])}{' ...' if len(unnamed) > 4 else ''} show no "
                       "wwid: DMP's paths cannot be grouped by LUN (vxdmpadm getsubpaths "
                       "lists them)")
        return
    by_lun: dict[str, list[BlockDevice]] = {}
    for disk in xtremio:
        by_lun.setdefault(str(disk.wwid), []).append(disk)
    for wwid, paths in sorted(by_lun.items()):
        if wwid not in seen:
            seen.add(wwid)
            yield _counted(f"{subject}: XtremIO LUN {wwid} (DMP)", f"{paths[0].sysfs}/device/wwid",
                           len(paths), limit, paths[0].name)


def paths_per_lun(params: Mapping[str, Any], facts: Facts, values: Mapping[str, Any]) -> Outcome:
    limit: int = values["xtremio_max_paths"]
    expected = f"each XtremIO LUN under the SAS file systems reached by at most {limit} paths"
    evidence = _unplaced(facts)
    seen: set[str] = set()
    for filesystem in _filesystems(facts):
        if filesystem.veritas:
            evidence.extend(_dmp_luns(facts, filesystem, limit, seen))
            continue
        map_paths: set[str] = set()  # counted with their map, not one by one
        for layer in filesystem.stack:
            device = facts.block.devices[layer.device]
            if (device.dm_uuid or "").startswith(MULTIPATH_UUID_PREFIX):
                map_paths.update(device.slaves)
                paths = [facts.block.devices[name] for name in device.slaves
                         if name in facts.block.devices]
                if device.name not in seen and any(p.vendor == XTREMIO_VENDOR for p in paths):
                    seen.add(device.name)
                    evidence.append(_counted(f"{filesystem.mount.mountpoint}: {device.label}",
                                             f"{device.sysfs}/slaves", len(device.slaves),
                                             limit, device.name))
            elif device.kind == "disk" and device.vendor == XTREMIO_VENDOR and \
                    device.name not in seen | map_paths:
                seen.add(device.name)
                evidence.append(_counted(f"{filesystem.mount.mountpoint}: {device.label}",
                                         f"{device.sysfs}/device/vendor", 1, limit, device.name))
    return _outcome(expected, evidence, "no XtremIO LUN is under the SAS file systems")
