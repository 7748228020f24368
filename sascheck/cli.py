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
from .cli_catalogue import explain_command, rules_command
from .cli_common import (
    EXIT_BUG,
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    load_rules,
    user_errors,
)
from .cli_parser import build_parser
from .cli_reports import diff_command, html_page, report_command
from .outputs import console_options

# Where the sascheck-content RPM puts the data stream (packaging/sascheck.spec).
INSTALLED_DATASTREAM = "/usr/share/xml/scap/sascheck/content/sascheck-ds.xml"


@contextlib.contextmanager
def _root(args: argparse.Namespace) -> Iterator[str]:
    """The root to read: a directory, this host, or an extracted --snapshot or --sosreport
    (removed after; args.sos holds the sosreport's notes)."""
    args.sos = args.opened_snapshot = None
    if getattr(args, "sosreport", None):
        from .scanner.sources.sosreport import SosreportError
        from .scanner.sources.sosreport import opened as opened_sosreport
        try:
            with opened_sosreport(args.sosreport) as report:
                args.sos = report
                yield report.root
        except SosreportError as exc:
            raise UsageError(str(exc)) from exc
    elif getattr(args, "snapshot", None):
        from .scanner.sources.snapshot import SnapshotError, opened_snapshot
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
        from .scanner.sources.collect_script import SCRIPT
        sys.stdout.write(SCRIPT)
        return EXIT_OK
    if not args.output:
        raise UsageError("collect needs -o FILE.tar.gz (or --script)")
    from .outputs import opened_output
    from .reports.escaping import for_terminal
    from .scanner.scan import collect_snapshot

    catalogue = load_rules()
    _check_root(args.root)
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

    with user_errors():
        check_destinations([args.json, args.html, args.junit, args.prometheus],
                           [args.tailoring, args.snapshot, args.sosreport])
    catalogue = load_rules()
    profile, assignments = args.profile, list(args.set)
    if args.tailoring:
        profile, tailored = _read_tailoring(catalogue, args.tailoring)
        assignments = [*tailored, *assignments]
    started = time.monotonic()
    with user_errors():
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
            _table(data, to_stdout)
        with user_errors(), _pipe_may_close():
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


def for_terminal_lines(text: str) -> str:
    from .reports.escaping import for_terminal
    return "\n".join(for_terminal(line) for line in text.split("\n"))


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
        from .reports.model import from_json
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
    from .remediations.generate import xccdf_fixes

    catalogue = load_rules()
    target = build(catalogue, Path(args.output) if args.output else default_output(),
                   xccdf_fixes(catalogue))
    print(target)
    return EXIT_OK


@_rooted
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

    with user_errors():
        if args.from_json:
            result = read_result(args.from_json)
        else:
            result = _with_source(run_scan(
                catalogue, args.profile or "default", args.set, args.root or "/", args.role,
                reframe=args.sos.reframe if args.sos else None).to_dict(), args)
        return fix_input_from_result(
            catalogue, result, profile=args.profile, assignments=args.set, role=args.role,
            everything=args.all, only=args.rule)


def _fix_outputs(args: argparse.Namespace) -> list[str]:
    """What ``fix`` writes: the output, and an Ansible playbook's planner beside it."""
    from .remediations.generate import planner_name

    if args.format != "ansible" or args.output == "-":
        return [args.output]
    return [args.output, os.path.join(os.path.dirname(args.output), planner_name(args.output))]


def _write_playbook(catalogue: Any, fix_input: Any, output: str) -> None:
    """The playbook and, beside it, the planner it runs on each host (the library once, not
    a copy in the playbook's variables)."""
    from .outputs import STDOUT, write_output
    from .remediations.generate import ansible_planner, ansible_playbook, planner_name

    if output == STDOUT:
        raise UsageError("the playbook runs a planner script written beside it: give -o FILE")
    name = planner_name(output)
    write_output(os.path.join(os.path.dirname(output), name),
                 ansible_planner(catalogue, fix_input), mode=0o755)
    write_output(output, ansible_playbook(catalogue, fix_input, name).rstrip("\n") + "\n")


@_rooted
def _fix(args: argparse.Namespace) -> int:
    from .outputs import STDOUT, check_destinations, write_output
    from .remediations.generate import generate, next_steps

    with user_errors():
        check_destinations(_fix_outputs(args), [args.from_json, args.snapshot, args.sosreport])
    catalogue = load_rules()
    fix_input = _fix_input(catalogue, args)
    with user_errors():
        if args.format == "ansible":
            _write_playbook(catalogue, fix_input, args.output)
        else:
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


COMMANDS = {"scan": _scan, "build": _build, "tailor": _tailor, "fix": _fix, "report": report_command,
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
