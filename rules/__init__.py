"""The rule catalogue: rule files, site values and profiles, loaded and validated.

The names below are loaded on first use (PEP 562), so that a module needing only
``rules.errors`` (the command line's start, ``sascheck --help``) does not pay for the
loader, its JSON Schema and YAML."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .loader import CatalogueError, load_catalogue
    from .model import HOST_ROLES, Catalogue, Profile, Reference, Rule, Severity, Variable
    from .values import SiteValueError, parse_assignment, resolve_values

_HOMES = {
    "CatalogueError": "loader", "load_catalogue": "loader",
    "HOST_ROLES": "model", "Catalogue": "model", "Profile": "model", "Reference": "model",
    "Rule": "model", "Severity": "model", "Variable": "model",
    "SiteValueError": "values", "parse_assignment": "values", "resolve_values": "values",
}

__all__ = [
    "HOST_ROLES",
    "Catalogue",
    "CatalogueError",
    "Profile",
    "Reference",
    "Rule",
    "Severity",
    "SiteValueError",
    "Variable",
    "load_catalogue",
    "parse_assignment",
    "resolve_values",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    globals()[name] = value
    return value
