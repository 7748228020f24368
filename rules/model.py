"""Typed rule, value and profile records. Plain data: no behaviour beyond lookups."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

ROLES = ("bare_metal", "kvm_guest", "kvm_host", "container")


class Severity(str, Enum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


@dataclass(frozen=True)
class Reference:
    document: str
    section: str
    note: str = ""


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
    sas_filesystems: bool
    source: Path


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


@dataclass
class Catalogue:
    rules: dict[str, Rule]
    variables: dict[str, Variable]
    profiles: dict[str, Profile]
    directory: Path

    def profile(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            known = ", ".join(sorted(self.profiles))
            raise KeyError(f"unknown profile '{name}' (known: {known})") from None

    def rules_of(self, profile: Profile) -> list[Rule]:
        return [self.rules[rule_id] for rule_id in profile.rule_ids]
