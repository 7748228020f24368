"""The sascheck command line. Heavy modules are imported inside the commands so
that ``sascheck --help`` stays fast."""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from . import __version__
from .outputs import console_options

ROLE_CHOICES = ("auto", "bare_metal", "kvm_guest", "kvm_host", "container")
EXIT_OK, EXIT_USAGE, EXIT_FINDINGS = 0, 1, 2
# Where the sascheck-content RPM puts the data stream (packaging/sascheck.spec).
INSTALLED_DATASTREAM = "/usr/share/xml/scap/sascheck/content/sascheck-ds.xml"


class UsageError(Exception):
    """A problem with what the user asked for; printed as one line, exit 1."""


@contextlib.contextmanager
def _user_errors() -> Iterator[None]:
    """Turn the library's errors about user input into one-line usage errors: an unknown
    profile (KeyError), a bad site value, an unusable root, an impossible fix."""
    from .rules.errors import UserInputError

    try:
        yield
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from exc
    except UserInputError as exc:
        raise UsageError(str(exc)) from exc


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse exits 2; 2 means findings here
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="sascheck",
        description="Check a RHEL host's tuning for SAS: THP, I/O scheduler, read-ahead, "
                    "barriers, noatime, file systems, tuned, CPU governor.")
    parser.add_argument("--version", action="version", version=f"sascheck {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    scan = commands.add_parser("scan", help="scan a host (or a root directory) and report")
    scan_source = scan.add_mutually_exclusive_group()
    scan_source.add_argument("--root", default="/", metavar="DIR",
                             help="a directory holding another system's files (default: this "
                                  "host)")
    scan_source.add_argument("--snapshot", metavar="FILE",
                             help="scan a snapshot archive written by 'sascheck collect'")
    scan_source.add_argument("--sosreport", metavar="FILE|DIR",
                             help="scan a sosreport (its tar archive or unpacked directory)")
    scan.add_argument("--profile", default="default", metavar="NAME",
                      help="rule profile: default or xtremio (default: default)")
    scan.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                      help="set a site value; repeatable; lists are comma-separated")
    scan.add_argument("--role", default="auto", choices=ROLE_CHOICES,
                      help="what the host is (default: detect)")
    scan.add_argument("--tailoring", metavar="FILE",
                      help="take profile and values from an XCCDF tailoring file "
                           "(as written by 'sascheck tailor'); --set still overrides")
    scan.add_argument("--json", metavar="FILE", help="write results as JSON ('-' for stdout)")
    scan.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    scan.add_argument("--junit", metavar="FILE", help="write JUnit XML (a test case per rule)")
    scan.add_argument("--prometheus", metavar="FILE",
                      help="write metrics for node_exporter's textfile collector (*.prom)")
    scan.add_argument("--quiet", action="store_true", help="no table on the terminal")

    build = commands.add_parser("build", help="compile the rules into the SCAP data stream")
    build.add_argument("--output", default=None, metavar="DIR",
                       help="where to write sascheck-ds.xml (default: content/ in a source "
                            "checkout, else the current directory)")

    tailor = commands.add_parser(
        "tailor", help="write an XCCDF tailoring file with this host's site values for oscap")
    tailor_source = tailor.add_mutually_exclusive_group()
    tailor_source.add_argument("--root", default="/", metavar="DIR",
                               help="discover SAS directories under this root (default: this "
                                    "host)")
    tailor_source.add_argument("--snapshot", metavar="FILE", help="a 'sascheck collect' archive")
    tailor_source.add_argument("--sosreport", metavar="FILE|DIR",
                               help="a sosreport (tar archive or unpacked directory)")
    tailor.add_argument("--profile", default="default", metavar="NAME")
    tailor.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    tailor.add_argument("-o", "--output", required=True, metavar="FILE")

    fix = commands.add_parser("fix", help="generate remediations for the rules that failed")
    fix.add_argument("--format", required=True, choices=("bash", "ansible", "tuned", "udev"))
    source = fix.add_mutually_exclusive_group()
    source.add_argument("--from", dest="from_json", metavar="RESULTS.json",
                        help="results of an earlier 'sascheck scan --json'")
    source.add_argument("--root", default=None, metavar="DIR",
                        help="scan this root now (default: this host)")
    source.add_argument("--snapshot", metavar="FILE", help="scan this 'sascheck collect' archive")
    source.add_argument("--sosreport", metavar="FILE|DIR",
                        help="scan this sosreport (tar archive or unpacked directory)")
    fix.add_argument("--profile", default=None, metavar="NAME")
    fix.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    fix.add_argument("--role", default="auto", choices=ROLE_CHOICES)
    fix.add_argument("--all", action="store_true", help="every rule of the profile, not only "
                                                       "those that failed")
    fix.add_argument("--rule", action="append", default=[], metavar="ID",
                     help="only these rules (repeatable)")
    fix.add_argument("-o", "--output", required=True, metavar="FILE")

    report = commands.add_parser(
        "report", help="HTML report from results: one host, or a fleet (sascheck JSON and "
                       "oscap ARF, mixed)")
    report.add_argument("results", nargs="+", metavar="RESULT",
                        help="sascheck JSON (scan --json) or oscap ARF (--results-arf) files")
    report.add_argument("-o", "--output", required=True, metavar="FILE.html")
    report.add_argument("--junit", metavar="FILE", help="also write JUnit XML")
    report.add_argument("--fleet", action="store_true",
                        help="a fleet report even for a single host")
    report.add_argument("--baseline", metavar="DIR|FILE", action="append", default=[],
                        help="earlier results: mark each rule that got worse since (repeatable)")

    diff = commands.add_parser(
        "diff", help="what changed between two sets of results: per host and rule (exit 2 "
                     "when a rule got worse)")
    diff.add_argument("old", metavar="OLD", help="results file or directory of results")
    diff.add_argument("new", metavar="NEW", help="results file or directory of results")
    diff.add_argument("--json", metavar="FILE", help="write the changes as JSON ('-' for stdout)")
    diff.add_argument("--html", metavar="FILE", help="write a self-contained HTML page")
    diff.add_argument("--quiet", action="store_true", help="no table on the terminal")

    collect = commands.add_parser(
        "collect", help="archive the files a scan reads, to scan elsewhere (--snapshot)")
    collect.add_argument("--root", default="/", metavar="DIR")
    collect.add_argument("--profile", default="default", metavar="NAME")
    collect.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    collect.add_argument("-o", "--output", metavar="FILE.tar.gz")
    collect.add_argument("--script", action="store_true",
                         help="print a standalone shell script (coreutils and tar only) that "
                              "collects the same files on a host without sascheck")

    from .scan_snapshots import add_parser as add_scan_snapshots
    add_scan_snapshots(commands)

    iotest = commands.add_parser(
        "iotest", help="measure each SAS file system's sequential throughput with fio "
                       "(writes test files; this host only)")
    iotest.add_argument("--role", dest="roles", action="append", default=[],
                        choices=("DATA", "WORK", "UTILLOC"),
                        help="only the file systems of this SAS role (repeatable)")
    iotest.add_argument("--dir", dest="dirs", action="append", default=[], metavar="DIR",
                        help="also test the file system holding DIR (repeatable)")
    iotest.add_argument("--method", choices=("sas", "fio-direct"), default="sas",
                        help="sas (default): SAS's own way, one writer per physical core, "
                             "64K blocks, buffered writes closed by fsync, the cache dropped "
                             "before reading, files twice the RAM; fio-direct: direct I/O, "
                             "256K blocks, at most 16 jobs, 15 s a phase")
    iotest.add_argument("--concurrent", action="store_true",
                        help="test every file system at once (as SAS jobs load DATA, WORK "
                             "and UTILLOC together) and report each and the sum")
    iotest.add_argument("--size", metavar="SIZE",
                        help="file size per job, e.g. 2G (default: sas, twice the RAM in "
                             "all where a quarter of the free space allows; fio-direct, "
                             "what fits in a quarter of the free space, at most 4G)")
    iotest.add_argument("--jobs", type=int, metavar="N",
                        help="concurrent files (default: one per physical core; "
                             "fio-direct: at most 16)")
    iotest.add_argument("--block", metavar="SIZE",
                        help="block size (default: the configured -BUFSIZE, else 64K; "
                             "fio-direct 256K)")
    iotest.add_argument("--buffered", action="store_true",
                        help="fio-direct through the page cache")
    iotest.add_argument("--dry-run", action="store_true",
                        help="print the fio jobs and the space they need; write nothing")
    iotest.add_argument("--profile", default="default", metavar="NAME")
    iotest.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    iotest.add_argument("--json", metavar="FILE", help="write results as JSON ('-' for stdout)")
    iotest.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    iotest.add_argument("--quiet", action="store_true", help="no progress and no table")

    rules = commands.add_parser("rules", help="list the rule catalogue")
    rules.add_argument("--format", choices=("table", "markdown"), default="table",
                       help="markdown prints the catalogue as the README shows it")
    explain = commands.add_parser("explain", help="show one rule with rationale and sources")
    explain.add_argument("rule_id", metavar="ID")
    return parser


