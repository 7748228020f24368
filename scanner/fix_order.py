"""What to fix first (issue 38): every failing rule once, ranked by what the papers measured
it to cost (the rule's ``impact.percent``), then by a measured effect without a figure, then
by severity. A rule that keeps another's setting across a reboot (``at_boot_of``: THP at
boot and THP now) is ranked with it: one action of the fix covers both."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..rules import Catalogue, Rule
from .results import RuleResult, Verdict

SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}


def impact_of(rule: Rule, catalogue: Catalogue) -> dict[str, Any] | None:
    """The rule's measured impact, or that of the runtime rule it keeps at boot."""
    if rule.impact is not None:
        return rule.impact.to_dict()
    for twin in rule.at_boot_of:
        if (other := catalogue.rules.get(twin)) is not None and other.impact is not None:
            return other.impact.to_dict()
    return None


def impact_line(impact: Mapping[str, Any]) -> str:
    """An impact (``Impact.to_dict``, or a results file's) as one line: the finding, then
    what was measured on what, and the source."""
    metric = str(impact.get("metric") or "unspecified")
    measured = "; ".join(filter(None, (
        "metric not named" if metric == "unspecified" else f"metric: {metric}",
        str(impact.get("measured_on") or ""), str(impact.get("source") or ""))))
    return f"{impact.get('text', '')} ({measured})"


def _groups(failing: list[RuleResult], catalogue: Catalogue) -> list[list[RuleResult]]:
    """Failing rules joined with the failing rules they are at_boot_of (union of pairs)."""
    index = {result.rule_id: result for result in failing}
    parent = {rule_id: rule_id for rule_id in index}

    def root(rule_id: str) -> str:
        while parent[rule_id] != rule_id:
            rule_id = parent[rule_id]
        return rule_id

    for rule_id in index:
        for twin in catalogue.rules[rule_id].at_boot_of:
            if twin in index:
                parent[root(rule_id)] = root(twin)
    grouped: dict[str, list[RuleResult]] = {}
    for result in failing:
        grouped.setdefault(root(result.rule_id), []).append(result)
    return list(grouped.values())


def _rank(group: list[RuleResult], impacts: Mapping[str, dict[str, Any] | None]
          ) -> tuple[int, int, int, str]:
    measured = [impacts[r.rule_id] for r in group if impacts[r.rule_id] is not None]
    percent = max((i.get("percent", 0) for i in measured if i), default=0)
    kind = 0 if percent else 1 if measured else 2
    severity = min(SEVERITY_RANK.get(r.severity, 3) for r in group)
    return kind, -percent, severity, min(r.rule_id for r in group)


def fix_ranks(order: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Each rule's place in a fix order (results' ``fix_order``), for sorting tables: the
    entry's index, then the rule's place in it (a rule not in the order has none)."""
    return {rule_id: index * 64 + position for index, entry in enumerate(order)
            for position, rule_id in enumerate(entry["rules"])}


def fix_order(results: Iterable[RuleResult], catalogue: Catalogue) -> list[dict[str, Any]]:
    """The failing rules in the order to fix them: each entry the rules one action fixes
    (runtime rules before the at-boot rule keeping them), its impact, and its severity."""
    failing = [r for r in results if r.result == Verdict.FAIL and r.rule_id in catalogue.rules]
    impacts = {r.rule_id: impact_of(catalogue.rules[r.rule_id], catalogue) for r in failing}
    order = []
    for group in sorted(_groups(failing, catalogue), key=lambda g: _rank(g, impacts)):
        members = sorted(group, key=lambda r: (bool(catalogue.rules[r.rule_id].at_boot_of),
                                               r.rule_id))
        best = next((impacts[r.rule_id] for r in members if impacts[r.rule_id]), None)
        severity = min((r.severity for r in group), key=lambda s: SEVERITY_RANK.get(s, 3))
        order.append({"rules": [r.rule_id for r in members], "severity": severity,
                      **({"impact": best} if best else {})})
    return order
