"""One host's results, whichever engine produced them: sascheck JSON or oscap ARF."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..rules import Catalogue
from ..rules.errors import UserInputError
from ..scanner.fix_order import fix_ranks, fix_steps, step_reasons
from ..scanner.results import JUDGED
from .arf import ArfError, read_arf
from .arf_oval import OvalItem
from .identity import controller_inventory, fleet_inventory_name
from .resultfile import MAX_RESULT_BYTES, ResultFileError, decode_json, validate_result

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


def from_json(data: dict[str, Any], path: str, catalogue: Catalogue,
              decoded: bool = False) -> HostView:
    """A result's host view; ``decoded``: ``data`` came from decode_json (its surrogates
    replaced there)."""
    try:
        data = validate_result(data, path, decoded)
    except ResultFileError as exc:
        raise ReportInputError(str(exc)) from exc
    try:
        host = data["host"]
        role = data["role"]
        inventory, identity_problems = controller_inventory(path, host.get("inventory_name"))
        view = HostView(
            name=inventory or host.get("hostname") or Path(path).stem, source="sascheck",
            path=path, inventory=inventory, claimed=host.get("hostname", ""),
            profile=data.get("profile", ""), kernel=host.get("kernel", ""),
            os=host.get("os", ""), root=host.get("root", ""), role=role.get("name", ""),
            tuned_version=host.get("tuned_version") or ("0.2 (ktune)" if host.get(
                "tuned_legacy") else ""),
            tuned_active=host.get("tuned_active", ""),
            source_kind=_source_kind(data.get("source")),
            role_forced=role.get("source") == "--role",
            role_reasons=list(role.get("reasons", [])), cpus=host.get("cpus"),
            memory_kib=host.get("memory_kib"), scanned_at=data.get("scanned_at", ""),
            sas_dirs=list(data.get("sas_dirs", [])), storage=list(data.get("storage", [])),
            problems=[*identity_problems, *(str(item) for item in data.get("problems", []))],
            discovery_notes=[str(item) for item in data.get("sas_discovery_notes", [])],
            measurements=list(data.get("measurements", [])),
            io_targets=_io_targets(data.get("values"), catalogue),
            values=dict(data["values"]) if isinstance(data.get("values"), dict) else {})
        ranks = fix_ranks(data.get("fix_order", []))
        steps = fix_steps(data.get("fix_order", []))
        reasons = step_reasons(data.get("fix_order", []), catalogue)
        view.rules = [with_catalogue(RuleView(
            id=r["id"], title=r.get("title", ""), severity=r.get("severity", ""),
            result=r["result"], expected=r.get("expected", ""), actual=r.get("actual", ""),
            message=r.get("message", ""), evidence=list(r.get("evidence", [])),
            references=list(r.get("references", [])), impact=r.get("impact"),
            fix_rank=ranks.get(r["id"], 1 << 20), fix_step=steps.get(r["id"], ""),
            fix_reason=reasons.get(r["id"], "")), catalogue)
            for r in data["rules"]]
    except (KeyError, TypeError, AttributeError) as exc:
        raise ReportInputError(f"{path}: malformed sascheck results ({exc})") from exc
    return view


def _source_kind(source: Any) -> str:
    kind = source.get("kind") if isinstance(source, dict) else None
    return kind if kind in ("snapshot", "sosreport") else ""


IO_TARGETS = ("io_mb_per_core_work", "io_mb_per_core_data", "iotest_min_seconds")


def _io_targets(values: Any, catalogue: Catalogue) -> dict[str, int]:
    """The results' throughput targets where they are whole numbers, else the defaults (the
    file is untrusted: a report must not fail on it)."""
    given = values if isinstance(values, dict) else {}
    targets: dict[str, int] = {}
    for name in IO_TARGETS:
        value = given.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            targets[name] = value
        else:
            targets[name] = int(catalogue.variables[name].default)
    return targets


def arf_host_name(facts: dict[str, str], target: str, path: str) -> str:
    """The name an ARF gives its host: oscap's target facts, its target, else the file's."""
    return (facts.get("asset:identifier:host_name") or facts.get("asset:identifier:fqdn")
            or target or Path(path).stem)


def from_arf(path: str, catalogue: Catalogue) -> HostView:
    try:
        arf = read_arf(path)
    except ArfError as exc:
        raise ReportInputError(str(exc)) from exc
    profile = arf.profile[:-len(TAILORED_SUFFIX)] if arf.profile.endswith(
        TAILORED_SUFFIX) else arf.profile
    name = arf_host_name(arf.facts, arf.target, path)
    system = arf.system
    known = {key: value for key, value in system.items()
             if value and value.lower() != "unknown"}  # oscap's word for what it lacks
    inventory = fleet_inventory_name(path)
    view = HostView(name=inventory or name, source="oscap", path=path, profile=profile,
                    inventory=inventory, claimed=name, scanned_at=arf.start_time, kernel=known.get("kernel", ""),
                    os=" ".join(filter(None, (known.get("os_name"), known.get("os_version"),
                                              known.get("architecture")))))
    unknown = sorted({result for result in arf.results.values()} - XCCDF_RESULTS)
    if unknown:
        raise ReportInputError(f"{path}: rule results that XCCDF does not define: "
                               f"{', '.join(repr(u[:40]) for u in unknown[:3])}")
    view.rules = [with_catalogue(RuleView(
        id=rule_id, title="", severity="", result=result,
        message="from oscap's ARF: the items its OVAL compared" if arf.items.get(rule_id)
        else "from oscap's ARF: no items recorded for this rule",
        evidence=[_arf_evidence(item) for item in arf.items.get(rule_id, [])]), catalogue)
                  for rule_id, result in sorted(arf.results.items())
                  # The profile left it out (a rule of another profile): not a result, as
                  # sascheck's own JSON has none for it.
                  if result != "notselected"]
    for rule in view.rules:
        if rule.id not in catalogue.rules:  # a rule of another sascheck release
            rule.title = rule.title or rule.id
            rule.severity = "unknown"
            rule.message = "a rule this sascheck release does not know; " + rule.message
    return view


# OVAL's word for each tested item (oval-results-5 TestedItemType): whether the item
# satisfied the test's state. The rule's verdict is what judges: a test may count items
# that match a state of what must not be.
ITEM_RESULTS = {"true": "satisfied", "false": "not satisfied"}


def _arf_evidence(item: OvalItem) -> dict[str, str]:
    """One item oscap's OVAL compared: what it is of, what was found, and whether it
    satisfied its test's state, as OVAL decided."""
    return {"subject": item.subject, "actual": item.value,
            "result": ITEM_RESULTS.get(item.result, item.result or "not evaluated"),
            "note": item.test, "source": "oscap OVAL item"}