def _catalogue() -> Any:
    from .rules import CatalogueError, load_catalogue
    try:
        return load_catalogue()
    except CatalogueError as exc:
        raise UsageError(f"the rule catalogue is invalid:\n{exc}") from exc


@contextlib.contextmanager
def _root(args: argparse.Namespace) -> Iterator[str]:
    """The root to read: a directory, this host, or an extracted --snapshot or --sosreport
    (removed after; args.sos holds the sosreport's notes)."""
    args.sos = args.opened_snapshot = None
    if getattr(args, "sosreport", None):
        from .scanner.sosreport import SosreportError
        from .scanner.sosreport import opened as opened_sosreport
        try:
            with opened_sosreport(args.sosreport) as report:
                args.sos = report
                yield report.root
        except SosreportError as exc:
            raise UsageError(str(exc)) from exc
    elif getattr(args, "snapshot", None):
        from .scanner.snapshot import SnapshotError, opened_snapshot
        try:
            with opened_snapshot(args.snapshot) as snapshot:
                args.opened_snapshot = snapshot
                # The collection's site values first: --set given now overrides them.
                if hasattr(args, "set"):
                    args.set = [*snapshot.sets, *args.set]
                yield snapshot.root
        except SnapshotError as exc:
            raise UsageError(str(exc)) from exc
    else:
        yield getattr(args, "root", None) or "/"


