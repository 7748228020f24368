"""Reading one host's results file into the report model: sascheck JSON, oscap ARF, or the
record the fleet scan writes for a host it could not scan (failure.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..rules import Catalogue
from ..scanner.fix_order import fix_ranks, fix_steps, step_reasons
from .arf import ArfError, read_arf
from .arf_oval import OvalItem
from .failure import from_failure
from .identity import controller_inventory, fleet_inventory_name
from .model import (
    FAILURE_SCHEMA,
    TAILORED_SUFFIX,
    XCCDF_RESULTS,
    HostView,
    ReportInputError,
    RuleView,
    with_catalogue,
)
from .resultfile import MAX_RESULT_BYTES, ResultFileError, decode_json, validate_result


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
        return from_failure(data, path, catalogue)  # a host the fleet scan could not scan
    return from_json(data, path, catalogue, decoded=True)
