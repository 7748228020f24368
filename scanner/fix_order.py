"""What to fix first (issues 38, 49): every failing rule once, in the steps of a maintenance
window as an expert orders it (each rule's ``fix_step``: safety, the tuned profile, what
overrides it, the rest of the running system, what survives a reboot, mounts, then projects),
within a step by severity, then by a figure the papers print (figures of different metrics
are not compared), then a measured effect without one. A rule that keeps another's setting
across a reboot (``at_boot_of``: THP at boot and THP now) is ranked with it: one action of
the fix covers both; so is a rule whose setting sascheck's tuned profile carries
(``tuned_sets``) with the tuned profile, where the host's tuned loads that profile."""

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


def impact_parts(impact: Mapping[str, Any]) -> tuple[str, str]:
    """An impact (``Impact.to_dict``, or a results file's): the finding, and what was
    measured on what with the source."""
    metric = str(impact.get("metric") or "unspecified")
    measured = "; ".join(filter(None, (
        "metric not named" if metric == "unspecified" else f"metric: {metric}",
        str(impact.get("measured_on") or ""), str(impact.get("source") or ""))))
    return str(impact.get("text", "")), measured


def impact_line(impact: Mapping[str, Any]) -> str:
    """The same as one line: the finding, then (what was measured, the source)."""
    text, measured = impact_parts(impact)
    return f"{text} ({measured})"


PROFILE_RULE = "tuned_profile"


def _groups(failing: list[RuleResult], catalogue: Catalogue,
            profile_joins: frozenset[str]) -> list[list[RuleResult]]:
    """Failing rules joined with the failing rules they are at_boot_of, and those of
    ``profile_joins`` with the tuned profile (union of pairs)."""
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
        if rule_id in profile_joins and PROFILE_RULE in index:
            parent[root(rule_id)] = root(PROFILE_RULE)
    grouped: dict[str, list[RuleResult]] = {}
    for result in failing:
        grouped.setdefault(root(result.rule_id), []).append(result)
    return list(grouped.values())


# The steps of a maintenance window, in order (issue 49), and why a rule sits in each.
FIX_STEPS = {
    "safety": "first: a failure here risks data (barriers off without a protected cache)",
    "base": "the tuned profile first: the steps after it override or add to what it sets",
    "override": "after the tuned profile, which would otherwise undo it",
    "runtime": "the rest of the running system",
    "boot": "what makes the running settings survive a reboot",
    "mounts": "remounts and fstab",
    "project": "planned work, not a window item: it rebuilds storage or hardware settings",
}
STEP_INDEX = {step: index for index, step in enumerate(FIX_STEPS)}


def _rank(group: list[RuleResult], impacts: Mapping[str, dict[str, Any] | None],
          steps: Mapping[str, str]) -> tuple[int, int, str, int, int, str]:
    """Step, then severity, then a figure of the same metric (the larger first), then a
    measured effect without one: figures of different metrics are not compared."""
    measured = [i for r in group if (i := impacts[r.rule_id]) is not None]
    best = max(measured, key=lambda i: i.get("percent", 0), default={})
    percent = int(best.get("percent", 0))
    kind = 0 if percent else 1 if measured else 2
    severity = min(SEVERITY_RANK.get(r.severity, 3) for r in group)
    return STEP_INDEX[_step(group, steps)], severity, str(best.get("metric", "")) if percent else "~", -percent, kind, \
        min(r.rule_id for r in group)


def fix_ranks(order: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Each rule's place in a fix order (results' ``fix_order``), for sorting tables: the
    entry's index, then the rule's place in it (a rule not in the order has none)."""
    return {rule_id: index * 64 + position for index, entry in enumerate(order)
            for position, rule_id in enumerate(entry["rules"])}


def _step(group: list[RuleResult], steps: Mapping[str, str]) -> str:
    """A group's step: its earliest member's (one action mends them all)."""
    return min((steps[r.rule_id] for r in group), key=STEP_INDEX.__getitem__)


def fix_steps(order: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Each rule's step in a fix order (results' ``fix_order``; a step this release does not
    know is left out: the file is not trusted to name one)."""
    return {rule_id: str(entry["step"]) for entry in order
            if entry.get("step") in FIX_STEPS for rule_id in entry.get("rules", [])}


