"""Site values: typed parsing of `--set NAME=VALUE` and of profile values."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import UserInputError
from .model import Variable


class SiteValueError(UserInputError):
    """A site value with an unknown name or the wrong type."""


# The words a boolean site value may be given as (the fix playbook reads them the same).
TRUE_WORDS = {"true", "yes", "on", "1"}
FALSE_WORDS = {"false", "no", "off", "0"}
# Tab and newline can be in a mount point (the kernel escapes them in /proc/mounts), so a
# path may hold them; no other control character, in a path or a name.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
_ASCII_INTEGER = re.compile(r"[+-]?[0-9]+")


def _split_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def coerce(variable: Variable, raw: Any, origin: str) -> Any:
    """Turn ``raw`` (a CLI string or a YAML value) into the variable's type."""
    name = variable.name
    kind = variable.type
    if kind == "boolean":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in TRUE_WORDS | FALSE_WORDS:
            return raw.strip().lower() in TRUE_WORDS
        raise SiteValueError(f"{origin}: {name} must be true or false, not {raw!r}")
    if kind == "integer":
        if isinstance(raw, bool):
            raise SiteValueError(f"{origin}: {name} must be a whole number, not {raw!r}")
        if isinstance(raw, str) and not _ASCII_INTEGER.fullmatch(raw.strip()):
            raise SiteValueError(f"{origin}: {name} must be a whole number, not {raw!r}")
        try:
            number = int(raw.strip()) if isinstance(raw, str) else int(raw)
        except (TypeError, ValueError, OverflowError):
            raise SiteValueError(f"{origin}: {name} must be a whole number, not {raw!r}") from None
        if isinstance(raw, float) and raw != number:
            raise SiteValueError(f"{origin}: {name} must be a whole number, not {raw!r}")
        if variable.minimum is not None and number < variable.minimum:
            raise SiteValueError(f"{origin}: {name} must be at least {variable.minimum}")
        if variable.maximum is not None and number > variable.maximum:
            raise SiteValueError(f"{origin}: {name} must be at most {variable.maximum}")
        return number
    if kind in ("paths", "strings"):
        if isinstance(raw, str):
            items = _split_list(raw)
        elif isinstance(raw, list) and all(isinstance(item, str) for item in raw):
            items = list(raw)
        else:
            raise SiteValueError(f"{origin}: {name} must be a list of strings, not {raw!r}")
        for item in items:
            # Values end up in shell, YAML, XML and udev text (each escaped for its target).
            if has_control_character(item):
                raise SiteValueError(f"{origin}: {name} has a control character in {item!r}")
            if variable.pattern and not re.fullmatch(variable.pattern, item):
                raise SiteValueError(f"{origin}: {name}: {item!r} is not a valid name "
                                  f"(allowed: {variable.pattern})")
        if len(items) < variable.min_items:
            raise SiteValueError(f"{origin}: {name} needs at least {variable.min_items} "
                              f"item{'s' if variable.min_items > 1 else ''}")
        if kind == "paths":
            for item in items:
                if not item.startswith("/"):
                    raise SiteValueError(f"{origin}: {name} needs absolute paths, not {item!r}")
            items = [posixpath.normpath(item) for item in items]
        return items
    raise SiteValueError(f"{origin}: {name} has unsupported type {kind}")


def has_control_character(text: str) -> bool:
    """True for a character no site value may hold (see _CONTROL)."""
    return _CONTROL.search(text) is not None


def parse_assignment(text: str) -> tuple[str, str]:
    """Split ``NAME=VALUE``; the value may itself contain '='."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise SiteValueError(f"--set {text!r}: expected NAME=VALUE")
    return name.strip(), value


def resolve_values(variables: Mapping[str, Variable],
                   layers: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """Defaults, then each (origin, values) layer in order; later layers win."""
    values = {name: variable.default for name, variable in variables.items()}
    for origin, layer in layers:
        for name, raw in layer.items():
            if name not in variables:
                known = ", ".join(sorted(variables))
                raise SiteValueError(f"{origin}: unknown site value '{name}' (known: {known})")
            values[name] = coerce(variables[name], raw, origin)
    return values
