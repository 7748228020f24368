"""`sascheck fix --fleet RESULTS_DIR`: one fix for every host of a fleet directory, each
host planned from its own results and keyed by its inventory name (remediations.fleet)."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Mapping
from typing import Any

from .cli_common import EXIT_OK, UsageError, load_rules, user_errors


def _next_steps(fmt: str, directory: str, planned: int) -> list[str]:
    where = shlex.quote(directory.rstrip("/") or "/")
    if fmt == "ansible":
        return [f"next: ansible-playbook -i INVENTORY {where}/sascheck-fix.yml [--limit "
                "@failing.txt] --check, then without --check (the playbook refuses, by name, "
                "each host it has no plan for)"]
    return [f"next: for each line of {where}/manifest.tsv (inventory name, script, rules), "
            "copy the script to that host and run it there as root with --dry-run, then "
            f"without; e.g. while IFS=$'\\t' read -r host script rules scanned; do scp "
            f"{where}/\"$script\" \"$host\":; done < {where}/manifest.tsv"] if planned else []


def fleet_fix_command(args: argparse.Namespace) -> int:
    from .outputs import write_output
    from .private_output import private_directory
    from .remediations import fleet
    from .remediations.generate import (
        ansible_planner,
        bash_script,
        fix_input_from_result,
        fleet_playbook,
    )
    from .reports.escaping import for_terminal

    if args.format not in ("bash", "ansible"):
        raise UsageError("--fleet writes bash scripts or an Ansible playbook: --format bash "
                         "or ansible")
    catalogue = load_rules()

    def plan(result: Mapping[str, Any]) -> Any:
        return fix_input_from_result(catalogue, result, profile=args.profile,
                                     assignments=args.set, role=args.role,
                                     everything=args.all, only=args.rule)

    with user_errors():
        hosts = fleet.read_fleet(args.fleet, plan, args.max_age)
        planned = [(host.name, host.fix) for host in hosts if host.fix is not None]
        with private_directory(args.output) as out:
            if args.format == "bash":
                def script_of(name: str) -> str:
                    return f"{name}.sh"
                for name, fix in planned:
                    write_output(str(out / script_of(name)), bash_script(catalogue, fix), 0o755)
            else:
                def script_of(name: str) -> str:
                    return f"{fleet.PLANNERS}/{name}.sh"
                (out / fleet.PLANNERS).mkdir()
                for name, fix in planned:
                    write_output(str(out / script_of(name)), ansible_planner(catalogue, fix),
                                 0o755)
                write_output(str(out / fleet.PLAYBOOK), fleet_playbook(
                    catalogue, [(name, script_of(name), fix) for name, fix in planned],
                    [(host.name, host.refused) for host in hosts if host.fix is None],
                    args.profile or "each host's own"))
            listed, refused = fleet.manifest(hosts, script_of)
            write_output(str(out / fleet.MANIFEST), listed)
            write_output(str(out / fleet.REFUSED), refused)
    print(for_terminal(f"{args.output}: {args.format} fix for {len(planned)} hosts, "
                       f"{len(hosts) - len(planned)} refused"), file=sys.stderr)
    for host in hosts:
        if host.fix is None:
            print(for_terminal(f"refused {host.name}: {host.refused}"), file=sys.stderr)
    for step in _next_steps(args.format, args.output, len(planned)):
        print(for_terminal(step), file=sys.stderr)
    return EXIT_OK