def _collect(args: argparse.Namespace) -> int:
    if args.script:
        from .scanner.collect_script import SCRIPT
        sys.stdout.write(SCRIPT)
        return EXIT_OK
    if not args.output:
        raise UsageError("collect needs -o FILE.tar.gz (or --script)")
    from .outputs import opened_output
    from .reports.escaping import for_terminal
    from .scanner.scan import collect_snapshot

    catalogue = _catalogue()
    _check_root(args.root)
    try:
        with _user_errors(), opened_output(args.output, binary=True) as handle:
            host = collect_snapshot(catalogue, handle, args.profile,
                                    args.set, args.root)
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror}") from exc
    print(for_terminal(f"{args.output}: snapshot of {host['hostname'] or args.root}"),
          file=sys.stderr)
    return EXIT_OK


def _scan_snapshots(args: argparse.Namespace) -> int:
    from .scan_snapshots import run

    with _user_errors():
        return EXIT_FINDINGS if run(args, _catalogue()) else EXIT_OK


def _check_root(root: str | None) -> None:
    if root == "":
        raise UsageError("--root needs a directory ('' is not one; omit --root for this host)")


def _rooted(command: Callable[[argparse.Namespace], int]
            ) -> Callable[[argparse.Namespace], int]:
    """Run a command with args.root set to the root to read (extracting --snapshot)."""
    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        _check_root(getattr(args, "root", None))
        with _root(args) as root:
            args.root = root
            return command(args)
    return run


