"""How a KVM host gives its SAS guests their disks (seed 000 §6.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..facts import Facts
from ..results import Evidence, Outcome, Verdict, combine, summarise
from ..unavailable import Unavailable

DIRECT_BUSES = ("virtio",)


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
    expected = ("each defined guest's block-device disks use virtio (virtio-blk or virtio-scsi) "
                "and cache='none'")
    evidence: list[Evidence] = []
    for path, domain in sorted(facts.guests.items()):
        if isinstance(domain, Unavailable):
            evidence.append(Evidence(path, path, "unreadable", Verdict.ERROR, str(domain)))
            continue
        for disk in domain.disks:
            subject = f"{domain.name or path}: {disk.target or '?'} ({disk.source or disk.type})"
            if disk.type != "block":
                evidence.append(Evidence(subject, path, f"{disk.type or 'unknown'}-backed",
                                         Verdict.INFORMATIONAL,
                                         "not a block device: the paper passed LVs through"))
                continue
            problems = disk_problems(disk.bus, disk.cache, domain.virtio_scsi)
            notes = problems + ([] if disk.io == "native" else
                                [f"io={disk.io or '(default)'}; the paper used io='native'"])
            evidence.append(Evidence(
                subject, path, f"bus={disk.bus or '-'} cache={disk.cache or '-'} "
                f"io={disk.io or '-'}", Verdict.FAIL if problems else Verdict.PASS,
                "; ".join(notes)))
    judged = [e for e in evidence if e.verdict != Verdict.INFORMATIONAL]
    return Outcome(combine(judged, if_none=Verdict.PASS), expected,
                   summarise(judged) or "no guest has a block-device disk", evidence)
