"""A host that could not be scanned: the record the agentless fleet scan writes for it (its
collection failed on the host, or its snapshot could not be scanned on the controller), and
the report row that shows it. Every rule of its profile is an error naming the failure, so
a fleet page counts it and a fleet never loses a host silently."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..rules import Catalogue
from .identity import controller_inventory
from .model import (
    FAILURE_SCHEMA,
    HostView,
    ReportInputError,
    RuleView,
    with_catalogue,
)

STAGES = ("collect", "scan")
UNREADABLE = "results file unreadable"
MAX_REASON = 4000


def failure_record(host: str, stage: str, reason: str, source: str,
                   profile: str = "default") -> dict[str, Any]:
    return {"schema": FAILURE_SCHEMA, "host": {"hostname": host, "inventory_name": host},
            "stage": stage,
            "reason": reason[:MAX_REASON], "source": source, "profile": profile,
            "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())}


def _text(data: dict[str, Any], key: str, path: str, limit: int) -> str:
    value = data.get(key, "")
    if not isinstance(value, str) or len(value) > limit:
        raise ReportInputError(f"{path}: failure record: '{key}' is not a string of at most "
                               f"{limit} characters")
    return value


def unreadable_file(path: str, reason: str, catalogue: Catalogue) -> HostView:
    """A results file of a fleet that could not be read (not JSON, non-finite numbers, the
    wrong schema, over the size caps, an ARF that is not one): one error row naming the file
    and why, so that the fleet's other hosts are reported as usual."""
    name = Path(path).name
    problem = f"{UNREADABLE}: {reason[:MAX_REASON]}"
    view = HostView(name=name, source="sascheck", path=path, problems=[problem],
                    unreachable=problem)
    view.rules = [with_catalogue(RuleView(id=rule.id, title="", severity="", result="error",
                                          message=problem), catalogue)
                  for rule in catalogue.rules_of(catalogue.profile("default"))]
    return view


def is_unreadable_file(host: HostView) -> bool:
    """The error row of a results file that could not be read (unreadable_file's)."""
    return host.unreachable.startswith(UNREADABLE)


def from_failure(data: dict[str, Any], path: str, catalogue: Catalogue) -> HostView:
    host = data.get("host")
    if not isinstance(host, dict):
        raise ReportInputError(f"{path}: failure record: 'host' is not an object")
    inventory, identity_problems = controller_inventory(
        path, _text(host, "inventory_name", path, 256))
    name = inventory or _text(host, "hostname", path, 256) or Path(path).name.split(".")[0]
    stage = _text(data, "stage", path, 16)
    if stage not in STAGES:
        raise ReportInputError(f"{path}: failure record: stage {stage[:16]!r} is not one of "
                               f"{', '.join(STAGES)}")
    reason = _text(data, "reason", path, MAX_REASON) or "no reason given"
    profile_name = _text(data, "profile", path, 128) or "default"
    profile = catalogue.profiles.get(profile_name) or catalogue.profile("default")
    problem = f"not scanned: the {stage} failed: {reason}"
    view = HostView(name=name, source="sascheck", path=path, profile=profile.name,
                    inventory=inventory,
                    root=_text(data, "source", path, 4096),
                    scanned_at=_text(data, "recorded_at", path, 64),
                    problems=[*identity_problems, problem],
                    unreachable=f"the {stage} failed: {reason}")
    view.rules = [with_catalogue(RuleView(id=rule.id, title="", severity="", result="error",
                                          message=problem), catalogue)
                  for rule in catalogue.rules_of(profile)]
    return view
