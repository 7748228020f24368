"""Where SAS Viya 3.x's CAS server keeps its disk cache: ``CAS_DISK_CACHE`` in the CAS
configuration of each instance (``/opt/sas/viya/config/etc/cas/<instance>/``).

The deployment playbook writes vars.yml's ``CAS_CONFIGURATION: env:`` entries into the Lua
configuration as ``env.NAME = 'value'`` (sassoftware/sas-container-recipes 77b78b9,
docs/wiki/Build-and-Run-SAS-Viya-Single-Container.md lines 52-67: "The env section will
create a env.VARIABLE in the file; Example: env.CAS_DISK_CACHE = '/tmp'"); a site adds its
own in ``casconfig_usermods.lua`` (Lua) or ``cas_usermods.settings`` (shell, sourced by
``cas.settings``: the same repository's util/programming-only-single/entrypoint line 567).
The value is one directory or several separated by colons::

    env.CAS_DISK_CACHE = '/sastmp/cascache/d1:/sastmp/cascache/d2'
    export CAS_DISK_CACHE=/sastmp/cascache/d1

Only literal values are taken: a Lua expression or a shell expansion is reported, not
guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NAME = "CAS_DISK_CACHE"

# Lua: env.CAS_DISK_CACHE = '...' (or "..."), a trailing -- comment allowed.
_LUA_ASSIGNMENT = re.compile(r"^\s*env\s*(?:\.\s*CAS_DISK_CACHE|\[\s*(['\"])CAS_DISK_CACHE\1\s*\])"
                             r"\s*=(?!=)\s*(.*?)\s*$")
_LUA_LITERAL = re.compile(r"""^(?:'([^'\\]*)'|"([^"\\]*)")\s*;?\s*(?:--.*)?$""")
# Lua block comments (--[[ ... ]], --[==[ ... ]==]) blanked, newlines kept.
_LUA_BLOCK_COMMENT = re.compile(r"--\[(=*)\[.*?\]\1\]", re.DOTALL)
# Shell: [export] CAS_DISK_CACHE=value, the value bare or in one pair of quotes.
_SHELL_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?CAS_DISK_CACHE=(.*?)\s*$")
_SHELL_LITERAL = re.compile(r"""^(?:'([^']*)'|"([^"$`\\]*)"|([^\s'"$`\\;&|<>()]*))"""
                            r"""\s*(?:;\s*)?(?:#.*)?$""")


@dataclass(frozen=True)
class CacheSetting:
    """One assignment of CAS_DISK_CACHE: its directories, or why they cannot be read."""
    line: int
    paths: tuple[str, ...]
    problem: str = ""


def _split(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(":") if part.strip())


def lua_settings(text: str) -> list[CacheSetting]:
    """Each ``env.CAS_DISK_CACHE = ...`` of a Lua configuration file, in order."""
    cleaned = _LUA_BLOCK_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    found = []
    for number, line in enumerate(cleaned.splitlines(), start=1):
        match = _LUA_ASSIGNMENT.match(line)
        if not match:
            continue
        literal = _LUA_LITERAL.match(match.group(2))
        if literal:
            value = literal.group(1) if literal.group(1) is not None else literal.group(2)
            found.append(CacheSetting(number, _split(value)))
        else:
            found.append(CacheSetting(number, (), "not a plain Lua string"))
    return found


def shell_settings(text: str) -> list[CacheSetting]:
    """Each ``[export] CAS_DISK_CACHE=...`` of a shell settings file, in order."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue
        match = _SHELL_ASSIGNMENT.match(line)
        if not match:
            continue
        literal = _SHELL_LITERAL.match(match.group(1))
        if literal:
            value = next((group for group in literal.groups() if group is not None), "")
            found.append(CacheSetting(number, _split(value)))
        else:
            found.append(CacheSetting(number, (), "not a literal value (an expansion or "
                                      "several words)"))
    return found
