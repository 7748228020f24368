"""udev rules files.

Sample (seed 003, a flash array)::

    ACTION=="add|change", SUBSYSTEM=="block", ENV{ID_VENDOR}=="XtremIO", ATTR{queue/scheduler}="noop"
    ACTION=="add|change", SUBSYSTEM=="block", ENV{ID_VENDOR}=="XtremIO", ATTR{bdi/read_ahead_kb}="16384"

A rule is one logical line (a trailing backslash continues it) of
comma-separated ``KEY[{attr}] op "value"`` pairs; ``==``/``!=`` match and
``=``, ``+=``, ``:=`` assign. Files guard their rules as udev's own do::

    SUBSYSTEM!="block", GOTO="sas_end"
    KERNEL!="sd*", GOTO="sas_end"
    ATTR{queue/scheduler}="deadline"
    LABEL="sas_end"

so a rule between such a guard and its LABEL only runs where the guard's match held.
"""

from __future__ import annotations

import fnmatch
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
    implied: tuple[UdevPair, ...] = ()  # matches the GOTO guards above it make hold

    @property
    def matches(self) -> tuple[UdevPair, ...]:
        return tuple(p for p in self.pairs if p.op in ("==", "!="))

    @property
    def assignments(self) -> tuple[UdevPair, ...]:
        return tuple(p for p in self.pairs if p.op not in ("==", "!="))

    def match_value(self, key: str) -> str | None:
        for pair in (*self.matches, *self.implied):
            if pair.key == key and pair.op == "==":
                return pair.value
        return None

    @property
    def guard(self) -> tuple[str, UdevPair] | None:
        """(label, the match that holds after it) for ``KEY!="v", GOTO="label"``."""
        goto = [p for p in self.assignments if p.key == "GOTO"]
        if len(goto) == 1 and len(self.pairs) == 2 and self.matches[0].op == "!=":
            negated = self.matches[0]
            return goto[0].value, UdevPair(negated.key, negated.attr, "==", negated.value)
        return None

    def assigned_attr(self, *attrs: str) -> str | None:
        for pair in self.assignments:
            if pair.key == "ATTR" and pair.attr in attrs:
                return pair.value
        return None


def parse_udev_rules(text: str) -> list[UdevRule]:
    rules: list[UdevRule] = []
    guards: dict[str, list[UdevPair]] = {}  # open GOTO label -> matches that hold until it
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
            rule = UdevRule(tuple(pairs), start, tuple(p for pairs_ in guards.values()
                                                       for p in pairs_))
            for label in [p.value for p in pairs if p.key == "LABEL"]:
                guards.pop(label, None)
            if rule.guard is not None:
                label, holds = rule.guard
                guards.setdefault(label, []).append(holds)
            rules.append(rule)
    return rules


# Kernel names of whole disks and of partitions, to see what a KERNEL== glob can match.
DISK_NAMES = ("sda", "sdb", "sdaa", "dm-0", "dm-12", "vda", "xvda", "nvme0n1", "md0", "hda")
PARTITION_NAMES = ("sda1", "sdb2", "sdaa1", "vda1", "xvda1", "nvme0n1p1", "md0p1", "hda1")


def _matches_any(pattern: str, names: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, alternative) for alternative in pattern.split("|")
               for name in names)


def is_block_rule(rule: UdevRule) -> bool:
    """Whether the rule reaches a whole disk's queue/: SUBSYSTEM=="block" (its own or a
    guard's), or, with no SUBSYSTEM match, a KERNEL glob that matches disk names; a rule
    matching partitions only (KERNEL=="sd*[0-9]", ENV{DEVTYPE}=="partition") never does."""
    kernel = rule.match_value("KERNEL")
    if kernel is not None and not _matches_any(kernel, DISK_NAMES):
        return False
    devtype = next((p.value for p in (*rule.matches, *rule.implied)
                    if p.key == "ENV" and p.attr == "DEVTYPE" and p.op == "=="), None)
    if devtype is not None and "disk" not in devtype.split("|"):
        return False
    subsystem = rule.match_value("SUBSYSTEM")
    if subsystem is not None:
        return "block" in subsystem.split("|")
    return kernel is not None and not any(p.key == "SUBSYSTEM" for p in rule.matches)


def partition_only(rule: UdevRule) -> bool:
    """A block rule's matches select partitions alone: its queue/ settings go nowhere."""
    kernel = rule.match_value("KERNEL")
    return kernel is not None and _matches_any(kernel, PARTITION_NAMES) and not _matches_any(
        kernel, DISK_NAMES)
