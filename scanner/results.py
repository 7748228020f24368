"""Results in XCCDF's vocabulary, with expected, actual and per-item evidence."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Verdict(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    UNKNOWN = "unknown"
    NOTAPPLICABLE = "notapplicable"
    NOTCHECKED = "notchecked"
    INFORMATIONAL = "informational"


# The verdicts a score counts: a rule that passed, failed or could not be read. Nothing else
# was judged (notapplicable, notchecked, ...), and nothing judged is never compliant.
JUDGED = (Verdict.PASS.value, Verdict.FAIL.value, Verdict.ERROR.value)


def judged_count(counts: Mapping[str, int]) -> int:
    """How many rules were judged, from counts by verdict (results' ``summary``)."""
    return sum(counts.get(verdict, 0) for verdict in JUDGED)


# How item verdicts combine into a rule verdict (XCCDF AND): fail dominates.
_PRECEDENCE = (Verdict.FAIL, Verdict.ERROR, Verdict.UNKNOWN, Verdict.PASS)


@dataclass(frozen=True)
class Evidence:
    subject: str  # what was judged: a mount point, a device, a CPU, a setting
    source: str  # the file that said so
    actual: str
    verdict: Verdict
    note: str = ""
    device: str = ""  # the block device judged, where there is one

    def to_dict(self) -> dict[str, str]:
        data = {"subject": self.subject, "source": self.source, "actual": self.actual,
                "result": self.verdict.value}
        if self.note:
            data["note"] = self.note
        if self.device:
            data["device"] = self.device
        return data


@dataclass
class Outcome:
    """What a check kind says about one rule on one host."""
    result: Verdict
    expected: str
    actual: str
    evidence: list[Evidence] = field(default_factory=list)
    message: str = ""


def combine(evidence: Iterable[Evidence], if_none: Verdict = Verdict.NOTAPPLICABLE) -> Verdict:
    verdicts = {item.verdict for item in evidence}
    for verdict in _PRECEDENCE:
        if verdict in verdicts:
            return verdict
    return if_none


def combine_judged(evidence: Iterable[Evidence],
                   if_none: Verdict = Verdict.NOTAPPLICABLE) -> Verdict:
    """``combine``, but an item that was not judged keeps a pass from being claimed: the
    rest passing says nothing of it (nothing judged is never a pass)."""
    items = list(evidence)
    result = combine(items, if_none)
    if result == Verdict.PASS and any(item.verdict == Verdict.NOTCHECKED for item in items):
        return Verdict.NOTCHECKED
    return result


def summarise(evidence: list[Evidence]) -> str:
    """A short 'actual' line: the values of the items that did not pass, else all."""
    bad = [e for e in evidence if e.verdict in (Verdict.FAIL, Verdict.ERROR)]
    shown = bad or [e for e in evidence if e.verdict == Verdict.PASS]
    parts = [f"{e.subject}: {e.actual}" for e in shown[:4]]
    if len(shown) > 4:
        parts.append(f"... and {len(shown) - 4} more")
    return "; ".join(parts)


@dataclass
class RuleResult:
    rule_id: str
    title: str
    severity: str
    result: Verdict
    expected: str
    actual: str
    evidence: list[Evidence]
    message: str
    references: list[dict[str, str]]
    # What the papers measured for a failing rule (rules' impact); None: nothing measured
    impact: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            **({"impact": self.impact} if self.impact else {}),
            "id": self.rule_id,
            "title": self.title,
            "result": self.result.value,
            "severity": self.severity,
            "expected": self.expected,
            "actual": self.actual,
            "message": self.message,
            "evidence": [item.to_dict() for item in self.evidence],
            "references": self.references,
        }
