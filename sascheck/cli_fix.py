"""`sascheck fix`: the remediations for what failed, from an earlier scan's results or a
scan now, as bash, an Ansible playbook with its planner, a tuned profile or udev rules."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .cli_common import EXIT_OK, UsageError, load_rules, user_errors
from .cli_roots import rooted, with_source


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
            result = with_source(run_scan(
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
    write_output(output, ansible_playbook(catalogue, fix_input, name))


def fix_command(args: argparse.Namespace) -> int:
    if args.revert:
        return _revert_command(args)
    if not args.output:
        raise UsageError("fix: -o FILE is needed (-o - writes to standard output)")
    if args.fleet:
        from .cli_fleet_fix import fleet_fix_command
        return fleet_fix_command(args)
    return _host_fix_command(args)


def _revert_command(args: argparse.Namespace) -> int:
    """A Tuned CR is undone on the cluster, by deleting it: print that command. The other
    formats undo themselves (the bash script's and the playbook's --revert of the manifest
    they wrote)."""
    if args.format != "tuned-cr":
        raise UsageError("fix --revert is for --format tuned-cr; a bash fix reverts with its "
                         "own --revert MANIFEST, a playbook with --tags revert")
    from .remediations.tuned_cr import revert_command

    print(revert_command())
    return EXIT_OK


@rooted
def _host_fix_command(args: argparse.Namespace) -> int:
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

        count = len(fix_input.rule_ids)
        print(for_terminal(f"{args.output}: {args.format} fix for {count} "
                           f"rule{'' if count == 1 else 's'}"), file=sys.stderr)
        for step in next_steps(args.format, args.output, fix_input):
            print(for_terminal(step), file=sys.stderr)
    return EXIT_OK
