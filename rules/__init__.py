"""The rule catalogue: rule files, site values and profiles, loaded and validated."""

from __future__ import annotations

from .loader import CatalogueError, load_catalogue
from .model import ROLES, Catalogue, Profile, Reference, Rule, Severity, Variable
from .values import ValueError_, parse_assignment, resolve_values

__all__ = [
    "ROLES",
    "Catalogue",
    "CatalogueError",
    "Profile",
    "Reference",
    "Rule",
    "Severity",
    "ValueError_",
    "Variable",
    "load_catalogue",
    "parse_assignment",
    "resolve_values",
]
