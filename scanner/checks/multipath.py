"""Whether dm-multipath spreads the SAS LUNs' I/O over all their paths (seed 000 §4.2.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.host_layout import MULTIPATH_ALL_PATHS, MULTIPATH_UUID_PREFIX
from ..facts import Facts
from ..multipath import grouping
from ..results import Evidence, Outcome, Verdict, combine, summarise
from ..unavailable import Unavailable
from .storage import _filesystems, _unplaced


def multipath_all_paths_active(params: Mapping[str, Any], facts: Facts,
                               values: Mapping[str, Any]) -> Outcome:
    expected = ("each multipath map under the SAS file systems uses all its paths at once: "
                "path_grouping_policy " + " or ".join(MULTIPATH_ALL_PATHS))
    evidence = _unplaced(facts)
    seen: set[str] = set()
    for filesystem in _filesystems(facts):
        for layer in filesystem.stack:
            device = facts.block.devices[layer.device]
            uuid = device.dm_uuid or ""
            if not uuid.startswith(MULTIPATH_UUID_PREFIX) or device.name in seen:
                continue
            seen.add(device.name)
            subject = f"{device.label}: {len(device.slaves)} paths"
            conf = facts.multipath
            if isinstance(conf, Unavailable):
                evidence.append(Evidence(subject, "", "unreadable", Verdict.ERROR, conf.reason))
                continue
            paths = [facts.block.devices[name] for name in device.slaves
                     if name in facts.block.devices]
            vendor = next((p.vendor for p in paths if p.vendor), "")
            product = next((p.model for p in paths if p.model), "")
            decided = grouping(conf, uuid[len(MULTIPATH_UUID_PREFIX):], vendor, product)
            if decided.policy is None:
                evidence.append(Evidence(subject, decided.source, "not known",
                                         Verdict.NOTCHECKED,
                                         "set path_grouping_policy for it in multipath.conf"))
                continue
            good = decided.policy in MULTIPATH_ALL_PATHS
            note = ("ALUA: I/O goes down every path of the best priority group"
                    if decided.policy == "group_by_prio" else
                    "" if good else "one path (group) carries the I/O, the others wait")
            evidence.append(Evidence(subject, decided.source,
                                     f"path_grouping_policy {decided.policy}",
                                     Verdict.PASS if good else Verdict.FAIL, note))
    # Maps elsewhere but none under SAS: nothing judged is not a pass.
    result = combine(evidence, if_none=Verdict.NOTAPPLICABLE)
    if result in (Verdict.PASS, Verdict.NOTAPPLICABLE) and any(
            e.verdict == Verdict.NOTCHECKED for e in evidence):
        result = Verdict.NOTCHECKED
    # Only undecided maps: say which, not that there are none.
    actual = summarise(evidence) or "; ".join(f"{e.subject}: {e.actual}" for e in evidence)
    return Outcome(result, expected, actual or "no SAS file system is on dm-multipath",
                   evidence)
