"""What every remediation renderer shares: the templates and their jinja2 environment
with the quoting filters (shell, YAML, comments), the bash library, and FixInput, what a
remediation needs from a scan."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from ..reports.escaping import for_terminal
from ..rules.check_kinds import SAS_DIR_VALUES
from ..rules.errors import UserInputError
from ..rules.host_layout import FIX_TUNED_PROFILE, TUNED_PROFILES_SUBDIR

TEMPLATES = Path(__file__).resolve().parent / "templates"
# The bash library, one file per concern, assembled in this order into every script
# (top-level statements run in it: core sets up the run, revert dispatches last).
BASH_LIBRARY = ("core", "files", "host", "mounts", "storage", "boot", "tuned", "sysctl", "accounts",
                "revert")


def bash_library() -> str:
    return "\n".join((TEMPLATES / "bash" / "lib" / f"{part}.sh").read_text(encoding="utf-8")
                     .rstrip("\n") for part in BASH_LIBRARY)


TUNED_PROFILE_NAME = FIX_TUNED_PROFILE  # the profile the fixes write (bash: the same)


class FixError(UserInputError):
    """Nothing to generate, or an unusable input."""


def _sh(value: object) -> str:
    return shlex.quote(str(value))


def _comment(value: object) -> str:
    """Text for a comment line (bash, YAML, udev, tuned): one line, nothing that any of
    them reads as a line break (str.split knows NEL and U+2028 too), controls made visible."""
    return for_terminal(" ".join(str(value).split()))


def _yaml(value: object) -> str:
    """A YAML scalar Ansible will not template: !unsafe with a JSON string."""
    return "!unsafe " + json.dumps(str(value))


def _yaml_list(values: Iterable[object]) -> str:
    return "[" + ", ".join(_yaml(value) for value in values) + "]"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters["sh"] = _sh
    env.filters["comment"] = _comment
    env.filters["yaml"] = _yaml
    env.filters["yaml_list"] = _yaml_list
    env.filters["json"] = json.dumps
    return env


@dataclass(frozen=True)
class FixInput:
    """What a remediation needs from a scan: the host, its role, values, failing rules."""
    host: str
    role: str
    profile: str
    kernel: str
    values: Mapping[str, Any]
    rule_ids: tuple[str, ...]
    storage: tuple[Mapping[str, Any], ...] = ()
    forced_role: str = ""  # --role given to sascheck fix
    # The tuned profiles the host has (results' host.tuned_profiles); None: not recorded.
    tuned_profiles: tuple[str, ...] | None = None
    tuned_new_layout: bool = False  # tuned >= 2.23: profiles under .../tuned/profiles
    tuned_legacy: bool = False  # tuned 0.2 (RHEL 5/6): loads no tuned 2 profile
    tuned_version: tuple[int, ...] | None = None  # (major, minor, patch); None: not known
    # The active profile when it is the site's own: sas-performance includes it (tuned 2),
    # or it stays active (tuned 0.2, which has no include).
    tuned_site_profile: str = ""
    # KEY=VALUE lines for sascheck's profile's [sysctl] (the tuned format): each failing
    # sysctl rule of one value, at its site value (vm.dirty_ratio is the template's own).
    tuned_sysctl: tuple[tuple[str, str], ...] = ()
    # Who the fix is for, checked by the bash fix (and the playbook's planner) before it
    # changes anything: the scanned host's name and machine-id, and the directory root it
    # was scanned at ("" for a live host, a snapshot or a sosreport). Empty: not checked.
    target_hostname: str = ""
    target_machine_id: str = ""
    target_root: str = ""
    # The rules the scan failed: a run names each it leaves unmended (lib/core.sh not_mended).
    failed_rules: tuple[str, ...] = ()

    @property
    def tuned_user_dir(self) -> str:
        return f"/etc/tuned/{TUNED_PROFILES_SUBDIR}" if self.tuned_new_layout else "/etc/tuned"

    @property
    def sas_dirs(self) -> list[str]:
        """Every role's directories (SAS_DIR_VALUES: DATA, WORK, UTILLOC, the CAS cache)."""
        return [path for name in SAS_DIR_VALUES for path in self.values.get(name) or []]
