"""The rule catalogue as Markdown, for the README (generated, never edited by hand)."""

from __future__ import annotations

from ..rules import Catalogue

SEED_NAMES = {
    "000": "RH SAS 9.2 RA",
    "001": "RH/SAS slides",
    "002": "RH AIM7 RA",
    "003": "SAS/Veritas/EMC XtremIO",
}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown_catalogue(catalogue: Catalogue) -> str:
    lines = ["| id | severity | applies to | passes when | sources |",
             "| --- | --- | --- | --- | --- |"]
    for rule in catalogue.rules.values():
        sources = "; ".join(f"{SEED_NAMES.get(ref.document[:3], ref.document)} §{ref.section}"
                            for ref in rule.references)
        lines.append(f"| `{rule.id}` | {rule.severity.value} | {', '.join(rule.applies_to)} | "
                     f"{_cell(rule.description)} | {_cell(sources)} |")
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
