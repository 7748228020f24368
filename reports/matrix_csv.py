"""The fleet matrix as CSV (issue 38): one line per host and rule, for a spreadsheet."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from .model import HostView

# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection):
# host values are untrusted, so such a cell is written with a leading apostrophe.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(text: str) -> str:
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def render_csv(hosts: Iterable[HostView]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["host", "rule", "result", "actual"])
    for host in hosts:
        for rule in host.rules:
            writer.writerow([_cell(host.inventory or host.name), rule.id, rule.result,
                             _cell(rule.actual or rule.message)])
    return out.getvalue()
