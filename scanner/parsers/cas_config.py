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

from dataclasses import dataclass

from .. import linear_re as re

NAME = "CAS_DISK_CACHE"

# Each file is read in time linear in its size (a CAS account writes it and root scans it):
# RE2 matches only an assignment's ``NAME =`` prefix, the value is cut and stripped in
# Python, and a block comment's close is found with one str.find.
# Lua: env.CAS_DISK_CACHE = '...' (or "..."), a trailing -- comment allowed.
_LUA_ASSIGNMENT = re.compile(r"""^\s*env\s*(?:\.\s*CAS_DISK_CACHE|\[\s*(?:'CAS_DISK_CACHE'|"""
                             r""""CAS_DISK_CACHE")\s*\])\s*=""")
_LUA_LITERAL = re.compile(r"""^(?:'([^'\\]*)'|"([^"\\]*)")\s*;?\s*(?:--.*)?$""")
# Shell: [export] CAS_DISK_CACHE=value, the value bare or in one pair of quotes.
_SHELL_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?CAS_DISK_CACHE=")
_SHELL_LITERAL = re.compile(r"""^(?:'([^']*)'|"([^"$`\\]*)"|([^\s'"$`\\;&|<>()]*))"""
                            r"""\s*(?:;\s*)?(?:#.*)?$""")


def without_block_comments(text: str) -> str:
    """Lua's block comments (``--[[ ... ]]``, ``--[==[ ... ]==]``) blanked, their line breaks
    kept so that line numbers stay; one left open runs to the end of the file. Each
    character is looked at a bounded number of times."""
    pieces, position = [], 0
    while True:
        start = text.find("--[", position)
        if start < 0:
            break
        level_end = start + 3
        while level_end < len(text) and text[level_end] == "=":
            level_end += 1
        if level_end >= len(text) or text[level_end] != "[":
            pieces.append(text[position:level_end])
            position = level_end
            continue
        close = "]" + "=" * (level_end - start - 3) + "]"
        end = text.find(close, level_end + 1)
        end = len(text) if end < 0 else end + len(close)
        pieces.append(text[position:start])
        pieces.append("\n" * text.count("\n", start, end))
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


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
    found = []
    for number, line in enumerate(without_block_comments(text).splitlines(), start=1):
        match = _LUA_ASSIGNMENT.match(line)
        if not match or line.startswith("=", match.end()):  # '==' compares, not assigns
            continue
        literal = _LUA_LITERAL.match(line[match.end():].strip())
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
        literal = _SHELL_LITERAL.match(line[match.end():].strip())
        if literal:
            value = next((group for group in literal.groups() if group is not None), "")
            found.append(CacheSetting(number, _split(value)))
        else:
            found.append(CacheSetting(number, (), "not a literal value (an expansion or "
                                      "several words)"))
    return found