@_rooted
def _scan(args: argparse.Namespace) -> int:
    from .outputs import STDOUT, check_destinations, write_output
    from .reports import json_output
    from .scanner.scan import run_scan

    with _user_errors():
        check_destinations([args.json, args.html, args.junit, args.prometheus],
                           [args.tailoring, args.snapshot, args.sosreport])
    catalogue = _catalogue()
    profile, assignments = args.profile, list(args.set)
    if args.tailoring:
        profile, tailored = _read_tailoring(catalogue, args.tailoring)
        assignments = [*tailored, *assignments]
    started = time.monotonic()
    with _user_errors():
        result = run_scan(catalogue, profile, assignments, args.root, args.role,
                          reframe=args.sos.reframe if args.sos else None)
    duration = time.monotonic() - started
    data = _with_source(result.to_dict(), args)
    to_stdout = STDOUT in (args.json, args.html, args.junit, args.prometheus)
    outputs: list[tuple[str, Any]] = []
    if args.json:
        outputs.append((args.json, lambda: json_output.dumps(data)))
    if args.html or args.junit:
        from .reports.model import from_json
        host = from_json(data, data["host"]["root"] if args.root != "/" else "this host",
                         catalogue)
        if args.html:
            outputs.append((args.html, lambda: _html([host], catalogue, fleet=False)))
        if args.junit:
            from .reports.junit import render_junit
            outputs.append((args.junit, lambda: render_junit([host])))
    if args.prometheus:
        from .reports import prometheus
        outputs.append((args.prometheus, lambda: prometheus.render(data, duration, __version__)))
    # Files first: a reader that closes the pipe early (| head, | grep -q) must not cost them.
    for destination, render in sorted(outputs, key=lambda output: output[0] == STDOUT):
        if destination == STDOUT and not args.quiet:
            _table(data, to_stdout)
        with _user_errors(), _pipe_may_close():
            write_output(destination, render())
    if not to_stdout and not args.quiet:
        _table(data, to_stdout)
    return EXIT_FINDINGS if result.exit_status else EXIT_OK


def _table(data: dict[str, Any], to_stderr: bool) -> None:
    from rich.console import Console

    from .reports import terminal

    class PipeTolerantConsole(Console):
        def on_broken_pipe(self) -> None:
            # rich's own answer is SystemExit(1), which would turn the scan's verdict into a
            # usage error: the rest of the table goes nowhere instead.
            self.quiet = True
            _stdout_to_devnull()

    with _pipe_may_close():
        terminal.render(data, PipeTolerantConsole(stderr=to_stderr, **console_options()))