def read_json_or_arf(path: str) -> Any:
    """A results file's decoded JSON, or None where it is an ARF (told by content: JSON
    may come from a pipe)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(512)
            if head.lstrip().startswith(b"<"):
                return None
            if not head.lstrip().startswith(b"{"):
                raise ReportInputError(f"{path}: neither sascheck JSON nor oscap ARF")
            raw = head + handle.read(MAX_RESULT_BYTES + 1 - len(head))
    except OSError as exc:
        raise ReportInputError(f"{path}: {exc.strerror}") from exc
    if len(raw) > MAX_RESULT_BYTES:
        raise ReportInputError(f"{path}: larger than {MAX_RESULT_BYTES >> 20} MiB; "
                               "not a sascheck result")
    try:
        return decode_json(raw, path)
    except ResultFileError as exc:
        raise ReportInputError(str(exc)) from exc


def load(path: str, catalogue: Catalogue) -> HostView:
    """Read sascheck JSON or oscap ARF."""
    return load_decoded(path, read_json_or_arf(path), catalogue)


def load_decoded(path: str, data: Any, catalogue: Catalogue) -> HostView:
    """The host of ``path`` whose content read_json_or_arf gave as ``data``."""
    if data is None:
        return from_arf(path, catalogue)
    if isinstance(data, dict) and data.get("schema") == FAILURE_SCHEMA:
        from .failure import from_failure  # a host the fleet scan could not scan
        return from_failure(data, path, catalogue)
    return from_json(data, path, catalogue, decoded=True)
