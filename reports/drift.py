"""What changed between two scans of the same hosts (`sascheck diff`, and the fleet report's
--baseline): each rule's verdict and actual value, the profile and the site values, hosts
matched by name, the most recently scanned first.

A change is *worse* when a rule's verdict moves down this scale: pass (and the verdicts that
judge nothing: notapplicable, informational, notselected), notchecked, error or unknown,
fail. Hosts or rules present on one side only are listed, never counted as worse. Results
that could hide a regression are listed as "suspect": a host with more than one result on a
side (the latest is compared), and a scan time in the future or unreadable, which also
counts as worse, so a forged future-dated all-pass file cannot turn a regression green.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from .model import HostView
from .scratch import blob, scratch_db
from .scratch import text as from_blob


class RuleState(NamedTuple):
    """A rule's verdict as diff compares it."""
    id: str
    result: str
    actual: str


@dataclass(frozen=True)
class DiffHost:
    """A host as diff compares it, and no more: what each side's hosts are kept as, on disk
    (issue 52)."""
    name: str
    scanned_at: str
    unreachable: str
    profile: str
    values: Mapping[str, Any]
    rules: tuple[RuleState, ...]


@dataclass(frozen=True)
class PackedHost:
    """A DiffHost as diff keeps it, made where the host was read (a worker): what diff
    reads of it before the join, and the rest packed."""
    name: str
    scanned_at: str
    unreachable: str
    body: bytes

    def host(self) -> DiffHost:
        return _unpacked(self.body)


def packed_host(host: HostView) -> PackedHost:
    view = diff_host(host)
    return PackedHost(view.name, view.scanned_at, view.unreachable, _packed(view))


def diff_host(host: HostView) -> DiffHost:
    return DiffHost(host.name, host.scanned_at, host.unreachable, host.profile, host.values,
                    tuple(RuleState(rule.id, rule.result, rule.actual) for rule in host.rules))


RANK = {"pass": 0, "notapplicable": 0, "informational": 0, "notselected": 0, "fixed": 0,
        "notchecked": 1, "error": 2, "unknown": 2, "fail": 3}
SHOWN_CHARACTERS = 200  # a long actual value or site value is cut for display


