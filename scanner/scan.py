"""One scan, start to end: site values, facts, evaluation."""

from __future__ import annotations

from collections.abc import Sequence

from ..rules import Catalogue, parse_assignment, resolve_values
from .engine import ScanResult, evaluate
from .facts import collect
from .hostroot import HostRoot


def run_scan(catalogue: Catalogue, profile_name: str = "default",
             assignments: Sequence[str] = (), root: str = "/", role: str = "auto") -> ScanResult:
    """Raises KeyError (unknown profile), rules.ValueError_ (bad --set) or FactError (bad root)."""
    profile = catalogue.profile(profile_name)
    cli_values = dict(parse_assignment(text) for text in assignments)
    values = resolve_values(catalogue.variables, [(f"profile {profile.name}", profile.values),
                                                  ("--set", cli_values)])
    origins = {name: f"profile {profile.name}" for name in profile.values}
    origins.update({name: "--set" for name in cli_values})
    rules = catalogue.rules_of(profile)
    sysctl_keys = sorted({str(rule.params["key"]) for rule in rules
                          if rule.kind == "sysctl_value"})
    facts = collect(HostRoot(root), values, origins, role, sysctl_keys)
    return evaluate(catalogue, profile, facts, values)
