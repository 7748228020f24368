"""Check kinds judged from measurements sascheck iotest makes (a scan never writes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..facts import Facts
from ..results import Evidence, Outcome, Verdict, combine_judged

NOT_MEASURED = ("measured only by 'sascheck iotest', which writes test files on each SAS "
                "file system (a scan writes nothing)")
FAST_ROLES = {"WORK", "UTILLOC", "CAS_DISK_CACHE"}  # scratch SAS and CAS write and read back


def throughput_target(roles: list[str], values: Mapping[str, Any]) -> tuple[int, str]:
    """MB/s per core a file system must reach, and the site value that says so."""
    name = "io_mb_per_core_work" if FAST_ROLES & set(roles) else "io_mb_per_core_data"
    return int(values[name]), name


def concurrent_sums(measurements: list[dict[str, Any]]) -> dict[str, float] | None:
    """Write and read MB/s of the file systems measured at once (--concurrent), summed;
    None where they were measured one at a time."""
    together = [m for m in measurements if m.get("concurrent")]
    if len(together) < 2:
        return None
    return {rw: sum(m[rw]["mb_s"] for m in together) for rw in ("write", "read")}


def too_short(measured: Mapping[str, Any], minimum: int) -> str:
    """Why a measurement says nothing about the storage, or "": a phase shorter than
    ``minimum`` seconds measures caches (the array's, the device's, the page cache)."""
    short = [f"{rw} {measured[rw]['runtime_ms'] / 1000:.1f} s" for rw in ("write", "read")
             if measured[rw]["runtime_ms"] < minimum * 1000]
    if not short:
        return ""
    return (f"too short to judge: {' and '.join(short)}, under iotest_min_seconds "
            f"({minimum} s), measures caches rather than the storage; give a larger --size "
            "or leave the default")


def _method(measured: Mapping[str, Any]) -> str:
    io = "direct I/O" if measured["direct"] else "buffered, fsync at the end"
    method = measured.get("method", "fio-direct")
    return (f"{method} method, fio {measured['fio_version'].removeprefix('fio-')}: "
            f"{measured['jobs']} jobs, {measured['block_bytes'] // 1024} KiB blocks, {io}"
            + (", all file systems at once" if measured.get("concurrent") else ""))


def throughput(params: Mapping[str, Any], facts: Facts, values: Mapping[str, Any]) -> Outcome:
    expected = (f"sequential write and read of at least {values['io_mb_per_core_work']} MB/s "
                f"per physical core on WORK, UTILLOC and CAS disk cache file systems, "
                f"{values['io_mb_per_core_data']} on DATA, each phase running at least "
                f"{values['iotest_min_seconds']} s")
    if facts.measurements is None:
        return Outcome(Verdict.NOTCHECKED, expected, "not measured", message=NOT_MEASURED)
    evidence = []
    for measured in facts.measurements:
        cores = int(measured["cores"])
        target, name = throughput_target(measured["roles"], values)
        per_core = {rw: measured[rw]["mb_s"] / cores for rw in ("write", "read")}
        low = [rw for rw, rate in per_core.items() if rate < target]
        roles = "/".join(measured["roles"]) or "not a SAS directory"
        short = too_short(measured, int(values["iotest_min_seconds"]))
        verdict = Verdict.NOTCHECKED if short else Verdict.FAIL if low else Verdict.PASS
        evidence.append(Evidence(
            f"{measured['mountpoint']} ({roles})", _method(measured),
            f"write {measured['write']['mb_s']:.0f} MB/s, read {measured['read']['mb_s']:.0f} "
            f"MB/s: {per_core['write']:.1f} and {per_core['read']:.1f} MB/s per core "
            f"({cores} {'core' if cores == 1 else 'cores'})", verdict,
            short or (f"target {target} MB/s per core ({name})"
                      + (f"; {' and '.join(low)} below it" if low else ""))))
    sums = concurrent_sums(facts.measurements)
    if sums is not None:
        cores = int(facts.measurements[0]["cores"])
        evidence.append(Evidence(
            "all file systems at once", "the sum of the file systems measured together",
            f"write {sums['write']:.0f} MB/s, read {sums['read']:.0f} MB/s: "
            f"{sums['write'] / cores:.1f} and {sums['read'] / cores:.1f} MB/s per core",
            Verdict.INFORMATIONAL, "what SAS jobs get when DATA, WORK and UTILLOC are busy "
            "together"))
    judged = [e for e in evidence if e.verdict != Verdict.INFORMATIONAL]
    # one file system passing says nothing of the others
    result = combine_judged(judged, if_none=Verdict.NOTCHECKED)
    actual = "; ".join(f"{e.subject}: {e.actual}" for e in evidence) or "nothing measured"
    message = next((e.note for e in judged if e.verdict == Verdict.NOTCHECKED), "")
    return Outcome(result, expected, actual, evidence, message)