@contextlib.contextmanager
def _pipe_may_close() -> Iterator[None]:
    """The reader of standard output went away (| head, | grep -q): what is left for it goes
    nowhere, and the command's own status stands."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_to_devnull()


def _stdout_to_devnull() -> None:
    # Python's own advice for SIGPIPE: point the descriptor at /dev/null, so that neither a
    # later write nor the interpreter's final flush raises again.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _iotest(args: argparse.Namespace) -> int:
    from rich.console import Console

    from .iotest.command import Request, dry_run_text, print_measurements, run_iotest
    from .iotest.fio import FioError
    from .iotest.plan import PlanError, parse_size
    from .outputs import STDOUT, check_destinations, write_output
    from .reports import json_output

    with _user_errors():
        check_destinations([args.json, args.html], [])
    if args.jobs is not None and not 1 <= args.jobs <= 1024:
        raise UsageError("--jobs must be between 1 and 1024")
    catalogue = _catalogue()
    console = Console(stderr=True, **console_options())
    try:
        request = Request(roles=args.roles, dirs=args.dirs,
                          size=parse_size(args.size) if args.size else None, jobs=args.jobs,
                          block=parse_size(args.block) if args.block else None,
                          method=args.method, buffered=args.buffered,
                          concurrent=args.concurrent, dry_run=args.dry_run, quiet=args.quiet)
        with _user_errors():
            result = run_iotest(catalogue, args.profile, args.set, request, console)
    except (PlanError, FioError) as exc:
        raise UsageError(str(exc)) from exc
    if args.dry_run:
        sys.stdout.write(for_terminal_lines(dry_run_text(request.plans)))
        return EXIT_OK
    data = result.to_dict()
    if not args.quiet:
        print_measurements(data, Console(stderr=STDOUT in (args.json, args.html),
                                         **console_options()))
    if args.json:
        with _user_errors():
            write_output(args.json, json_output.dumps(data))
    if args.html:
        from .reports.model import from_json
        host = from_json(data, "this host", catalogue)
        with _user_errors():
            write_output(args.html, _html([host], catalogue, fleet=False))
    rule = next((r for r in data["rules"] if r["id"] == "sas_fs_throughput"), None)
    return EXIT_FINDINGS if rule and rule["result"] in ("fail", "error") else EXIT_OK


def for_terminal_lines(text: str) -> str:
    from .reports.escaping import for_terminal
    return "\n".join(for_terminal(line) for line in text.split("\n"))


def _html(hosts: list[Any], catalogue: Any, fleet: bool,
          regressed: dict[str, set[str]] | None = None) -> str | Iterator[str]:
    from .remediations.generate import rule_snippets
    from .reports.html import render_fleet, render_host

    snippets = rule_snippets(catalogue)
    if fleet or len(hosts) != 1 or regressed is not None:
        return render_fleet(_drained(hosts), snippets, regressed)
    return render_host(hosts[0], snippets)


def _drained(hosts: list[Any]) -> Iterator[Any]:
    """Each host once, let go as soon as the fleet page has taken what it needs from it:
    10,000 hosts' full results need not all be held while the page is built."""
    hosts.reverse()
    while hosts:
        yield hosts.pop()


RESULT_SUFFIXES = (".json", ".xml")  # sascheck JSON, oscap ARF


