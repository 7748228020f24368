"""The commands that show the catalogue: rules (the rules, or the site values) and explain."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .cli_common import EXIT_OK, UsageError, load_rules
from .outputs import console_options


def rules_command(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    catalogue = load_rules()
    if args.values:
        return _site_values(catalogue)
    if args.format == "markdown":
        from .reports.catalogue import markdown_catalogue
        sys.stdout.write(markdown_catalogue(catalogue))
        return EXIT_OK
    console = Console(**console_options())
    if console.width < RULES_TABLE_WIDTH:  # an 80-column pipe: ids whole, titles wrapped below
        from rich.padding import Padding
        from rich.text import Text

        for rule in catalogue.rules.values():
            console.print(Text.assemble(rule.id, "  ", (rule.severity.value, "dim")))
            console.print(Padding(Text(f"{rule.title} ({', '.join(rule.applies_to)})"),
                                  (0, 0, 0, 4), expand=False))
        return EXIT_OK
    table = Table(title="sascheck rules")
    table.add_column("id", no_wrap=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("applies to")
    table.add_column("title")
    for rule in catalogue.rules.values():
        table.add_row(rule.id, rule.severity.value, ", ".join(rule.applies_to), rule.title)
    console.print(table)
    return EXIT_OK


RULES_TABLE_WIDTH = 110  # the widest id, severity and room for titles


def _site_values(catalogue: Any) -> int:
    """Every site value --set takes: its name and type, its default, what it means (one
    block each, names never cut)."""
    from rich.console import Console
    from rich.padding import Padding
    from rich.text import Text

    console = Console(**console_options())
    for variable in catalogue.variables.values():
        default = variable.default
        shown = ",".join(map(str, default)) if isinstance(default, list) else str(default)
        console.print(Text.assemble(variable.name, "  ", (variable.type, "dim"), "  default: ",
                                    shown or "(none)"))
        console.print(Padding(Text(variable.description), (0, 0, 0, 4), expand=False))
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


def explain_command(args: argparse.Namespace) -> int:
    catalogue = load_rules()
    rule = _find_rule(catalogue, args.rule_id)
    lines = [f"{rule.id}: {rule.title}", f"severity: {rule.severity.value}",
             f"applies to: {', '.join(rule.applies_to)}", f"check: {rule.kind}",
             f"site values: {', '.join(rule.values) or '(none)'}",
             f"fix: {'manual: ' + rule.manual_fix if rule.manual_fix else 'automatic'}", "",
             rule.description, "", "Rationale:", rule.rationale, "", "Sources:"]
    lines += [f"  - {ref.citation}" + (f" ({ref.note})" if ref.note else "")
              for ref in rule.references]
    from .scanner.fix_order import impact_line, impact_of, own_reason

    lines += ["", f"Fix step: {rule.fix_step} ({own_reason(rule)})"]
    if rule.tuned_sets:
        lines += [f"Set by sascheck's tuned profile too ({rule.tuned_sets}): where tuned 2 "
                  "loads it, this rule is in the tuned profile's action"]

    impact = impact_of(rule, catalogue)
    lines += ["", "Measured: " + (impact_line(impact) if impact else
                                  "nothing: the papers give no figure for this setting")]
    if not rule.manual_fix:
        from .remediations.generate import rule_snippets

        snippet = rule_snippets(catalogue)[rule.id]
        lines += ["", "Fix (bash):", snippet["bash"], "", "Fix (Ansible):", snippet["ansible"]]
    print("\n".join(lines))
    return EXIT_OK
