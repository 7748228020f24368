"""One scan, start to end: site values, facts, evaluation."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any

from ..rules import Catalogue, Rule, parse_assignment, resolve_values
from ..rules.check_kinds import proc_sys_keys
from ..rules.host_layout import SAS_ROLE_VALUES
from . import host_regex
from .engine import ScanResult, evaluate
from .facts import Facts, collect
from .results import RuleResult
from .sources.hostroot import FactError, HostRoot
from .storage.sasdirs import discover


def _values(catalogue: Catalogue, profile_name: str, assignments: Sequence[str]
            ) -> tuple[dict[str, Any], dict[str, str]]:
    profile = catalogue.profile(profile_name)
    cli_values = dict(parse_assignment(text) for text in assignments)
    values = resolve_values(catalogue.variables, [(f"profile {profile.name}", profile.values),
                                                  ("--set", cli_values)])
    origins = {name: f"profile {profile.name}" for name in profile.values}
    origins.update({name: "--set" for name in cli_values})
    return values, origins


def check_values(catalogue: Catalogue, profile_name: str, assignments: Sequence[str]) -> None:
    """KeyError for an unknown profile, SiteValueError for a bad --set."""
    _values(catalogue, profile_name, assignments)


def site_values(catalogue: Catalogue, profile_name: str = "default",
                assignments: Sequence[str] = (), root: str = "/") -> dict[str, Any]:
    """The values a scan of ``root`` would use, with the SAS directories and -BUFSIZE it
    would find (directories resolved inside the root) written in: what a tailoring file for
    oscap needs."""
    values, origins = _values(catalogue, profile_name, assignments)
    host = HostRoot(root)
    discovery = discover(host, values, origins)

    def resolved(paths: Sequence[str]) -> list[str]:
        found = []
        for path in paths:
            try:
                found.append(host.resolve(path))
            except FactError:
                found.append(path)
        return list(dict.fromkeys(found))
    for role, name in SAS_ROLE_VALUES.items():
        values[name] = resolved([d.path for d in discovery.dirs if d.role == role])
    values["scratch_dirs"] = resolved(values.get("scratch_dirs") or [])
    if not values["sas_bufsize_bytes"] and discovery.bufsize:  # oscap cannot read sasv9.cfg
        values["sas_bufsize_bytes"] = discovery.bufsize[0]
    return values


def _sysctl_keys(rules: Sequence[Rule]) -> list[str]:
    return proc_sys_keys((rule.kind, rule.params) for rule in rules)


def collect_snapshot(catalogue: Catalogue, output: IO[bytes], profile_name: str = "default",
                     assignments: Sequence[str] = (), root: str = "/") -> dict[str, Any]:
    """Archive what a scan of ``root`` reads; returns the manifest's host part."""
    from .facts import collect_host
    from .sources.snapshot_write import record, write_snapshot

    profile = catalogue.profile(profile_name)
    values, origins = _values(catalogue, profile_name, assignments)
    host_regex.begin_scan()
    recorder = record(root, values, origins, _sysctl_keys(catalogue.rules_of(profile)))
    info = collect_host(HostRoot(root))
    host = {"hostname": info.hostname, "kernel": info.kernel, "os": info.os, "root": root}
    write_snapshot(recorder, output, host, assignments)
    return host


def run_scan(catalogue: Catalogue, profile_name: str = "default",
             assignments: Sequence[str] = (), root: str = "/", role: str = "auto",
             measure: Callable[[Facts, Mapping[str, Any]], None] | None = None,
             reframe: Callable[[RuleResult], RuleResult] | None = None) -> ScanResult:
    """Raises KeyError (unknown profile), rules.SiteValueError (bad --set) or FactError (bad root).
    ``measure`` adds measurements to the facts before the rules are judged (sascheck iotest);
    ``reframe`` restates a result in the light of where the root came from (a sosreport)."""
    profile = catalogue.profile(profile_name)
    values, origins = _values(catalogue, profile_name, assignments)
    host_regex.begin_scan()
    rules = catalogue.rules_of(profile)
    facts = collect(HostRoot(root), values, origins, role, _sysctl_keys(rules))
    if measure:
        measure(facts, values)
    result = evaluate(catalogue, profile, facts, values)
    if reframe:
        result.results = [reframe(item) for item in result.results]
    return result
