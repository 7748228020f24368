"""The rule catalogue as Markdown, for the README (generated, never edited by hand)."""

from __future__ import annotations

from ..rules import Catalogue
from ..scanner.fix_order import impact_line, impact_of


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown_catalogue(catalogue: Catalogue) -> str:
    lines = ["| id | severity | applies to | passes when | site values | fix | measured | sources |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for rule in catalogue.rules.values():
        sources = "; ".join(ref.citation for ref in rule.references)
        values = ", ".join(f"`{name}`" for name in rule.values) or "none"
        fix = "manual" if rule.manual_fix else "automatic"
        impact = impact_of(rule, catalogue)
        measured = impact_line(impact) if impact else "nothing"
        lines.append(f"| `{rule.id}` | {rule.severity.value} | {', '.join(rule.applies_to)} | "
                     f"{_cell(rule.description)} | {values} | {fix} | {_cell(measured)} | "
                     f"{_cell(sources)} |")
    lines.append("")
    lines.append("Site values (`--set NAME=VALUE`, lists comma-separated):")
    lines.append("")
    lines.append("| value | type | default | meaning |")
    lines.append("| --- | --- | --- | --- |")
    for variable in catalogue.variables.values():
        default = variable.default
        shown = ", ".join(default) if isinstance(default, list) else str(default).lower() \
            if isinstance(default, bool) else str(default)
        lines.append(f"| `{variable.name}` | {variable.type} | {_cell(shown) or '(none)'} | "
                     f"{_cell(variable.description)} |")
    lines.append("")
    lines.append("Profiles: " + "; ".join(f"`{p.name}`: {_cell(p.title)}"
                                         for p in catalogue.profiles.values()) + ".")
    return "\n".join(lines) + "\n"