@dataclass(frozen=True)
class Change:
    host: str
    scanned_at: str  # the newer scan's time
    rule: str  # a rule id; "" for the host itself (profile, site values, presence)
    field: str  # result | actual | profile | scope | value NAME | rule | host | suspect
    old: str
    new: str
    worse: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _common(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    """Lengths of the longest common prefix and (after it) suffix of two texts, or of two
    lists of words."""
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while (suffix < min(len(old), len(new)) - prefix
           and old[-1 - suffix] == new[-1 - suffix]):
        suffix += 1
    return prefix, suffix


def _shown_pair(before: Any, after: Any) -> tuple[str, str]:
    """Both values for display, cut to SHOWN_CHARACTERS around where they differ: a long
    value keeps the changed part and some context on each side, never only its start."""
    old, new = _text(before), _text(after)
    if max(len(old), len(new)) <= SHOWN_CHARACTERS:
        return old, new
    prefix, suffix = _common(old, new)
    context = SHOWN_CHARACTERS // 5
    start = max(0, prefix - context)
    shown = []
    for text in (old, new):
        end = min(len(text), max(len(text) - suffix + context,
                                 start + SHOWN_CHARACTERS))
        shown.append(("\u2026" if start else "") + text[start:end]
                     + ("\u2026" if end < len(text) else ""))
    return shown[0], shown[1]


def _words(text: str) -> list[str]:
    """A value's words (runs of letters and digits) and every other character alone."""
    words: list[str] = []
    for character in text:
        if character.isalnum() and words and words[-1][-1:].isalnum():
            words[-1] += character
        else:
            words.append(character)
    return words


def _common_words(old: str, new: str) -> tuple[int, int]:
    """As _common, in whole words: 150000 -> 20480 shares no digit worth marking."""
    old_words, new_words = _words(old), _words(new)
    start, end = _common(old_words, new_words)
    return (sum(map(len, old_words[:start])),
            sum(map(len, old_words[len(old_words) - end:])))


def marked(old: str, new: str) -> tuple[str, str, str, str]:
    """(common start, old's changed part, new's changed part, common end): what the drift
    page highlights, compared as words."""
    prefix, suffix = _common_words(old, new)
    return (old[:prefix], old[prefix:len(old) - suffix], new[prefix:len(new) - suffix],
            old[len(old) - suffix:])


def worse(old: str, new: str) -> bool:
    return RANK.get(new, 2) > RANK.get(old, 2)


def compare(old: DiffHost, new: DiffHost) -> list[Change]:
    """What changed on one host, worst first."""
    def change(rule: str, field: str, before: Any, after: Any, bad: bool = False) -> Change:
        return Change(new.name, new.scanned_at, rule, field, *_shown_pair(before, after), bad)

    changes: list[Change] = []
    # A change of profile changes what is judged: flagged, and each rule it adds or takes
    # away said as a change of scope, never as a rule "not scanned".
    scope_changed = bool(old.profile and new.profile and old.profile != new.profile)
    if old.profile != new.profile:
        changes.append(change("", "profile", old.profile, new.profile, scope_changed))
    # oscap's ARF carries no site values: compare them only where both scans have them.
    shared = old.values.keys() | new.values.keys() if old.values and new.values else set()
    for name in sorted(shared):
        if old.values.get(name) != new.values.get(name):
            changes.append(change("", f"value {name}", old.values.get(name, "(unset)"),
                                  new.values.get(name, "(unset)")))
    before = {rule.id: rule for rule in old.rules}
    after = {rule.id: rule for rule in new.rules}
    for rule_id in sorted(before.keys() | after.keys()):
        was, now = before.get(rule_id), after.get(rule_id)
        if was is None and now is not None:
            if scope_changed:
                changes.append(change(rule_id, "scope", f"(not in profile {old.profile})",
                                      now.result))
            else:
                changes.append(change(rule_id, "rule", "(not scanned)", now.result))
        elif now is None and was is not None:
            if scope_changed:
                changes.append(change(rule_id, "scope", was.result,
                                      f"(not in profile {new.profile})"))
            else:
                changes.append(change(rule_id, "rule", was.result, "(not scanned)"))
        elif was is not None and now is not None:
            if was.result != now.result:
                changes.append(change(rule_id, "result", was.result, now.result,
                                      worse(was.result, now.result)))
            if was.actual != now.actual and was.actual and now.actual:
                changes.append(change(rule_id, "actual", was.actual, now.actual))
    return sorted(changes, key=lambda c: (not c.worse, c.rule == "", c.rule, c.field))


FUTURE_SLACK = timedelta(minutes=10)  # clocks of a fleet disagree by this much at most


def _time_problem(host: DiffHost | PackedHost, side: str, now: datetime) -> list[Change]:
    """A scan time in the future or not a time at all: counted as worse, as nothing but
    forgery or a broken clock makes one (a forged future-dated all-pass file would otherwise
    be the one compared)."""
    if host.unreachable and not host.scanned_at:  # a failure record without a time
        return []
    try:
        when = datetime.fromisoformat(host.scanned_at.replace("Z", "+00:00"))
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        problem = "in the future" if when > now + FUTURE_SLACK else ""
    except ValueError:
        problem = "not a time"
    return [Change(host.name, host.scanned_at, "", "suspect", f"scanned_at in {side}",
                   problem, True)] if problem else []


def _reachability(old: DiffHost, new: DiffHost) -> list[Change] | None:
    """A host that could not be scanned on one side is one line, never a regression of each
    rule: unreachable since the failure, or reachable again; unreachable on both sides is no
    change at all. None where both scans read the host."""
    if new.unreachable and old.unreachable:
        return []  # unreachable then and now: nothing changed (issue 48)
    if new.unreachable:
        return [Change(new.name, new.scanned_at, "", "host", "scanned",
                       f"unreachable since {new.scanned_at or 'an unknown time'}: "
                       f"{new.unreachable}")]
    if old.unreachable:
        return [Change(new.name, new.scanned_at, "", "host", "unreachable", "scanned again")]
    return None


_SIDES = """
CREATE TABLE hosts (side INTEGER NOT NULL, seq INTEGER NOT NULL, name BLOB NOT NULL,
                    scanned_at BLOB NOT NULL, body BLOB NOT NULL, PRIMARY KEY (side, seq));
"""
SIDE_NAMES = ("the baseline", "the new results")


def _packed(host: DiffHost) -> bytes:
    return zlib.compress(json.dumps([host.name, host.scanned_at, host.unreachable,
                                     host.profile, host.values, host.rules]).encode(), 1)


def _unpacked(body: bytes) -> DiffHost:
    name, scanned_at, unreachable, profile, values, rules = json.loads(zlib.decompress(body))
    return DiffHost(name, scanned_at, unreachable, profile, values,
                    tuple(RuleState(*rule) for rule in rules))


def diff(old_side: Iterable[HostView | DiffHost | PackedHost],
         new_side: Iterable[HostView | DiffHost | PackedHost],
         now: datetime | None = None) -> list[Change]:
    """Every change across the fleet, the most recently scanned host first. Each side's
    hosts are kept in a scratch database as they come (scratch.py), so two fleets of any
    size are compared in bounded memory; for each name on a side the latest scan is
    compared. Results that could hide a regression are listed as suspect: one host scanned
    more than once on a side (a results directory may keep older scans, but a forged file
    with a later time would be the one compared), and a scan time in the future or not a
    time at all (_time_problem)."""
    now = now or datetime.now(timezone.utc)
    db = scratch_db(_SIDES)
    try:
        changes: list[Change] = []
        for side, hosts in enumerate((old_side, new_side)):
            timing: list[Change] = []
            pending: list[tuple[Any, ...]] = []
            for seq, host in enumerate(hosts):
                view = diff_host(host) if isinstance(host, HostView) else host
                timing += _time_problem(view, SIDE_NAMES[side], now)
                pending.append((side, seq, blob(view.name), blob(view.scanned_at),
                                view.body if isinstance(view, PackedHost) else _packed(view)))
                if len(pending) >= 1024:
                    db.executemany("INSERT INTO hosts VALUES (?,?,?,?,?)", pending)
                    pending = []
            db.executemany("INSERT INTO hosts VALUES (?,?,?,?,?)", pending)
            changes += [Change(from_blob(name), from_blob(latest), "", "suspect",
                               f"{count} results in {SIDE_NAMES[side]}",
                               "the latest scanned_at is compared; check the others")
                        for name, count, latest in db.execute(
                            "SELECT name, COUNT(*), MAX(scanned_at) FROM hosts WHERE side = ? "
                            "GROUP BY name HAVING COUNT(*) > 1 ORDER BY name", (side,))]
            changes += timing
        # Each name's latest scan on each side (the first of equal times).
        db.execute("""CREATE TABLE newest AS SELECT side, name, scanned_at, body FROM (
            SELECT *, ROW_NUMBER() OVER (PARTITION BY side, name
                                         ORDER BY scanned_at DESC, seq) AS place FROM hosts)
            WHERE place = 1""")
        db.execute("CREATE INDEX by_name ON newest (name, side)")
        for side, (was, now_is) in enumerate(((("scanned", "(missing)")),
                                              ("(missing)", "scanned"))):
            changes += [Change(from_blob(name), from_blob(when), "", "host", was, now_is)
                        for name, when in db.execute(
                            "SELECT name, scanned_at FROM newest a WHERE side = ? AND NOT EXISTS "
                            "(SELECT 1 FROM newest b WHERE b.name = a.name AND b.side = ?) "
                            "ORDER BY name", (side, 1 - side))]
        for old_body, new_body in db.execute(
                "SELECT a.body, b.body FROM newest a JOIN newest b ON a.name = b.name "
                "WHERE a.side = 0 AND b.side = 1 ORDER BY a.name"):
            old, new = _unpacked(old_body), _unpacked(new_body)
            reached = _reachability(old, new)
            changes.extend(compare(old, new) if reached is None else reached)
    finally:
        db.close()
    # Stable sorts: newest scan first, then host name; each host keeps worst-first order.
    changes.sort(key=lambda c: c.host)
    changes.sort(key=lambda c: c.scanned_at, reverse=True)
    return changes


def regressed(changes: Iterable[Change]) -> dict[str, set[str]]:
    """host -> the rules whose verdict got worse."""
    found: dict[str, set[str]] = {}
    for change in changes:
        if change.worse and change.rule:  # a suspect file is diff's to show, not a rule's
            found.setdefault(change.host, set()).add(change.rule)
    return found
