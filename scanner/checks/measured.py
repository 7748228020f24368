"""Check kinds judged from measurements sascheck iotest makes (a scan never writes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..facts import Facts
from ..results import Evidence, Outcome, Verdict, combine

NOT_MEASURED = ("measured only by 'sascheck iotest', which writes test files on each SAS "
                "file system (a scan writes nothing)")
FAST_ROLES = {"WORK", "UTILLOC"}


def throughput_target(roles: list[str], values: Mapping[str, Any]) -> tuple[int, str]:
    """MB/s per core a file system must reach, and the site value that says so."""
    name = "io_mb_per_core_work" if FAST_ROLES & set(roles) else "io_mb_per_core_data"
    return int(values[name]), name


def throughput(params: Mapping[str, Any], facts: Facts, values: Mapping[str, Any]) -> Outcome:
    expected = (f"sequential write and read of at least {values['io_mb_per_core_work']} MB/s "
                f"per physical core on WORK and UTILLOC file systems, "
                f"{values['io_mb_per_core_data']} on DATA")
    if facts.measurements is None:
        return Outcome(Verdict.NOTCHECKED, expected, "not measured", message=NOT_MEASURED)
    evidence = []
    for measured in facts.measurements:
        cores = int(measured["cores"])
        target, name = throughput_target(measured["roles"], values)
        per_core = {rw: measured[rw]["mb_s"] / cores for rw in ("write", "read")}
        low = [rw for rw, rate in per_core.items() if rate < target]
        roles = "/".join(measured["roles"]) or "not a SAS directory"
        evidence.append(Evidence(
            f"{measured['mountpoint']} ({roles})",
            f"fio {measured['fio_version'].removeprefix('fio-')}: {measured['jobs']} jobs, "
            f"{measured['block_bytes'] // 1024} KiB blocks, "
            + ("direct I/O" if measured["direct"] else "buffered"),
            f"write {measured['write']['mb_s']:.0f} MB/s, read {measured['read']['mb_s']:.0f} "
            f"MB/s: {per_core['write']:.1f} and {per_core['read']:.1f} MB/s per core "
            f"({cores} {'core' if cores == 1 else 'cores'})",
            Verdict.FAIL if low else Verdict.PASS,
            f"target {target} MB/s per core ({name})"
            + (f"; {' and '.join(low)} below it" if low else "")))
    result = combine(evidence, if_none=Verdict.NOTCHECKED)
    actual = "; ".join(f"{e.subject}: {e.actual}" for e in evidence) or "nothing measured"
    return Outcome(result, expected, actual, evidence)
