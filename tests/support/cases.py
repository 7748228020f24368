"""A verdict case: the baseline host with some changes, scanned with some site values, and
the verdict one rule must give (tests/test_verdicts.py; test_parity, test_snapshots and
test_remediations run the same cases through oscap, snapshots and the fixes)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple


class VerdictCase(NamedTuple):
    name: str  # the test id, saying what changed
    rule: str
    changes: dict[str, Any]  # HostSpec fields (tests/support/hosts.py)
    sets: list[str]  # --set NAME=VALUE beyond the baseline's
    expected: str


def cases(raw: Iterable[Sequence[Any]]) -> list[VerdictCase]:
    """Cases written as (name, rule, changes, sets, expected) rows, each checked whole."""
    return [VerdictCase(*row) for row in raw]


def named(all_cases: Iterable[VerdictCase], name: str) -> VerdictCase:
    """The one case of that name (a KeyError naming it where there is none)."""
    for case in all_cases:
        if case.name == name:
            return case
    raise KeyError(f"no verdict case named {name!r}")
