"""udev rules files.

Sample (seed 003, a flash array)::

    ACTION=="add|change", SUBSYSTEM=="block", ENV{ID_VENDOR}=="XtremIO", ATTR{queue/scheduler}="noop"
    ACTION=="add|change", SUBSYSTEM=="block", ENV{ID_VENDOR}=="XtremIO", ATTR{bdi/read_ahead_kb}="16384"

A rule is one logical line (a trailing backslash continues it) of
comma-separated ``KEY[{attr}] op "value"`` pairs; ``==``/``!=`` match and
``=``, ``+=``, ``:=`` assign.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PAIR = re.compile(r'\s*([A-Za-z_]+)(?:\{([^}]*)\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*,?')


@dataclass(frozen=True)
class UdevPair:
    key: str
    attr: str | None
    op: str
    value: str


@dataclass(frozen=True)
class UdevRule:
    pairs: tuple[UdevPair, ...]
    line: int

    @property
    def matches(self) -> tuple[UdevPair, ...]:
        return tuple(p for p in self.pairs if p.op in ("==", "!="))

    @property
    def assignments(self) -> tuple[UdevPair, ...]:
        return tuple(p for p in self.pairs if p.op not in ("==", "!="))

    def match_value(self, key: str) -> str | None:
        for pair in self.matches:
            if pair.key == key and pair.op == "==":
                return pair.value
        return None

    def assigned_attr(self, *attrs: str) -> str | None:
        for pair in self.assignments:
            if pair.key == "ATTR" and pair.attr in attrs:
                return pair.value
        return None


def parse_udev_rules(text: str) -> list[UdevRule]:
    rules: list[UdevRule] = []
    pending = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = (pending + line).strip()
        pending = ""
        if not line or line.startswith("#"):
            continue
        pairs = []
        position = 0
        while position < len(line):
            match = _PAIR.match(line, position)
            if not match:
                break
            pairs.append(UdevPair(match.group(1), match.group(2), match.group(3),
                                  match.group(4)))
            position = match.end()
        if pairs:
            rules.append(UdevRule(tuple(pairs), start))
    return rules


def is_block_rule(rule: UdevRule) -> bool:
    subsystem = rule.match_value("SUBSYSTEM")
    return subsystem is not None and "block" in subsystem.split("|")
