"""The commands that read results files, report (host and fleet pages, JUnit) and diff, and
the HTML page scan and iotest write. Heavy modules are imported inside the functions."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from . import __version__
from .cli_common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_UNREADABLE,
    UsageError,
    load_rules,
    user_errors,
)
from .outputs import console_options


def html_page(hosts: list[Any], catalogue: Any, fleet: bool) -> str | Iterator[str]:
    from .remediations.generate import rule_snippets
    from .reports.html import render_fleet, render_host

    snippets = rule_snippets(catalogue)
    if fleet or len(hosts) != 1:
        return render_fleet(_drained(hosts), snippets)
    return render_host(hosts[0], snippets)


def _drained(hosts: list[Any]) -> Iterator[Any]:
    """Each host once, let go as soon as the fleet page has taken what it needs from it."""
    hosts.reverse()
    while hosts:
        yield hosts.pop()


RESULT_SUFFIXES = (".json", ".xml")  # sascheck JSON, oscap ARF


class PathList(Sequence[str]):
    """Paths held as one string and their ends: a 100,000-file fleet's list of path objects
    was the largest thing a fleet report's controller kept (issue 52)."""

    def __init__(self, paths: Iterable[str]) -> None:
        from array import array

        pieces: list[str] = []
        self._ends = array("q", [0])
        for path in paths:
            pieces.append(path)
            self._ends.append(self._ends[-1] + len(path))
        self._text = "".join(pieces)

    def __len__(self) -> int:
        return len(self._ends) - 1

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[place] for place in range(*index.indices(len(self)))]
        place = index + len(self) if index < 0 else index
        if not 0 <= place < len(self):
            raise IndexError(index)
        return self._text[self._ends[place]:self._ends[place + 1]]


