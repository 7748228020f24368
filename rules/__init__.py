"""The rule catalogue: rule files, site values and profiles, loaded and validated."""

from __future__ import annotations

from .loader import CatalogueError, load_catalogue
from .model import HOST_ROLES, Catalogue, Profile, Reference, Rule, Severity, Variable
from .values import SiteValueError, parse_assignment, resolve_values

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
