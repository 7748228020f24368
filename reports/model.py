"""One host's results, whichever engine produced them: sascheck JSON or oscap ARF."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..rules import Catalogue
from ..rules.errors import UserInputError
from ..scanner.results import JUDGED

SEVERITY_ORDER = ("high", "medium", "low")
RESULT_ORDER = ("fail", "error", "unknown", "notchecked", "pass", "informational",
                "notapplicable", "notselected")
TAILORED_SUFFIX = "_tailored"
THROUGHPUT_RULE = "sas_fs_throughput"
FAILURE_SCHEMA = "sascheck-failure/1"  # a host the fleet scan could not scan (failure.py)


class ReportInputError(UserInputError):
    """A results file that cannot be read, with the reason."""


# What oscap's ARF may say of a rule (XCCDF 1.2 result values).
XCCDF_RESULTS = frozenset({*RESULT_ORDER, "fixed"})


def host_key(inventory: str, name: str) -> str:
    """One host, one key: its inventory name, else (a file a person passed) its name."""
    return "inventory:" + inventory if inventory else "name:" + name.strip().lower()


@dataclass
class RuleView:
    id: str
    title: str
    severity: str
    result: str
    expected: str = ""
    actual: str = ""
    message: str = ""
    evidence: list[dict[str, str]] = field(default_factory=list)
    references: list[dict[str, str]] = field(default_factory=list)
    rationale: str = ""
    description: str = ""
    # What the papers measured for it (a failing rule, sascheck JSON), and its place in
    # the results' fix order (rules outside it after those in it)
    impact: dict[str, Any] | None = None
    fix_rank: int = 1 << 20
    fix_step: str = ""  # its step in the fix order (scanner.fix_order.FIX_STEPS), or ""
    fix_reason: str = ""  # why it sits there, in this release's words (step_reasons)


@dataclass
class HostView:
    name: str
    source: str  # sascheck | oscap
    path: str
    profile: str = ""
    kernel: str = ""
    os: str = ""
    root: str = ""
    role: str = ""
    role_reasons: list[str] = field(default_factory=list)
    role_forced: bool = False  # the scan was given --role; its fix must be too
    # Not scanned: why (a failure record of the fleet scan: its collection or scan failed)
    unreachable: str = ""
    cpus: int | None = None
    memory_kib: int | None = None
    scanned_at: str = ""
    sas_dirs: list[dict[str, str]] = field(default_factory=list)
    storage: list[dict[str, Any]] = field(default_factory=list)
    # What the scan could not read or place (missing SAS directories, unreadable files)
    problems: list[str] = field(default_factory=list)
    discovery_notes: list[str] = field(default_factory=list)  # e.g. DATA is not named
    rules: list[RuleView] = field(default_factory=list)
    # sascheck iotest's measurements, and the per-core targets they were judged against
    measurements: list[dict[str, Any]] = field(default_factory=list)
    io_targets: dict[str, int] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)  # the site values (sascheck JSON)
    # The same host's results from the other engine, read together: what they say beside
    # these (one host is one row, whichever engines scanned it)
    other_engines: list[str] = field(default_factory=list)
    # The name the fleet's inventory gives the host (the fleet's key for it), where known;
    # ``claimed`` is the name the host gave itself, which a hostile host chooses.
    inventory: str = ""
    claimed: str = ""
    tuned_version: str = ""  # the installed tuned's release, where the scan knew it
    tuned_active: str = ""  # the profile(s) tuned runs or starts with, where known
    # what the scan read when not a live host or a directory root: "snapshot" or
    # "sosreport", whose archive ``root`` then names
    source_kind: str = ""

    @property
    def key(self) -> str:
        return host_key(self.inventory, self.name)

    def slowest_per_core(self) -> float | None:
        """The lowest write or read MB/s per core measured on any file system (fleet column)."""
        rates = [float(m[rw]["mb_s"]) / max(int(m["cores"]), 1)
                 for m in self.measurements for rw in ("write", "read")]
        return min(rates) if rates else None

    def count(self, result: str) -> int:
        return sum(1 for rule in self.rules if rule.result == result)

    @property
    def judged(self) -> int:
        return sum(1 for rule in self.rules if rule.result in JUDGED)

    @property
    def score(self) -> int | None:
        """Percent of judged rules that pass; None when nothing was judged (a host not
        scanned among them)."""
        if self.unreachable or not self.judged:
            return None
        return round(100 * self.count("pass") / self.judged)

    @property
    def score_class(self) -> str:
        """Green only when every rule was judged and nearly all pass; no score is neutral."""
        score = self.score
        if score is None:
            return "score-none"
        if score < 60:
            return "score-bad"
        return "score-mid" if score < 90 or self.not_judged else "score-good"

    @property
    def not_judged(self) -> int:
        return sum(1 for rule in self.rules if rule.result in ("notchecked", "unknown"))

    def shared_messages(self, at_least: int = 3) -> dict[str, list[str]]:
        """Reasons that several rules give alike (DATA not named, a role the rules do not
        apply to): said once at the top, not on each rule."""
        found: dict[str, list[str]] = {}
        for rule in self.rules:
            if rule.message and rule.result != "pass":
                found.setdefault(rule.message, []).append(rule.id)
        return {message: ids for message, ids in found.items() if len(ids) >= at_least}

    def failed_by_severity(self) -> dict[str, int]:
        """Failures by severity; none for a host not scanned (its rules' errors say why it
        is unreachable, not what failed)."""
        return {severity: 0 if self.unreachable else
                sum(1 for rule in self.rules if rule.severity == severity
                    and rule.result in ("fail", "error"))
                for severity in SEVERITY_ORDER}

    @property
    def badness(self) -> tuple[int, ...]:
        """Sort key: worst hosts first (most high, then medium, then low failures)."""
        failed = self.failed_by_severity()
        return tuple(-failed[s] for s in SEVERITY_ORDER)

    def sorted_rules(self) -> list[RuleView]:
        return sorted(self.rules, key=lambda r: (RESULT_ORDER.index(r.result)
                                                 if r.result in RESULT_ORDER else 99,
                                                 r.fix_rank, _severity_rank(r.severity), r.id))


def _severity_rank(severity: str) -> int:
    """Known severities in order; one sascheck does not know (a newer data stream's
    ARF) sorts last rather than failing the report."""
    return SEVERITY_ORDER.index(severity) if severity in SEVERITY_ORDER else len(SEVERITY_ORDER)


def with_catalogue(rule: RuleView, catalogue: Catalogue) -> RuleView:
    known = catalogue.rules.get(rule.id)
    if known is not None:
        rule.title = rule.title or known.title
        rule.severity = rule.severity or known.severity.value
        rule.rationale = known.rationale
        rule.description = known.description
        rule.references = rule.references or [r.to_dict() for r in known.references]
    return rule
