"""`sascheck iotest`: measure each SAS file system with fio, judge sas_fs_throughput, and
return the same sascheck-result/1 document a scan does, with a ``measurements`` block."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from ..reports.escaping import for_terminal
from ..rules import Catalogue
from ..scanner.checks.measured import throughput_target
from ..scanner.engine import HOW_TO_NAME_SAS_DIRS, ScanResult
from ..scanner.facts import Facts
from ..scanner.hostroot import FactError, HostRoot
from ..scanner.parsers.simple import cpuinfo_physical_cores
from ..scanner.scan import run_scan
from .fio import FioJob, fio_command, fio_version
from .plan import DEFAULT_BLOCK, MAX_DEFAULT_JOBS, Plan, PlanError, plan, targets
from .runner import measure, sigterm_interrupts

RULE_ID = "sas_fs_throughput"


@dataclass
class Request:
    roles: Sequence[str] = ()  # only these SAS roles; all when empty
    dirs: Sequence[str] = ()  # tested besides the SAS directories
    size: int | None = None  # per job; None: the default
    jobs: int | None = None
    block: int | None = None
    direct: bool = True
    dry_run: bool = False
    quiet: bool = False
    plans: list[Plan] = field(default_factory=list)


def _block(request: Request, facts: Facts) -> tuple[int, str]:
    if request.block:
        return request.block, "--block"
    bufsize = facts.discovery.bufsize  # read with the SAS directories, from the same chain
    if bufsize:
        return bufsize[0], f"-BUFSIZE in {bufsize[1]}"
    return DEFAULT_BLOCK, "no -BUFSIZE configured: 256 KiB"


def make_plans(request: Request, facts: Facts, cores: int) -> list[Plan]:
    """Every file system's plan, or PlanError before anything is written."""
    wanted = [d for d in facts.discovery.dirs if not request.roles or d.role in request.roles]
    if request.roles and not wanted:
        raise PlanError(f"no SAS {' or '.join(request.roles)} directory is known: "
                        + HOW_TO_NAME_SAS_DIRS)
    pairs = [(d.role, d.path) for d in wanted] + [("", path) for path in request.dirs]
    if not pairs:
        raise PlanError(HOW_TO_NAME_SAS_DIRS + ", or test a directory with --dir DIR")
    mounts = facts.mounts if isinstance(facts.mounts, list) else []
    jobs = request.jobs or min(cores, MAX_DEFAULT_JOBS)
    block = _block(request, facts)
    return [plan(target, jobs, block, request.size, request.direct)
            for target in targets(pairs, mounts)]


def _cores(facts: Facts) -> tuple[int, str]:
    try:
        return cpuinfo_physical_cores(HostRoot(facts.root).read_text("/proc/cpuinfo", 1 << 22))
    except FactError as exc:
        raise PlanError(f"cannot count cores: {exc}") from exc


def _measure_all(request: Request, console: Console) -> Any:
    def run(facts: Facts, values: Mapping[str, Any]) -> None:
        cores, basis = _cores(facts)
        request.plans = make_plans(request, facts, cores)
        if request.dry_run:
            return
        fio = fio_command()
        version = fio_version(fio)
        measurements = []
        show = not request.quiet and console.is_terminal
        columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
        with sigterm_interrupts(), Progress(*columns, console=console, transient=True,
                                            disable=not show) as progress:
            for chosen in request.plans:
                if not request.quiet:
                    console.print(for_terminal("testing " + chosen.describe()), markup=False,
                                  highlight=False)
                task = progress.add_task(escape(for_terminal(chosen.target.mountpoint)),
                                         total=1.0)

                def advance(done: float, task: Any = task) -> None:
                    progress.update(task, completed=done)
                measured = measure(chosen, fio, advance).to_dict(version)
                measurements.append({**measured, "cores": cores, "cores_basis": basis})
        facts.measurements = measurements
    return run


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
    console.print(table)
    if rule:
        console.print(f"{RULE_ID}: {rule['result']}", markup=False, highlight=False)
