"""The command a report's copy button gives for one rule's bash fix (host and fleet pages)."""

from __future__ import annotations

import re
import shlex

from ..rules.host_layout import SAS_PATH_VALUES
from .model import HostView

# Characters a terminal or readline acts on when pasted, even inside quotes: C0 and C1
# controls (tab completes, Ctrl-U kills the line, CR runs it), DEL, and the line separators.
_UNPASTEABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def fix_command_parts(host: HostView) -> list[str] | None:
    """The one command that writes a rule's whole bash fix (its library included) for the
    host the report is of and runs it, in the pieces that go between the rule's id: on the
    host itself, or on the directory root scanned, with the SAS directories the scan was
    given; from a snapshot or sosreport, the command that writes it from the archive and
    the host to run it on. Every host value is shell-quoted; rule ids (^[a-z][a-z0-9_]*$) need no quoting,
    so the joined command is what shlex.join would make of it.

    None where a value holds a control character: shlex.quote keeps Ctrl-U and a carriage
    return inside its quotes, and an interactive bash without bracketed paste (RHEL 7 and
    8) acts on them as they are pasted, running what follows. Such a host gets no command
    to copy (its generic rule fix, which carries no host value, is still shown)."""
    args = []
    # A snapshot or sosreport is a copy of another host: the fix is written from it, and
    # runs there (it refuses any other host), not on the copy.
    archive = host.source_kind in ("snapshot", "sosreport") and bool(host.root)
    offline = bool(host.root) and host.root != "/" and not archive
    if archive:
        args += [f"--{host.source_kind}", host.root]
    elif offline:
        args += ["--root", host.root]
    # The scan's choices, so the fix judges as it did (without them it may find nothing).
    if host.profile and host.profile != "default":
        args += ["--profile", host.profile]
    if host.role_forced and host.role:
        args += ["--role", host.role]
    for name in SAS_PATH_VALUES:
        value = host.values.get(name)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            args += ["--set", f"{name}={','.join(value)}"]
    target = host.inventory or host.name
    if any(_UNPASTEABLE.search(arg) for arg in [*args, target]):
        return None
    written = ["sascheck fix --format bash --rule ",
               "".join(f" {shlex.quote(arg)}" for arg in args) + " -o sascheck-fix-"]
    # The next step the terminal gives: a dry run first, then the same without --dry-run.
    if archive:  # a shell comment: pasted, it runs nothing
        return [*written, ".sh  # then, as root on "
                f"{shlex.quote(target)}: bash sascheck-fix-", ".sh --dry-run, then without"]
    run = f"SASCHECK_ROOT={shlex.quote(host.root)} bash" if offline else "bash"
    return [*written, f".sh && {run} sascheck-fix-",
            ".sh --dry-run  # then the same without --dry-run, as root"]


def fix_command(host: HostView, rule_id: str) -> str | None:
    """fix_command_parts joined around one rule's id (None: no command to copy)."""
    parts = fix_command_parts(host)
    return rule_id.join(parts) if parts is not None else None


def step_command(host: HostView, step: str, rule_ids: list[str]) -> str | None:
    """The command fixing one step of the window alone (issue 49): its rules' whole fix,
    written as sascheck-fix-STEP.sh and dry-run, as the terminal's step line gives it."""
    parts = fix_command_parts(host)
    if parts is None or not rule_ids:
        return None
    # the parts go around a rule id after --rule, then around the script's name, twice
    return parts[0] + " --rule ".join(rule_ids) + step.join(parts[1:])