def _result_paths(paths: Sequence[str]) -> PathList:
    """Files as given; a directory stands for its *.json and *.xml files."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found += sorted(os.path.join(path, name) for name in os.listdir(path)
                            if name.endswith(RESULT_SUFFIXES)
                            and os.path.isfile(os.path.join(path, name)))
        else:
            found.append(path)
    return PathList(found)


def _load_results(catalogue: Any, paths: Sequence[str]) -> list[Any]:
    """The hosts of results files a person named one by one: a file that cannot be read
    stops the command with its reason (a fleet's is an error row: reports/fleet_read.py)."""
    from .reports.loading import load
    from .reports.merging import flag_claimed_names, merge_engines, merge_measured
    from .reports.model import ReportInputError

    hosts = []
    for path in _result_paths(paths):
        try:
            hosts.append(load(path, catalogue))
        except ReportInputError as exc:
            raise UsageError(str(exc)) from exc
    # a host's scan and iotest results, and both engines' results, read together are one host
    return flag_claimed_names(merge_engines(merge_measured(hosts)))


def report_command(args: argparse.Namespace) -> int:
    from .outputs import check_destinations, write_output

    if not (args.output or args.failing or args.csv or args.prometheus):
        raise UsageError("say what to write: -o FILE.html, --csv FILE, --prometheus FILE or "
                         "--failing RULE")
    with user_errors():
        check_destinations([args.output, args.junit, args.csv, args.prometheus],
                           [*args.results, *args.baseline])
    catalogue = load_rules()
    if args.failing and args.failing not in catalogue.rules:
        raise UsageError(f"unknown rule '{args.failing}' (sascheck rules lists them)")
    # A baseline is a fleet's comparison (the page that marks what got worse), even of one host.
    fleet = (args.fleet or bool(args.baseline) or len(args.results) > 1
             or any(os.path.isdir(p) for p in args.results))
    if not fleet:
        hosts = _load_results(catalogue, args.results)
        with user_errors():
            _write_host_outputs(args, hosts, _result_paths(args.results))
            if args.output:
                write_output(args.output, html_page(hosts, catalogue, False))
        _said_written(args.output, "host report", 1)
        return EXIT_OK
    from .reports.fleet_read import read_slim

    paths = _result_paths(args.results)
    unreadable: list[str] = []
    regressed = None
    if args.failing or args.csv or args.junit or args.baseline:
        hosts = read_slim(paths, catalogue, unreadable)  # every verdict, no evidence
        if args.baseline:
            from .reports import drift
            from .reports.fleet_read import diff_side
            regressed = drift.regressed(drift.diff(
                diff_side(_result_paths(args.baseline), catalogue, unreadable), hosts))
        with user_errors():
            _write_host_outputs(args, hosts, paths, prometheus=False)
        del hosts
    if args.prometheus:  # streamed: one host at a time (issue 52)
        from .reports.fleet_read import fleet_metrics
        from .reports.prometheus import render_fleet_stream

        read: list[str] = []
        with user_errors():
            write_output(args.prometheus, render_fleet_stream(
                fleet_metrics(paths, catalogue, read), __version__))
        unreadable = sorted(set(unreadable) | set(read))
    if args.output:
        from .remediations.generate import rule_snippets
        from .reports.fleet import FleetWriter
        from .reports.fleet_read import fill_fleet, inventory_groups
        from .reports.html import fleet_page

        page_unreadable: list[str] = []
        writer = FleetWriter(rule_snippets(catalogue), regressed or {}, inventory_groups(paths))
        plan = fill_fleet(writer, paths, catalogue, page_unreadable)
        try:
            if plan.units_count == 1 and not args.fleet and regressed is None:
                # files of one host (its scan and iotest, both engines): that host's page
                from .reports.failure import is_unreadable_file
                from .reports.fleet_read import hosts_of

                writer.close()
                hosts = hosts_of(next(plan.units()), catalogue)
                unreadable = sorted(set(unreadable) | set(page_unreadable) | {
                    host.path for host in hosts if is_unreadable_file(host)})
                with user_errors():
                    write_output(args.output, html_page(hosts, catalogue, False))
                _said_written(args.output, "host report", 1)
                return _said_unreadable(unreadable) or EXIT_OK
            with user_errors():
                write_output(args.output, fleet_page(writer, regressed is not None))
        finally:
            plan.close()
            writer.close()
        unreadable = sorted(set(unreadable) | set(page_unreadable))
        _said_written(args.output, "fleet report", plan.units_count)
    return _said_unreadable(unreadable) or EXIT_OK


def _write_host_outputs(args: argparse.Namespace, hosts: list[Any], paths: Sequence[str],
                        prometheus: bool = True) -> None:
    from .outputs import write_output

    if args.failing:
        _print_failing(hosts, args.failing, paths)
    if args.csv:
        from .reports.matrix_csv import render_csv
        write_output(args.csv, render_csv(hosts))
    if args.junit:
        from .reports.junit import render_junit
        write_output(args.junit, render_junit(hosts))
    if args.prometheus and prometheus:
        from .reports.prometheus import render_fleet
        write_output(args.prometheus, render_fleet(hosts, __version__))


def _said_written(output: str | None, kind: str, count: int) -> None:
    from .outputs import STDOUT

    if output and output != STDOUT:
        from .reports.escaping import for_terminal

        print(for_terminal(f"{output}: {kind} of {count} host{'s' if count != 1 else ''}"
                           "; open it in a browser"), file=sys.stderr)


def _print_failing(hosts: list[Any], rule_id: str, paths: Sequence[str]) -> None:
    """The hosts whose RULE failed, one name a line, each a name --limit reads as that one
    host alone (reports/failing.py); what is left out is said on stderr, with why."""
    from .reports.escaping import for_terminal
    from .reports.failing import limit_names
    from .reports.fleet_read import inventory_groups

    names, remarks = limit_names(hosts, rule_id, inventory_groups(paths))
    for name in names:
        print(name)
    for remark in remarks:
        print(for_terminal(f"sascheck: {remark}"), file=sys.stderr)


def _said_unreadable(unreadable: list[str]) -> int:
    """Name the results files that could not be read; EXIT_UNREADABLE when there are any."""
    from .reports.escaping import for_terminal

    for path in unreadable[:20]:
        print(for_terminal(f"sascheck: unreadable results (an error row on the page): {path}"),
              file=sys.stderr)
    if len(unreadable) > 20:
        print(f"sascheck: ... and {len(unreadable) - 20} more unreadable results files",
              file=sys.stderr)
    return EXIT_UNREADABLE if unreadable else EXIT_OK


def _load_side(catalogue: Any, path: str, unreadable: list[str]) -> Iterable[Any]:
    """One side of a diff: a directory is a fleet (read on every core, given one host at a
    time, an unreadable file an error row); a file is one host, whose errors stop the
    command."""
    if os.path.isdir(path):
        from .reports.fleet_read import diff_side
        return diff_side(_result_paths([path]), catalogue, unreadable)
    return _load_results(catalogue, [path])


def diff_command(args: argparse.Namespace) -> int:
    import json

    from .outputs import STDOUT, check_destinations, write_output
    from .reports import drift

    with user_errors():
        check_destinations([args.json, args.html], [args.old, args.new])
    catalogue = load_rules()
    unreadable: list[str] = []
    counted = [0, 0]

    def side(index: int) -> Iterator[Any]:
        for host in _load_side(catalogue, (args.old, args.new)[index], unreadable):
            counted[index] += 1
            yield host
    changes = drift.diff(side(0), side(1))
    if not all(counted):
        raise UsageError(f"no results in {args.old if not counted[0] else args.new}")
    if not args.quiet:
        from rich.console import Console

        from .reports.terminal import render_drift
        render_drift(changes, Console(stderr=STDOUT in (args.json, args.html),
                                      **console_options()))
    with user_errors():
        if args.json:
            write_output(args.json, json.dumps(
                {"schema": "sascheck-diff/1", "old": args.old, "new": args.new,
                 "worse": sum(change.worse for change in changes),
                 "changes": [change.to_dict() for change in changes]}, indent=2) + "\n")
        if args.html:
            from .reports.html import render_drift as html_drift
            write_output(args.html, html_drift(changes, args.old, args.new))
    if any(change.worse for change in changes):
        return EXIT_FINDINGS
    return _said_unreadable(unreadable) or EXIT_OK
