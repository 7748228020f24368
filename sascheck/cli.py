"""The sascheck command line. Heavy modules are imported inside the commands so
that ``sascheck --help`` stays fast."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

from . import __version__
from .cli_catalogue import explain_command, rules_command
from .cli_common import (
    EXIT_BUG,
    EXIT_FINDINGS,
    EXIT_NOTHING_JUDGED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    debug_log,
    load_rules,
    user_errors,
)
from .cli_fix import fix_command
from .cli_parser import build_parser
from .cli_reports import diff_command, html_page, report_command
from .cli_roots import check_root, rooted, with_source
from .outputs import console_options
from .scanner.results import judged_count

# Where the sascheck-content RPM puts the data stream (packaging/sascheck.spec).
INSTALLED_DATASTREAM = "/usr/share/xml/scap/sascheck/content/sascheck-ds.xml"


def _collect(args: argparse.Namespace) -> int:
    if args.script:
        from .scanner.sources.collect_script import SCRIPT
        sys.stdout.write(SCRIPT)
        return EXIT_OK
    if not args.output:
        raise UsageError("collect needs -o FILE.tar.gz (or --script)")
    from .outputs import opened_output
    from .reports.escaping import for_terminal
    from .scanner.scan import collect_snapshot

    catalogue = load_rules()
    check_root(args.root)
    try:
        # 0600: the archive holds the host's configuration, for its owner to pass on.
        with user_errors(), opened_output(args.output, binary=True, mode=0o600) as handle:
            host = collect_snapshot(catalogue, handle, args.profile,
                                    args.set, args.root)
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror}") from exc
    print(for_terminal(f"{args.output}: snapshot of {host['hostname'] or args.root}"),
          file=sys.stderr)
    return EXIT_OK


def _scan_snapshots(args: argparse.Namespace) -> int:
    from .scan_snapshots import run

    with user_errors():
        return EXIT_FINDINGS if run(args, load_rules()) else EXIT_OK


@rooted
def _scan(args: argparse.Namespace) -> int:
    from .outputs import STDOUT, check_destinations, write_output
    from .reports import json_output
    from .scanner.scan import run_scan

    with user_errors():
        check_destinations([args.json, args.html, args.junit, args.prometheus],
                           [args.tailoring, args.snapshot, args.sosreport])
    catalogue = load_rules()
    profile, assignments = args.profile, list(args.set)
    if args.tailoring:
        profile, tailored = _read_tailoring(catalogue, args.tailoring)
        assignments = [*tailored, *assignments]
    started = time.monotonic()
    with user_errors(), debug_log(args.verbose):
        result = run_scan(catalogue, profile, assignments, args.root, args.role,
                          reframe=args.sos.reframe if args.sos else None)
    duration = time.monotonic() - started
    data = with_source(result.to_dict(), args)
    to_stdout = STDOUT in (args.json, args.html, args.junit, args.prometheus)
    outputs: list[tuple[str, Any]] = []
    if args.json:
        outputs.append((args.json, lambda: json_output.dumps(data)))
    if args.html or args.junit:
        from .reports.loading import from_json
        host = from_json(data, data["host"]["root"] if args.root != "/" else "this host",
                         catalogue)
        if args.html:
            outputs.append((args.html, lambda: html_page([host], catalogue, fleet=False)))
        if args.junit:
            from .reports.junit import render_junit
            outputs.append((args.junit, lambda: render_junit([host])))
    if args.prometheus:
        from .reports import prometheus
        outputs.append((args.prometheus, lambda: prometheus.render(data, duration, __version__)))
    # Files first: a reader that closes the pipe early (| head, | grep -q) must not cost them.
    for destination, render in sorted(outputs, key=lambda output: output[0] == STDOUT):
        if destination == STDOUT and not args.quiet:
            _table(data, catalogue, to_stdout, args.verbose)
        with user_errors(), _pipe_may_close():
            write_output(destination, render())
    if not to_stdout and not args.quiet:
        _table(data, catalogue, to_stdout, args.verbose)
    if result.exit_status:
        return EXIT_FINDINGS
    return EXIT_OK if judged_count(data["summary"]) else EXIT_NOTHING_JUDGED


def _table(data: dict[str, Any], catalogue: Any, to_stderr: bool, verbose: bool) -> None:
    from rich.console import Console

    from .reports import terminal

    class PipeTolerantConsole(Console):
        def on_broken_pipe(self) -> None:
            # rich's own answer is SystemExit(1), which would turn the scan's verdict into a
            # usage error: the rest of the table goes nowhere instead.
            self.quiet = True
            _stdout_to_devnull()

    with _pipe_may_close():
        terminal.render(data, PipeTolerantConsole(stderr=to_stderr, **console_options()),
                        catalogue, verbose)


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

    with user_errors():
        check_destinations([args.json, args.html], [])
    if args.jobs is not None and not 1 <= args.jobs <= 1024:
        raise UsageError("--jobs must be between 1 and 1024")
    catalogue = load_rules()
    console = Console(stderr=True, **console_options())
    try:
        request = Request(roles=args.roles, dirs=args.dirs,
                          size=parse_size(args.size) if args.size else None, jobs=args.jobs,
                          block=parse_size(args.block) if args.block else None,
                          method=args.method, buffered=args.buffered,
                          concurrent=args.concurrent, dry_run=args.dry_run, quiet=args.quiet)
        with user_errors():
            result = run_iotest(catalogue, args.profile, args.set, request, console)
    except (PlanError, FioError) as exc:
        raise UsageError(str(exc)) from exc
    if args.dry_run:
        from .reports.escaping import for_terminal_lines
        sys.stdout.write(for_terminal_lines(dry_run_text(request.plans)))
        return EXIT_OK
    data = result.to_dict()
    if not args.quiet:
        print_measurements(data, Console(stderr=STDOUT in (args.json, args.html),
                                         **console_options()))
    if args.json:
        with user_errors():
            write_output(args.json, json_output.dumps(data))
    if args.html:
        from .reports.loading import from_json
        host = from_json(data, "this host", catalogue)
        with user_errors():
            write_output(args.html, html_page([host], catalogue, fleet=False))
    rule = next((r for r in data["rules"] if r["id"] == "sas_fs_throughput"), None)
    return EXIT_FINDINGS if rule and rule["result"] in ("fail", "error") else EXIT_OK


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
    from .remediations.xccdf_fixes import xccdf_fix_texts

    catalogue = load_rules()
    with user_errors():
        target = build(catalogue, Path(args.output) if args.output else default_output(),
                       *xccdf_fix_texts(catalogue))
    print(target)
    return EXIT_OK


@rooted
def _tailor(args: argparse.Namespace) -> int:
    from datetime import datetime, timezone

    from .content.build import build_time
    from .content.tailoring import write_tailoring
    from .outputs import STDOUT, check_destinations, write_output
    from .scanner.scan import site_values

    catalogue = load_rules()
    with user_errors():
        check_destinations([args.output], [args.snapshot, args.sosreport])
        values = site_values(catalogue, args.profile, args.set, args.root)
        # When it was written (SOURCE_DATE_EPOCH for a reproducible file), and the data
        # stream it tailors, as SCAP Workbench names it
        written = build_time() if os.environ.get("SOURCE_DATE_EPOCH") else datetime.now(
            timezone.utc)
        data = write_tailoring(catalogue, args.profile, values, written,
                               benchmark_href=INSTALLED_DATASTREAM)
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


COMMANDS = {"scan": _scan, "build": _build, "tailor": _tailor, "fix": fix_command, "report": report_command,
            "diff": diff_command,
            "collect": _collect, "scan-snapshots": _scan_snapshots, "iotest": _iotest,
            "rules": rules_command,
            "explain": explain_command}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
    except Exception:  # not the user's input (that is a UsageError): a bug, shown as one
        import traceback

        traceback.print_exc()
        print(f"sascheck: internal error: a bug in sascheck {__version__}, not in what you "
              "gave it; please report it with the traceback above", file=sys.stderr)
        return EXIT_BUG
