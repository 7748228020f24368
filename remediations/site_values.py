"""The site values a fix reads, derived from the catalogue (issue 47): the values its
shared library always needs, and those each selected rule's kind and parameters name
(``rules.check_kinds.rule_values``), so a new rule's ``value_from`` reaches the bash script,
the playbook's variables and the per-rule XCCDF fixes with no list kept by hand.

Each value is a shell variable named by the value in upper case, set in one of three modes:
literal ('bash', from the site's resolved values), from ``SASCHECK_<NAME>`` in the
environment ('env': the playbook's planner), or from an XCCDF ``<sub>`` ('xccdf'). Whatever
the mode, the script checks each value against its type before using it (``FixValue.check``):
the environment and a tailoring file are untrusted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..rules import Catalogue
from ..rules.check_kinds import KINDS, SAS_DIR_VALUES, rule_values
from ..rules.model import Variable
from ..rules.values import FALSE_WORDS, TRUE_WORDS
from .rendering import FixError, _sh, _yaml_list

# What the bash library reads whatever the rules: the tuned profile it writes carries the
# read-ahead and the dirty ratio and is chosen among the allowed profiles, the udev rules
# name the allowed schedulers, and barriers stay on unless the cache is protected.
LIBRARY_VALUES = ("allowed_schedulers", "allowed_tuned_profiles", "read_ahead_min_kb",
                  "dirty_ratio", "storage_cache_protected")
# The three SAS directory values are one list to the library (role detection, devices).
SAS_DIRS_ENV = "SASCHECK_SAS_DIRS"
# DATA's alone too: a file system holding permanent data is never throw-away scratch.
SAS_DATA_DIRS_ENV = "SASCHECK_SAS_DATA_DIRS"
SUB = "\x00{}\x00"  # marks where an XCCDF <sub> for a site value goes
# A pattern goes into a bash [[ =~ ]] as ERE: only what means the same in Python and ERE.
_PORTABLE_PATTERN = re.compile(r"[A-Za-z0-9 _.,+|()\[\]{}-]*")


@dataclass(frozen=True)
class FixValue:
    """One site value as the fix scripts see it."""

    variable: Variable

    @property
    def name(self) -> str:
        return self.variable.name

    @property
    def shell(self) -> str:
        return self.variable.name.upper()

    @property
    def env(self) -> str:
        return "SASCHECK_" + self.shell

    def assignment(self, mode: str, values: Mapping[str, Any]) -> str:
        """The shell line setting the value in ``mode``."""
        kind, shell = self.variable.type, self.shell
        if mode == "xccdf":
            text = f"'{SUB.format(self.name)}'"
        elif mode == "env":
            text = f'"${{{self.env}:-}}"'
        elif kind in ("strings", "paths"):
            return f"{shell}=({' '.join(_sh(item) for item in values[self.name])})"
        elif kind == "integer":
            return f"{shell}={int(values[self.name])}"
        else:
            return f"{shell}={'true' if values[self.name] else 'false'}"
        return (f"IFS=, read -r -a {shell} <<< {text}" if kind in ("strings", "paths")
                else f"{shell}={text}")

    def check(self) -> str:
        """A command that succeeds when the value is of its type (library: site_*)."""
        variable, shell = self.variable, self.shell
        if variable.type == "integer":
            low = variable.minimum if variable.minimum is not None else 0
            high = variable.maximum if variable.maximum is not None else 2**62
            return f'site_integer {shell} "${shell}" {low} {high}'
        if variable.type == "boolean":
            return f'site_boolean {shell} "${shell}"'
        if variable.type == "paths":  # absolute, one line each (site_paths)
            return f'site_paths {shell} ${{{shell}[@]+"${{{shell}[@]}}"}}'
        pattern = variable.pattern or "[^,]+"
        return (f"site_names {shell} {_sh(pattern)} {variable.min_items} "
                f'${{{shell}[@]+"${{{shell}[@]}}"}}')

    def ansible_default(self, values: Mapping[str, Any]) -> str:
        """The value as YAML for the playbook's defaults."""
        value = values[self.name]
        if self.variable.type in ("strings", "paths"):
            return _yaml_list(value)
        if self.variable.type == "integer":
            return str(int(value))
        return "true" if value else "false"

    def ansible_text(self, expression: str) -> str:
        """A Jinja expression turning ``expression`` (the playbook's value, from the defaults
        or from sascheck_sets, where a string form is NAME=VALUE's text) into the text the
        planner reads; anything else passes through for the planner to refuse. (Lines: for
        the playbook's line length.)"""
        if self.variable.type in ("strings", "paths"):
            return f"[{expression}] | flatten | join(',')"
        if self.variable.type == "boolean":
            return (f"sascheck_boolean_words[{expression} | string | lower]\n"
                    f"| default({expression} | string)")
        return f"{expression} | string"


