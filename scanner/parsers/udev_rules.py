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

As udev runs them (systemd's udev-rules.c): a rule whose matches all hold jumps to its
GOTO's LABEL (a GOTO without a LABEL further down the file is ignored); an unconditional
GOTO leaves the rules up to its LABEL to devices that jumped past them. Each rule keeps the
ways a device can reach it (``reach``: alternatives, each a conjunction of matches that held
or failed on the way), so ``may_reach`` can test it against what is known of a device.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from .. import linear_re as re

_PAIR = re.compile(r'\s*([A-Za-z_]+)(?:\{([^}]*)\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*,?')


@dataclass(frozen=True)
class UdevPair:
    key: str
    attr: str | None
    op: str
    value: str


QUEUE_ATTRS = ("queue/scheduler", "queue/read_ahead_kb", "bdi/read_ahead_kb")
MAX_WAYS = 64  # alternatives kept per rule; past that, a rule is taken as reached by all


def _negated(pair: UdevPair) -> UdevPair:
    return UdevPair(pair.key, pair.attr, "!=" if pair.op == "==" else "==", pair.value)


Way = tuple[UdevPair, ...]  # matches that held (or, negated, failed) on the way


@dataclass(frozen=True)
class UdevRule:
    pairs: tuple[UdevPair, ...]
    line: int
    implied: tuple[UdevPair, ...] = ()  # matches that hold on every way to this rule
    reach: tuple[Way, ...] = ((),)  # the ways a device reaches it; () in it: unconditionally

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
    def goto(self) -> str | None:
        return next((p.value for p in self.assignments if p.key == "GOTO"), None)

    def may_reach(self, device: dict[str, str]) -> bool:
        """Whether a device with these properties (``KEY`` or ``KEY{attr}`` -> value; a
        key left out is unknown and may hold either way) can reach this rule and match it."""
        return any(all(_may_hold(pair, device) for pair in (*way, *self.matches))
                   for way in self.reach)

    @property
    def assigns_queue(self) -> bool:
        """It sets read-ahead or the scheduler (or runs blockdev --setra)."""
        return any((p.key == "ATTR" and p.attr in QUEUE_ATTRS) or
                   (p.key == "RUN" and "--setra" in p.value) for p in self.assignments)

    def assigned_attr(self, *attrs: str) -> str | None:
        for pair in self.assignments:
            if pair.key == "ATTR" and pair.attr in attrs:
                return pair.value
        return None


def _logical_lines(text: str) -> list[tuple[int, list[UdevPair]]]:
    """(first line number, pairs) of each rule, ``\\`` continuations joined."""
    lines: list[tuple[int, list[UdevPair]]] = []
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
        for match in _PAIR.finditer(line):  # one pass: a pair must start where the last ended
            if match.start() != position or match.end() == position:
                break
            pairs.append(UdevPair(match.group(1), match.group(2), match.group(3),
                                  match.group(4)))
            position = match.end()
        if pairs:
            lines.append((start, pairs))
    return lines


def parse_udev_rules(text: str) -> list[UdevRule]:
    """The file's rules that some device can reach, each with the ways it is reached."""
    lines = _logical_lines(text)
    label_lines: dict[str, int] = {}  # the last line of each label
    for index, (_, pairs) in enumerate(lines):
        for pair in pairs:
            if pair.key == "LABEL":
                label_lines[pair.value] = index
    rules: list[UdevRule] = []
    ways: list[Way] = [()]  # how devices arrive at the current line
    jumped: dict[str, list[Way]] = {}  # label -> ways of the devices that jumped to it
    for index, (start, pairs) in enumerate(lines):
        for label in [p.value for p in pairs if p.key == "LABEL"]:
            ways = _bounded(ways + jumped.pop(label, []))
        if not ways:
            continue  # no device gets here: skipped by an unconditional GOTO
        rule = UdevRule(tuple(pairs), start, _common(ways), tuple(ways))
        rules.append(rule)
        target = rule.goto
        if target is None or label_lines.get(target, -1) <= index:
            continue  # udev ignores a GOTO to a label it cannot find further down
        matches = rule.matches
        jumped.setdefault(target, []).extend(way + matches for way in ways)
        # Devices for which some match fails go on: one way per match that can fail.
        ways = _bounded([(*way, _negated(m)) for way in ways for m in matches])
    return rules


def _bounded(ways: list[Way]) -> list[Way]:
    unique = list(dict.fromkeys(ways))
    return unique if len(unique) <= MAX_WAYS else [()]


def _common(ways: list[Way]) -> tuple[UdevPair, ...]:
    first, *rest = ways
    return tuple(p for p in first if all(p in way for way in rest))


def _glob_matches(pattern: str, value: str) -> bool:
    """udev's match: fnmatch against each '|' alternative; an empty pattern matches an
    empty (unset) value."""
    return any(fnmatch.fnmatchcase(value, alternative) if alternative else value == ""
               for alternative in pattern.split("|"))


def _may_hold(pair: UdevPair, device: dict[str, str]) -> bool:
    key = f"{pair.key}{{{pair.attr}}}" if pair.attr is not None else pair.key
    if key not in device:
        return True
    matched = _glob_matches(pair.value, device[key])
    return matched if pair.op == "==" else not matched


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
