"""`sascheck iotest`: measure each SAS file system with fio, judge sas_fs_throughput, and
return the same sascheck-result/1 document a scan does, with a ``measurements`` block."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from ..reports.escaping import for_terminal
from ..rules import Catalogue
from ..scanner.checks.measured import concurrent_sums, throughput_target
from ..scanner.engine import ScanResult
from ..scanner.facts import Facts
from ..scanner.parsers.simple import cpuinfo_physical_cores
from ..scanner.scan import run_scan
from ..scanner.sources.hostroot import FactError, HostRoot
from ..scanner.storage.sasdirs import HOW_TO_NAME_SAS_DIRS
from .fio import FioJob, fio_command, fio_version
from .plan import (
    DEFAULT_BLOCK,
    MAX_DEFAULT_JOBS,
    SAS_BLOCK,
    Plan,
    PlanError,
    human,
    plan,
    targets,
)
from .runner import Measurement, measure, sigterm_interrupts, stop_process

RULE_ID = "sas_fs_throughput"


@dataclass
class Request:
    roles: Sequence[str] = ()  # only these SAS roles; all when empty
    dirs: Sequence[str] = ()  # tested besides the SAS directories
    size: int | None = None  # per job; None: the default
    jobs: int | None = None
    block: int | None = None
    method: str = "sas"
    buffered: bool = False  # fio-direct through the page cache (--buffered)
    concurrent: bool = False  # every file system at once
    dry_run: bool = False
    quiet: bool = False
    plans: list[Plan] = field(default_factory=list)


def _block(request: Request, facts: Facts) -> tuple[int, str]:
    if request.block:
        return request.block, "--block"
    bufsize = facts.discovery.bufsize  # read with the SAS directories, from the same chain
    if bufsize:
        return bufsize[0], f"-BUFSIZE in {bufsize[1]}"
    if request.method == "sas":
        return SAS_BLOCK, "no -BUFSIZE configured: SAS's tests use 64 KiB"
    return DEFAULT_BLOCK, "no -BUFSIZE configured: 256 KiB"


def _jobs(request: Request, cores: int) -> tuple[int, str]:
    if request.jobs:
        return request.jobs, "--jobs"
    if request.method == "sas":
        return cores, "one per physical core"
    return min(cores, MAX_DEFAULT_JOBS), f"physical cores, at most {MAX_DEFAULT_JOBS}"


def make_plans(request: Request, facts: Facts, cores: int,
               ram_bytes: int | None = None) -> list[Plan]:
    """Every file system's plan, or PlanError before anything is written."""
    wanted = [d for d in facts.discovery.dirs if not request.roles or d.role in request.roles]
    if request.roles and not wanted:
        raise PlanError(f"no SAS {' or '.join(request.roles)} directory is known: "
                        + HOW_TO_NAME_SAS_DIRS)
    pairs = [(d.role, d.path) for d in wanted] + [("", path) for path in request.dirs]
    if not pairs:
        raise PlanError(HOW_TO_NAME_SAS_DIRS + ", or test a directory with --dir DIR")
    mounts = facts.mounts if isinstance(facts.mounts, list) else []
    jobs = _jobs(request, cores)
    block = _block(request, facts)
    direct = False if request.buffered else None
    return [plan(target, jobs, block, request.size, request.method, ram_bytes, direct)
            for target in targets(pairs, mounts)]


def _cores(facts: Facts) -> tuple[int, str]:
    try:
        return cpuinfo_physical_cores(HostRoot(facts.root).read_text("/proc/cpuinfo", 1 << 22))
    except FactError as exc:
        raise PlanError(f"cannot count cores: {exc}") from exc


def _ram_bytes(facts: Facts) -> int | None:
    kib = facts.host.memory_kib
    return kib * 1024 if kib else None


def _measure_all(request: Request, console: Console) -> Any:
    def run(facts: Facts, values: Mapping[str, Any]) -> None:
        cores, basis = _cores(facts)
        request.plans = make_plans(request, facts, cores, _ram_bytes(facts))
        if request.dry_run:
            return
        fio = fio_command()
        version = fio_version(fio)
        show = not request.quiet and console.is_terminal
        columns = (TextColumn("{task.description}"), BarColumn(),
                   TextColumn("{task.fields[moved]}"), TimeElapsedColumn())
        with sigterm_interrupts(), Progress(*columns, console=console, transient=True,
                                            disable=not show) as progress:
            def advance_for(chosen: Plan) -> Callable[[float], None]:
                name = escape(for_terminal(chosen.target.mountpoint))
                task = progress.add_task(f"{name}: write", total=1.0, moved="")

                def advance(done: float) -> None:
                    phase = "write" if done < 0.5 else "read"
                    moved = human(int(min(done * 2 - (phase == "read"), 1.0)
                                      * chosen.total_bytes))
                    progress.update(task, completed=done, description=f"{name}: {phase}",
                                    moved=f"{moved} of {human(chosen.total_bytes)}")
                return advance

            if not request.quiet:
                for chosen in request.plans:
                    console.print(for_terminal("testing " + chosen.describe()), markup=False,
                                  highlight=False)
            if request.concurrent and len(request.plans) > 1:
                measured = measure_together(request.plans, fio, advance_for)
            else:
                measured = [measure(chosen, fio, advance_for(chosen))
                            for chosen in request.plans]
        facts.measurements = [{**m.to_dict(version), "cores": cores, "cores_basis": basis}
                              for m in measured]
    return run


