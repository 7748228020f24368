"""The fleet matrix as CSV (issue 38): one line per host and rule, for a spreadsheet."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from .model import HostView

# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection):
# every column may come from a host (an ARF's rule ids and results too), so such a cell is
# written with a leading apostrophe, whichever column it is in.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(text: str) -> str:
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def render_csv(hosts: Iterable[HostView]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["host", "rule", "result", "actual"])
    for host in hosts:
        for rule in host.rules:
            writer.writerow([_cell(text) for text in (host.inventory or host.name, rule.id,
                                                      rule.result, rule.actual or rule.message)])
    return out.getvalue()
