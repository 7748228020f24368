"""The command a report's copy button gives for one rule's bash fix (host and fleet pages)."""

from __future__ import annotations

import shlex

from ..rules.host_layout import SAS_PATH_VALUES
from .model import HostView


def fix_command_parts(host: HostView) -> list[str]:
    """The one command that writes a rule's whole bash fix (its library included) for the
    host the report is of and runs it, in the pieces that go between the rule's id: on the
    host itself, or on the directory root scanned, with the SAS directories the scan was
    given. Every host value is shell-quoted; rule ids (^[a-z][a-z0-9_]*$) need no quoting,
    so the joined command is what shlex.join would make of it."""
    args = []
    offline = bool(host.root) and host.root != "/"
    if offline:
        args += ["--root", host.root]
    for name in SAS_PATH_VALUES:
        value = host.values.get(name)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            args += ["--set", f"{name}={','.join(value)}"]
    run = f"SASCHECK_ROOT={shlex.quote(host.root)} bash" if offline else "bash"
    return ["sascheck fix --format bash --rule ",
            "".join(f" {shlex.quote(arg)}" for arg in args) + " -o sascheck-fix-",
            f".sh && {run} sascheck-fix-", ".sh"]


def fix_command(host: HostView, rule_id: str) -> str:
    """fix_command_parts joined around one rule's id."""
    return rule_id.join(fix_command_parts(host))
