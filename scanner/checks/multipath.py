"""Whether dm-multipath spreads the SAS LUNs' I/O over all their paths (seed 000 §4.2.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.host_layout import DMSETUP_TABLE, MULTIPATH_ALL_PATHS, MULTIPATH_UUID_PREFIX
from ..facts import Facts
from ..parsers.dm_multipath import MultipathMap
from ..results import Evidence, Outcome, Verdict, combine, summarise
from ..storage.blockdev import BlockDevice
from ..storage.multipath import PathPriorities, grouping
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
            tpgs = [p.tpgs for p in paths]
            detects, source = facts.multipath_detects
            priorities = PathPriorities(
                detects, None if not tpgs or None in tpgs else all(tpgs), source)
            decided = grouping(conf, uuid[len(MULTIPATH_UUID_PREFIX):], vendor, product,
                               priorities, facts.multipath_table)
            runtime = facts.multipath_runtime
            if isinstance(runtime, Unavailable):
                evidence.append(Evidence(subject, DMSETUP_TABLE, "unreadable", Verdict.ERROR,
                                         runtime.reason))
                continue
            if runtime is not None and device.dm_name in runtime:
                evidence.append(_as_running(subject, runtime[device.dm_name], decided.policy,
                                            facts.block.by_dev, facts.block.devices))
                continue
            if decided.policy is None:
                evidence.append(Evidence(subject, decided.source, "not known",
                                         Verdict.NOTCHECKED,
                                         "set path_grouping_policy for it in multipath.conf"))
                continue
            good = decided.policy in MULTIPATH_ALL_PATHS
            if decided.policy == "multibus" and (mixed := _mixed_access(paths)):
                evidence.append(Evidence(subject, decided.source, "path_grouping_policy "
                                         f"multibus over {mixed}", Verdict.FAIL, MIXED_NOTE))
                continue
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


MIXED_NOTE = ("one path group mixes ALUA optimized and non-optimized paths: multibus sends "
              "I/O down the non-optimized ones too (through the other controller, slower); "
              "use path_grouping_policy group_by_prio for this array")


def _mixed_access(paths: list[BlockDevice]) -> str:
    """'N active/optimized and M active/non-optimized paths' where a group mixes the two
    (each path's device/access_state), else ""."""
    states = [path.access_state for path in paths]
    optimized, other = states.count("active/optimized"), states.count("active/non-optimized")
    if optimized and other:
        return f"{optimized} active/optimized and {other} active/non-optimized paths"
    return ""


def _as_running(subject: str, running: MultipathMap, configured: str | None,
                by_dev: dict[str, str], devices: dict[str, BlockDevice]) -> Evidence:
    """The kernel's grouping of a map (dmsetup table and status), which decides over the
    configuration: a failed path fails; one group uses every path; ALUA groups by priority
    (group_by_prio, group_by_tpg) use the best group's paths; several groups otherwise leave
    all but the active one idle (failover)."""
    def names(paths: list[str]) -> str:
        return ", ".join(by_dev.get(path, path) for path in paths)

    groups = running.groups
    sizes = "+".join(str(len(group.paths)) for group in groups)
    source = f"{DMSETUP_TABLE} (dmsetup table and status)"
    failed = [path for group in groups for path in group.failed]
    if failed:
        return Evidence(subject, source, f"failed paths: {names(failed)}", Verdict.FAIL,
                        "the kernel has marked these paths failed: I/O runs on fewer paths "
                        "than the LUN has (multipath -ll; check the fabric)")
    for group in groups:
        members = [devices[by_dev[path]] for path in group.paths
                   if path in by_dev and by_dev[path] in devices]
        if mixed := _mixed_access(members):
            return Evidence(subject, source, f"a path group of {mixed}", Verdict.FAIL,
                            MIXED_NOTE)
    if len(groups) <= 1:
        return Evidence(subject, source, f"1 path group of {sizes or 0} paths", Verdict.PASS,
                        "every path carries I/O")
    alua = running.hw_handler == "alua"
    by_priority = alua and (any(len(g.paths) > 1 for g in groups)
                            or configured in ("group_by_prio", "group_by_tpg"))
    return Evidence(subject, source, f"{len(groups)} path groups ({sizes} paths)",
                    Verdict.PASS if by_priority else Verdict.FAIL,
                    "ALUA: grouped by priority, I/O down every path of the best group"
                    if by_priority else "only the active group's paths carry I/O, the others "
                    "wait (failover grouping)")