def boolean_words() -> dict[str, str]:
    """How the playbook reads a boolean given as a word, as ``--set`` does."""
    return {**dict.fromkeys(sorted(TRUE_WORDS), "true"),
            **dict.fromkeys(sorted(FALSE_WORDS), "false")}


def site_lines(catalogue: Catalogue, values: Mapping[str, Any],
               rule_ids: Iterable[str]) -> list[str]:
    """The playbook's site values for one host, as YAML lines: its SAS directories by role
    and every value its fix reads (host paths !unsafe, never templated)."""
    lines = [f"{name}: {_yaml_list(values[name])}" for name in SAS_DIR_VALUES]
    return lines + [f"{value.name}: {value.ansible_default(values)}"
                    for value in fix_values(catalogue, rule_ids)]


def _fix_value(catalogue: Catalogue, name: str) -> FixValue:
    variable = catalogue.variables.get(name)
    if variable is None:
        raise FixError(f"a fix reads site value {name!r}, which rules/variables.yml lacks")
    if variable.pattern and not _PORTABLE_PATTERN.fullmatch(variable.pattern):
        raise FixError(f"site value {name}: pattern {variable.pattern!r} is not one bash reads "
                       "as Python does")
    return FixValue(variable)


def rule_fix_values(catalogue: Catalogue, rule_id: str) -> tuple[str, ...]:
    """The site values one rule's fix reads beyond the library's (none where a person fixes
    it): those its kind and parameters name, the SAS directories aside."""
    rule = catalogue.rules[rule_id]
    if rule.manual_fix or not KINDS[rule.kind].automatic_fix:
        return ()
    return tuple(name for name in rule_values(KINDS[rule.kind], rule.params)
                 if name not in SAS_DIR_VALUES and name not in LIBRARY_VALUES)


def fix_values(catalogue: Catalogue, rule_ids: Iterable[str] = (),
               library: bool = True) -> list[FixValue]:
    """The library's values (with ``library``), then those the rules add, once each."""
    names = list(LIBRARY_VALUES) if library else []
    for rule_id in rule_ids:
        names += [name for name in rule_fix_values(catalogue, rule_id) if name not in names]
    return [_fix_value(catalogue, name) for name in names]


def sas_dirs_line(mode: str, sas_dirs: Iterable[str], data_dirs: Iterable[str] = ()) -> str:
    """SAS_DIRS: the SAS directories of every role, as one list; SAS_DATA_DIRS: DATA's."""
    if mode == "xccdf":
        dirs = ",".join(SUB.format(name) for name in SAS_DIR_VALUES)
        return (f"IFS=, read -r -a SAS_DIRS <<< '{dirs}'\n"
                f"IFS=, read -r -a SAS_DATA_DIRS <<< '{SUB.format('sas_data_dirs')}'")
    if mode == "env":
        return (f'IFS=, read -r -a SAS_DIRS <<< "${{{SAS_DIRS_ENV}:-}}"\n'
                f'IFS=, read -r -a SAS_DATA_DIRS <<< "${{{SAS_DATA_DIRS_ENV}:-}}"')
    return (f"SAS_DIRS=({' '.join(_sh(path) for path in sas_dirs)})\n"
            f"SAS_DATA_DIRS=({' '.join(_sh(path) for path in data_dirs)})")
