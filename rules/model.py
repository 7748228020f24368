"""Typed rule, value and profile records. Plain data: no behaviour beyond lookups."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from .errors import UnknownNameError

HOST_ROLES = ("bare_metal", "kvm_guest", "kvm_host", "container")


class Severity(str, Enum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


@dataclass(frozen=True)
class Source:
    """A published document the rules cite (rules/sources.yml)."""
    id: str
    file: str  # the document's text among the project's seeds, or ""
    title: str
    publisher: str
    year: int
    url: str = ""  # a public page, for a document that is not among the seeds

    @property
    def citation(self) -> str:
        return f"{self.publisher}, {self.title} ({self.year})"


@dataclass(frozen=True)
class Reference:
    source: Source
    section: str
    note: str = ""

    @property
    def citation(self) -> str:
        """How reports cite it: "Red Hat, Optimizing RHEL for SAS 9.2 (2011), §5.3 ..."."""
        return f"{self.source.citation}, §{self.section}"

    def to_dict(self) -> dict[str, str]:
        return {"source": self.source.id, "section": self.section, "citation": self.citation}


@dataclass(frozen=True)
class Impact:
    """What a paper measured the setting to cost or gain (the rule's ``impact``)."""
    text: str
    reference: Reference
    percent: int | None = None  # as the cited section prints it; ranks the fix order
    metric: str = "unspecified"  # elapsed time, system CPU time, AIM7 jobs per minute, ...
    measured_on: str = ""  # the workload, host and release

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "source": self.reference.citation, "metric": self.metric,
                **({"measured_on": self.measured_on} if self.measured_on else {}),
                **({"percent": self.percent} if self.percent is not None else {})}



@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    description: str
    rationale: str
    severity: Severity
    references: tuple[Reference, ...]
    applies_to: tuple[str, ...]
    kind: str
    params: Mapping[str, Any]
    source: Path
    # Derived from the check kind (rules/check_kinds.py) when the rule is loaded:
    sas_filesystems: bool = False  # judges the file systems that hold SAS directories
    values: tuple[str, ...] = ()  # the site values the rule depends on
    needs: tuple[str, ...] = ()  # facts without which it is notapplicable
    manual_fix: str = ""  # what to do by hand; empty when the fix is automatic
    profiles: tuple[str, ...] = ()  # only these profiles select it; () for every profile
    impact: Impact | None = None  # None: the papers measured nothing for it
    at_boot_of: tuple[str, ...] = ()  # the runtime rules it keeps across a reboot
    fix_step: str = "runtime"  # where its action sits in the fix order (FIX_STEPS)
    fix_step_why: str = ""  # why this rule is in that step, where the step's words do not say
    tuned_sets: str = ""  # the "[section] option" of sascheck's tuned profile that sets it

    def selected_by(self, profile: str) -> bool:
        return not self.profiles or profile in self.profiles


@dataclass(frozen=True)
class Variable:
    name: str
    type: str  # paths | strings | integer | boolean
    default: Any
    description: str
    minimum: int | None = None
    maximum: int | None = None
    pattern: str | None = None  # strings: each item must match (a regular expression)
    min_items: int = 0  # paths, strings: the fewest items that make sense


@dataclass(frozen=True)
class Profile:
    name: str
    title: str
    description: str
    rule_ids: tuple[str, ...]
    values: Mapping[str, Any]
    source: Path
    # SAS Viya 4's node pools (workload.sas.com/class values) the profile is for; () for any.
    node_pools: tuple[str, ...] = ()


@dataclass
class Catalogue:
    rules: dict[str, Rule]
    variables: dict[str, Variable]
    profiles: dict[str, Profile]
    directory: Path
    sources: dict[str, Source]

    def profile(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            known = ", ".join(sorted(self.profiles))
            raise UnknownNameError(f"unknown profile '{name}' (known: {known})") from None

    def rules_of(self, profile: Profile) -> list[Rule]:
        return [self.rules[rule_id] for rule_id in profile.rule_ids]