def measure_together(plans: Sequence[Plan], fio: str,
                     advance_for: Callable[[Plan], Callable[[float], None]]
                     ) -> list[Measurement]:
    """Every file system at once, as SAS jobs load DATA, WORK and UTILLOC together: each in a
    thread of its own, all writing, then all reading. An interrupt stops every fio and
    waits for each thread's clean-up; the first real failure is the one reported."""
    together = threading.Barrier(len(plans))
    processes: list[subprocess.Popen[str]] = []
    lock = threading.Lock()

    def started(process: subprocess.Popen[str]) -> None:
        with lock:
            processes.append(process)

    with ThreadPoolExecutor(max_workers=len(plans)) as pool:
        futures = [pool.submit(measure, chosen, fio, advance_for(chosen), together, started)
                   for chosen in plans]
        try:
            wait(futures)
        except KeyboardInterrupt:
            together.abort()
            with lock:
                running = list(processes)
            for process in running:
                stop_process(process)
            wait(futures)
            raise
    failures = [f.exception() for f in futures if f.exception() is not None]
    real = [e for e in failures if not isinstance(e, threading.BrokenBarrierError)]
    if failures:
        raise (real or failures)[0]  # type: ignore[misc]
    return [future.result() for future in futures]


def dry_run_text(plans: Sequence[Plan]) -> str:
    lines = []
    for chosen in plans:
        lines.append(chosen.describe())
        for rw in ("write", "read"):
            job = FioJob("<private directory>", rw, chosen.block_bytes, chosen.size_bytes,
                         chosen.jobs, chosen.direct, chosen.runtime_s)
            lines.append("  " + " ".join(job.argv()).replace(
                "--directory=<private directory>",
                f"--directory={chosen.target.directory}/.sascheck-iotest-XXXXXX"))
    return "\n".join(lines) + "\n"


def run_iotest(catalogue: Catalogue, profile: str, assignments: Sequence[str],
               request: Request, console: Console | None = None) -> ScanResult:
    """Raises PlanError (refused: nothing written), FioError, KeyboardInterrupt (stopped:
    test files removed), and what run_scan raises."""
    console = console or Console(stderr=True)
    return run_scan(catalogue, profile, assignments, "/", "auto",
                    measure=_measure_all(request, console))


def print_measurements(result: dict[str, Any], console: Console) -> None:
    from rich.table import Table
    from rich.text import Text  # host strings are text, never rich markup

    rule = next((r for r in result["rules"] if r["id"] == RULE_ID), None)
    table = Table(title="sascheck iotest")
    for column in ("file system", "roles", "write MB/s", "read MB/s", "MB/s per core (w/r)",
                   "target per core", "result"):
        table.add_column(column)
    verdicts = {e["subject"]: e for e in (rule or {}).get("evidence", [])}
    for measured in result.get("measurements", []):
        cores = measured["cores"]
        roles = "/".join(measured["roles"]) or "-"
        evidence = verdicts.get(f"{measured['mountpoint']} "
                                f"({'/'.join(measured['roles']) or 'not a SAS directory'})", {})
        table.add_row(Text(for_terminal(measured["mountpoint"])), roles,
                      f"{measured['write']['mb_s']:.0f}", f"{measured['read']['mb_s']:.0f}",
                      f"{measured['write']['mb_s'] / cores:.1f} / "
                      f"{measured['read']['mb_s'] / cores:.1f}",
                      str(throughput_target(measured["roles"], result["values"])[0]),
                      evidence.get("result", "?"))
    sums = concurrent_sums(result.get("measurements", []))
    if sums is not None:
        cores = result["measurements"][0]["cores"]
        table.add_row("all at once", "-", f"{sums['write']:.0f}", f"{sums['read']:.0f}",
                      f"{sums['write'] / cores:.1f} / {sums['read'] / cores:.1f}", "-", "-")
    console.print(table)
    if result.get("measurements"):
        first = result["measurements"][0]
        basis = "physical cores" if str(first.get("cores_basis", "")).startswith(
            "physical") else "CPUs"
        console.print(f"per core: divided by {first['cores']} {basis}", markup=False,
                      highlight=False)
    if rule:
        why = f": {rule['message']}" if rule["result"] not in ("pass", "fail") and \
            rule.get("message") else ""
        console.print(for_terminal(f"{RULE_ID}: {rule['result']}{why}"), markup=False,
                      highlight=False)
