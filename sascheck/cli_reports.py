"""The commands that read results files, report (host and fleet pages, JUnit) and diff, and
the HTML page scan and iotest write. Heavy modules are imported inside the functions."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from .cli_common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_UNREADABLE,
    UsageError,
    load_rules,
    user_errors,
)
from .outputs import console_options


def html_page(hosts: list[Any], catalogue: Any, fleet: bool,
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


def _load_results(catalogue: Any, paths: Sequence[str], unreadable: list[str] | None = None
                  ) -> list[Any]:
    """The hosts of the results files. Where ``unreadable`` is given (a fleet: several files
    or a directory), a file that cannot be read is an error row naming it, and its path is
    added there; otherwise it stops the command with its reason."""
    from rich.progress import Progress

    from .reports.failure import unreadable_file
    from .reports.model import (
        ReportInputError,
        flag_claimed_names,
        load,
        merge_engines,
        merge_measured,
    )

    hosts = []
    files = _result_paths(paths)
    show_progress = len(files) > 20 and sys.stderr.isatty()
    with Progress(transient=True, disable=not show_progress) as progress:
        task = progress.add_task("reading results", total=len(files))
        for path in files:
            try:
                hosts.append(load(path, catalogue))
            except ReportInputError as exc:
                if unreadable is None:
                    raise UsageError(str(exc)) from exc
                unreadable.append(path)
                hosts.append(unreadable_file(path, str(exc), catalogue))
            progress.advance(task)
    # a host's scan and iotest results, and both engines' results, read together are one host
    return flag_claimed_names(merge_engines(merge_measured(hosts)))


def report_command(args: argparse.Namespace) -> int:
    from .outputs import STDOUT, check_destinations, write_output

    if not (args.output or args.failing or args.csv):
        raise UsageError("say what to write: -o FILE.html, --csv FILE or --failing RULE")
    with user_errors():
        check_destinations([args.output, args.junit, args.csv],
                           [*args.results, *args.baseline])
    catalogue = load_rules()
    if args.failing and args.failing not in catalogue.rules:
        raise UsageError(f"unknown rule '{args.failing}' (sascheck rules lists them)")
    unreadable: list[str] = []
    fleet = args.fleet or len(args.results) > 1 or any(os.path.isdir(p) for p in args.results)
    hosts = _load_results(catalogue, args.results, unreadable if fleet else None)
    count = len(hosts)  # the page takes the hosts (see _drained)
    regressed = None
    if args.baseline:
        from .reports import drift
        regressed = drift.regressed(drift.diff(
            _load_results(catalogue, args.baseline, unreadable), hosts))
    with user_errors():
        if args.failing:
            _print_failing(hosts, args.failing)
        if args.csv:
            from .reports.matrix_csv import render_csv
            write_output(args.csv, render_csv(hosts))
        if args.junit:  # first: the page takes the hosts (see _drained)
            from .reports.junit import render_junit
            write_output(args.junit, render_junit(hosts))
        if args.output:
            write_output(args.output, html_page(hosts, catalogue, args.fleet, regressed))
    if args.output and args.output != STDOUT:
        from .reports.escaping import for_terminal

        kind = "fleet report" if args.fleet or count > 1 else "host report"
        print(for_terminal(f"{args.output}: {kind} of {count} host{'s' if count != 1 else ''}"
                           "; open it in a browser"), file=sys.stderr)
    return _said_unreadable(unreadable) or EXIT_OK


# A name ansible-playbook --limit takes as one host, never a pattern (*, ?, [, :, !, &, ~,
# ",", "@" and blanks widen or change a limit).
LIMIT_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}")


def _print_failing(hosts: list[Any], rule_id: str) -> None:
    """The hosts whose RULE failed, by their fleet key (the inventory name where known),
    one a line in name order; a name --limit would read as a pattern is left out, and
    said."""
    from .reports.escaping import for_terminal

    names = sorted({host.inventory or host.name for host in hosts
                    if any(rule.id == rule_id and rule.result == "fail" for rule in host.rules)})
    for name in names:
        if LIMIT_SAFE.fullmatch(name):
            print(name)
        else:
            print(for_terminal(f"sascheck: left out, not a plain host name for --limit: "
                               f"{name!r}"), file=sys.stderr)


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


def diff_command(args: argparse.Namespace) -> int:
    import json

    from .outputs import STDOUT, check_destinations, write_output
    from .reports import drift

    with user_errors():
        check_destinations([args.json, args.html], [args.old, args.new])
    catalogue = load_rules()
    unreadable: list[str] = []
    old = _load_results(catalogue, [args.old], unreadable if os.path.isdir(args.old) else None)
    new = _load_results(catalogue, [args.new], unreadable if os.path.isdir(args.new) else None)
    if not old or not new:
        raise UsageError(f"no results in {args.old if not old else args.new}")
    changes = drift.diff(old, new)
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