def _result_paths(paths: Sequence[str]) -> list[str]:
    """Files as given; a directory stands for its *.json and *.xml files."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found += sorted(os.path.join(path, name) for name in os.listdir(path)
                            if name.endswith(RESULT_SUFFIXES)
                            and os.path.isfile(os.path.join(path, name)))
        else:
            found.append(path)
    return found


def _load_results(catalogue: Any, paths: Sequence[str]) -> list[Any]:
    from rich.progress import Progress

    from .reports.model import ReportInputError, load, merge_engines, merge_measured

    hosts = []
    files = _result_paths(paths)
    show_progress = len(files) > 20 and sys.stderr.isatty()
    with Progress(transient=True, disable=not show_progress) as progress:
        task = progress.add_task("reading results", total=len(files))
        for path in files:
            try:
                hosts.append(load(path, catalogue))
            except ReportInputError as exc:
                raise UsageError(str(exc)) from exc
            progress.advance(task)
    # a host's scan and iotest results, and both engines' results, read together are one host
    return merge_engines(merge_measured(hosts))


def _report(args: argparse.Namespace) -> int:
    from .outputs import STDOUT, check_destinations, write_output

    with _user_errors():
        check_destinations([args.output, args.junit], [*args.results, *args.baseline])
    catalogue = _catalogue()
    hosts = _load_results(catalogue, args.results)
    count = len(hosts)  # the page takes the hosts (see _drained)
    regressed = None
    if args.baseline:
        from .reports import drift
        regressed = drift.regressed(drift.diff(_load_results(catalogue, args.baseline), hosts))
    with _user_errors():
        if args.junit:  # first: the page takes the hosts (see _drained)
            from .reports.junit import render_junit
            write_output(args.junit, render_junit(hosts))
        write_output(args.output, _html(hosts, catalogue, args.fleet, regressed))
    if args.output != STDOUT:
        from .reports.escaping import for_terminal

        kind = "fleet report" if args.fleet or count > 1 else "host report"
        print(for_terminal(f"{args.output}: {kind} of {count} host{'s' if count != 1 else ''}"
                           "; open it in a browser"), file=sys.stderr)
    return EXIT_OK


def _read_tailoring(catalogue: Any, path: str) -> tuple[str, list[str]]:
    from .content.tailoring import TailoringError, read_tailoring
    try:
        tailoring = read_tailoring(catalogue, path)
    except TailoringError as exc:
        raise UsageError(str(exc)) from exc
    return tailoring.profile, [f"{name}={value}" for name, value in tailoring.values.items()]


def _build(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .content.build import build, default_output
    from .remediations.generate import xccdf_fixes

    catalogue = _catalogue()
    target = build(catalogue, Path(args.output) if args.output else default_output(),
                   xccdf_fixes(catalogue))
    print(target)
    return EXIT_OK


@_rooted
def _tailor(args: argparse.Namespace) -> int:
    from .content.build import build_time
    from .content.tailoring import write_tailoring
    from .outputs import STDOUT, check_destinations, write_output
    from .scanner.scan import site_values

    catalogue = _catalogue()
    with _user_errors():
        check_destinations([args.output], [args.snapshot, args.sosreport])
        values = site_values(catalogue, args.profile, args.set, args.root)
        data = write_tailoring(catalogue, args.profile, values, build_time())
        write_output(args.output, data.decode("utf-8"))
    if args.output != STDOUT:
        from .content.tailoring import tailored_profile_id
        from .reports.escaping import for_terminal

        profile_id = tailored_profile_id(args.profile)
        print(for_terminal(f"{args.output}: tailored profile {profile_id}"), file=sys.stderr)
        print(for_terminal(f"next: oscap xccdf eval --tailoring-file {args.output} --profile "
                           f"{profile_id} --results-arf arf.xml {INSTALLED_DATASTREAM}"),
              file=sys.stderr)
    return EXIT_OK


def _with_source(data: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """Results that name the sosreport or snapshot scanned (not the temporary directory it
    was opened in), and for a sosreport what was rebuilt and what it lacked."""
    if args.opened_snapshot:
        named: dict[str, Any] = args.opened_snapshot.named(data)
        return named
    if args.sos:
        data["host"]["root"] = args.sos.path
        data["source"] = args.sos.source()
        data["problems"] = [*data["problems"], *(f"sosreport: {gap}" for gap in args.sos.gaps)]
    return data


def _fix_input(catalogue: Any, args: argparse.Namespace) -> Any:
    """What to remediate: an earlier scan's results (--from), or a scan now; either way
    through the one results contract (remediations.generate.fix_input_from_result)."""
    from .remediations.generate import fix_input_from_result
    from .reports.resultfile import read_result
    from .scanner.scan import run_scan

    with _user_errors():
        if args.from_json:
            result = read_result(args.from_json)
        else:
            result = _with_source(run_scan(
                catalogue, args.profile or "default", args.set, args.root or "/", args.role,
                reframe=args.sos.reframe if args.sos else None).to_dict(), args)
        return fix_input_from_result(
            catalogue, result, profile=args.profile, assignments=args.set, role=args.role,
            everything=args.all, only=args.rule)


@_rooted
def _fix(args: argparse.Namespace) -> int:
    from .outputs import STDOUT, check_destinations, write_output
    from .remediations.generate import generate, next_steps

    with _user_errors():
        check_destinations([args.output], [args.from_json, args.snapshot, args.sosreport])
    catalogue = _catalogue()
    fix_input = _fix_input(catalogue, args)
    with _user_errors():
        text = generate(args.format, catalogue, fix_input)
        # A script is executable from the moment it has its name (the mode is set on the
        # descriptor before the rename, so no racer can redirect a chmod).
        write_output(args.output, text, mode=0o755 if args.format == "bash" else None)
    if not fix_input.rule_ids:
        print("sascheck: nothing failed; the remediation changes nothing", file=sys.stderr)
    if args.output != STDOUT:
        from .reports.escaping import for_terminal

        print(for_terminal(f"{args.output}: {args.format} fix for "
                           f"{len(fix_input.rule_ids)} rules"), file=sys.stderr)
        for step in next_steps(args.format, args.output, fix_input):
            print(for_terminal(step), file=sys.stderr)
    return EXIT_OK


def _rules(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    catalogue = _catalogue()
    if args.format == "markdown":
        from .reports.catalogue import markdown_catalogue
        sys.stdout.write(markdown_catalogue(catalogue))
        return EXIT_OK
    table = Table(title="sascheck rules")
    for column in ("id", "severity", "applies to", "title"):
        table.add_column(column)
    for rule in catalogue.rules.values():
        table.add_row(rule.id, rule.severity.value, ", ".join(rule.applies_to), rule.title)
    Console(**console_options()).print(table)
    return EXIT_OK


def _find_rule(catalogue: Any, text: str) -> Any:
    """A rule by its id, its XCCDF id (as oscap and ARF name it) or a unique prefix."""
    from .content.xccdf import rule_id

    name = text.removeprefix(rule_id(""))
    if name in catalogue.rules:
        return catalogue.rules[name]
    matches = sorted(known for known in catalogue.rules if known.startswith(name))
    if len(matches) == 1:
        return catalogue.rules[matches[0]]
    if matches:
        raise UsageError(f"'{text}' could be {', '.join(matches)}: name one")
    raise UsageError(f"unknown rule '{text}'; 'sascheck rules' lists them")


def _explain(args: argparse.Namespace) -> int:
    catalogue = _catalogue()
    rule = _find_rule(catalogue, args.rule_id)
    lines = [f"{rule.id}: {rule.title}", f"severity: {rule.severity.value}",
             f"applies to: {', '.join(rule.applies_to)}", f"check: {rule.kind}",
             f"site values: {', '.join(rule.values) or '(none)'}",
             f"fix: {'manual: ' + rule.manual_fix if rule.manual_fix else 'automatic'}", "",
             rule.description, "", "Rationale:", rule.rationale, "", "Sources:"]
    lines += [f"  - {ref.citation}" + (f" ({ref.note})" if ref.note else "")
              for ref in rule.references]
    if not rule.manual_fix:
        from .remediations.generate import rule_snippets

        snippet = rule_snippets(catalogue)[rule.id]
        lines += ["", "Fix (bash):", snippet["bash"], "", "Fix (Ansible):", snippet["ansible"]]
    print("\n".join(lines))
    return EXIT_OK


def _diff(args: argparse.Namespace) -> int:
    import json

    from .outputs import STDOUT, check_destinations, write_output
    from .reports import drift

    with _user_errors():
        check_destinations([args.json, args.html], [args.old, args.new])
    catalogue = _catalogue()
    old, new = _load_results(catalogue, [args.old]), _load_results(catalogue, [args.new])
    if not old or not new:
        raise UsageError(f"no results in {args.old if not old else args.new}")
    changes = drift.diff(old, new)
    if not args.quiet:
        from rich.console import Console

        from .reports.terminal import render_drift
        render_drift(changes, Console(stderr=STDOUT in (args.json, args.html),
                                      **console_options()))
    with _user_errors():
        if args.json:
            write_output(args.json, json.dumps(
                {"schema": "sascheck-diff/1", "old": args.old, "new": args.new,
                 "worse": sum(change.worse for change in changes),
                 "changes": [change.to_dict() for change in changes]}, indent=2) + "\n")
        if args.html:
            from .reports.html import render_drift as html_drift
            write_output(args.html, html_drift(changes, args.old, args.new))
    return EXIT_FINDINGS if any(change.worse for change in changes) else EXIT_OK


COMMANDS = {"scan": _scan, "build": _build, "tailor": _tailor, "fix": _fix, "report": _report,
            "diff": _diff,
            "collect": _collect, "scan-snapshots": _scan_snapshots, "iotest": _iotest,
            "rules": _rules,
            "explain": _explain}


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    try:
        return COMMANDS[args.command](args)
    except BrokenPipeError:
        _stdout_to_devnull()
        return EXIT_USAGE
    except UsageError as exc:
        from .reports.escaping import for_terminal

        # Messages quote host files and results: keep their lines, not their controls.
        lines = [for_terminal(line) for line in str(exc).split("\n")]
        print("sascheck: error: " + "\n".join(lines), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