def step_reasons(order: Iterable[Mapping[str, Any]], catalogue: Catalogue) -> dict[str, str]:
    """Why each rule sits where it does in a fix order (results' ``fix_order``), in this
    release's words (the file names rules only; no text of its own is shown): that the tuned
    profile's action sets it too; that another rule's action, in that rule's step, mends it
    (the barrier fix's remount for noatime); the rule's own ``fix_step_why``; else its step's
    reason."""
    reasons = {}
    for entry in order:
        step = entry.get("step")
        if step not in FIX_STEPS:
            continue
        members = [str(rule_id) for rule_id in entry.get("rules", [])]
        joined = set(entry.get("profile_sets") or ()) & set(members)
        known = {rule_id: catalogue.rules[rule_id] for rule_id in members
                 if rule_id in catalogue.rules}
        leader = next((rule_id for rule_id, rule in known.items() if rule.fix_step == step), "")
        for rule_id in members:
            rule = known.get(rule_id)
            if rule_id in joined:
                reasons[rule_id] = f"with {PROFILE_RULE}: {PROFILE_SETS_WHY}"
            elif rule is not None and rule.fix_step != step and leader:
                reasons[rule_id] = (f"mended by the same action as {leader}, whose step it "
                                    f"takes ({step}: {own_reason(known[leader])})")
            elif rule is not None and rule.fix_step_why:
                reasons[rule_id] = rule.fix_step_why
            else:
                reasons[rule_id] = FIX_STEPS[step]
    return reasons


def own_reason(rule: Rule) -> str:
    """Why the rule's own step is where its action sits."""
    return rule.fix_step_why or FIX_STEPS[rule.fix_step]



PROFILE_SETS_WHY = ("sascheck's tuned profile sets it too: the tuned_profile fix writes that "
                    "profile and this host's tuned loads it")


def fix_order(results: Iterable[RuleResult], catalogue: Catalogue, *,
              tuned_loads_profile: bool = False) -> list[dict[str, Any]]:
    """The failing rules in the order to fix them: each entry the rules one action fixes
    (the tuned profile first, runtime rules before the at-boot rule keeping them), its step
    and why it sits there, its impact, and its severity. Where ``tuned_loads_profile`` (tuned
    2 is installed, so the tuned_profile fix writes sascheck's profile and tuned loads it), a
    failing rule whose setting that profile carries (the rule's ``tuned_sets``) is in the
    tuned profile's action: one action, one line (issue 49)."""
    failing = [r for r in results if r.result == Verdict.FAIL and r.rule_id in catalogue.rules]
    impacts = {r.rule_id: impact_of(catalogue.rules[r.rule_id], catalogue) for r in failing}
    steps = {r.rule_id: catalogue.rules[r.rule_id].fix_step for r in failing}
    joins = frozenset(r.rule_id for r in failing if tuned_loads_profile
                      and catalogue.rules[r.rule_id].tuned_sets)
    order = []
    for group in sorted(_groups(failing, catalogue, joins),
                        key=lambda g: _rank(g, impacts, steps)):
        members = sorted(group, key=lambda r: (r.rule_id != PROFILE_RULE,
                                               bool(catalogue.rules[r.rule_id].at_boot_of),
                                               r.rule_id))
        best = next((impacts[r.rule_id] for r in members if impacts[r.rule_id]), None)
        severity = min((r.severity for r in group), key=lambda s: SEVERITY_RANK.get(s, 3))
        step = _step(group, steps)
        sets = [r.rule_id for r in members if r.rule_id in joins
                and any(m.rule_id == PROFILE_RULE for m in members)]
        order.append({"rules": [r.rule_id for r in members], "severity": severity,
                      "step": step, "why": FIX_STEPS[step],
                      **({"profile_sets": sets} if sets else {}),
                      **({"impact": best} if best else {})})
    return order


def catalogue_ranks(catalogue: Catalogue, rule_ids: Iterable[str]) -> dict[str, int]:
    """Each rule's place in the fix order it would have were every one of ``rule_ids``
    failing: a fleet's rule table in the order a window would fix them (rules this release
    does not know last)."""
    known = [rule_id for rule_id in rule_ids if rule_id in catalogue.rules]
    failing = [RuleResult(rule_id, rule.title, rule.severity, Verdict.FAIL, "", "", [], "", [])
               for rule_id in known for rule in (catalogue.rules[rule_id],)]
    return fix_ranks(fix_order(failing, catalogue))
