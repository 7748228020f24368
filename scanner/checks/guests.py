"""How a KVM host gives its SAS guests their disks (seed 000 §6.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..facts import Facts
from ..parsers.libvirt import GuestDisk
from ..results import Evidence, Outcome, Verdict, combine, summarise
from ..unavailable import Unavailable

DIRECT_BUSES = ("virtio",)
# What libvirt's formatdomain calls a host's storage handed to the guest: a block device, a
# storage pool's volume (an LV of a logical pool, a LUN of an iSCSI or mpath pool), or a
# SCSI LUN passed through (device='lun', on a block or iSCSI network source).
PASSED_THROUGH_TYPES = ("block", "volume")


def passed_through(disk: GuestDisk) -> bool:
    return disk.type in PASSED_THROUGH_TYPES or disk.device == "lun"


def disk_problems(bus: str, cache: str, virtio_scsi: bool) -> list[str]:
    """What keeps a block-device disk from the direct path the paper used."""
    problems = []
    if not (bus in DIRECT_BUSES or (bus == "scsi" and virtio_scsi)):
        problems.append(f"bus {bus or '(default)'}: use virtio (virtio-blk) or virtio-scsi")
    if cache != "none":
        problems.append(f"cache={cache or '(default)'}: use cache='none' (no host page cache)")
    return problems


def kvm_guest_disks_direct(params: Mapping[str, Any], facts: Facts,
                           values: Mapping[str, Any]) -> Outcome:
    expected = ("each defined guest's disks on the host's storage (block devices, pool "
                "volumes, SCSI LUNs passed through) use virtio (virtio-blk or virtio-scsi) and "
                "cache='none'")
    evidence: list[Evidence] = []
    for path, domain in sorted(facts.guests.items()):
        if isinstance(domain, Unavailable):
            evidence.append(Evidence(path, path, "unreadable", Verdict.ERROR, str(domain)))
            continue
        for disk in domain.disks:
            kind = f"{disk.type} {disk.device}" if disk.device == "lun" else disk.type
            subject = f"{domain.name or path}: {disk.target or '?'} ({disk.source or kind})"
            if not passed_through(disk):
                evidence.append(Evidence(subject, path, f"{disk.type or 'unknown'}-backed",
                                         Verdict.INFORMATIONAL,
                                         "not the host's storage passed through: the paper "
                                         "passed LVs through"))
                continue
            problems = disk_problems(disk.bus, disk.cache, domain.virtio_scsi)
            notes = problems + ([] if disk.io == "native" else
                                [f"io={disk.io or '(default)'}; the paper used io='native'"])
            evidence.append(Evidence(
                subject, path, f"bus={disk.bus or '-'} cache={disk.cache or '-'} "
                f"io={disk.io or '-'}", Verdict.FAIL if problems else Verdict.PASS,
                "; ".join(notes)))
    judged = [e for e in evidence if e.verdict != Verdict.INFORMATIONAL]
    return Outcome(combine(judged, if_none=Verdict.NOTAPPLICABLE), expected,
                   summarise(judged) or "no guest has a block-device disk", evidence)
