"""Checks that settings come back after a reboot: THP (tuned, kernel command line, tmpfiles,
ktune, init scripts); read-ahead and schedulers are in io_boot.py.

Seed 000 §5.4: read-ahead set with blockdev is lost at boot, and tuned turns THP
back on, so a setting only counts when something re-establishes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...rules.host_layout import (
    GRUB_DEFAULTS,
)
from .. import linear_re as re
from ..boot.loader import BootSource
from ..boot.writers import EARLY, SysfsWrite
from ..facts import Facts
from ..parsers.boot import arg_value
from ..results import Evidence, Outcome, Verdict, combine
from ..tuned.active import TunedFacts
from ..unavailable import Unavailable

TUNED_THP_KEYS = ("transparent_hugepages", "transparent_hugepage")


def enabled_tuned(facts: Facts) -> TunedFacts | None:
    tuned = facts.tuned
    if isinstance(tuned, Unavailable) or not tuned.enabled_at_boot:
        return None
    return tuned


def tuned_unknown(facts: Facts) -> Evidence | None:
    """An error item where tuned starts at boot but what its profile sets cannot be told
    (the active profile or a profile of its chain cannot be read): a rule whose verdict
    tuned could change is then not judged from what little was read."""
    tuned = enabled_tuned(facts)
    if tuned is None:
        return None
    if isinstance(tuned.active, Unavailable):
        reason = tuned.active.reason
    elif tuned.chain.unreadable:
        reason = "; ".join(tuned.chain.problems)
    else:
        return None
    return Evidence("tuned profile", tuned.active_source, "unreadable", Verdict.ERROR,
                    f"{reason}: what tuned sets at boot cannot be told")


THP_FILE = re.compile(r"/sys/kernel/mm/(?:redhat_)?transparent_hugepage/(enabled|defrag)")
# tuned's [vm] options for each THP file (plugin_vm.py; transparent_hugepage.defrag since 2.11)
TUNED_THP_OPTIONS = {"enabled": TUNED_THP_KEYS, "defrag": ("transparent_hugepage.defrag",)}
# Options a tuned release before these ignores (plugin_vm.py: v2.7.0 adds the
# transparent_hugepage alias, v2.11.0 the defrag command; an older tuned logs an unknown
# option and sets nothing).
TUNED_OPTION_SINCE = {"transparent_hugepage": (2, 7), "transparent_hugepage.defrag": (2, 11)}
# plugin_vm.py from v2.5.0 leaves THP enabled alone where /proc/cmdline has
# transparent_hugepage=; tuned 2.4 writes its own value over the command line's.
TUNED_THP_CMDLINE_WINS_SINCE = (2, 5)


def tuned_ignores(tuned: TunedFacts, key: str) -> str | None:
    """Why the installed tuned ignores [vm] ``key``, or None when it honours it (or its
    version is unknown)."""
    since = TUNED_OPTION_SINCE.get(key)
    if since is None or tuned.honours(since) is not False:
        return None
    return (f"tuned {tuned.release} ignores {key} (honoured from {since[0]}.{since[1]}; "
            f"{tuned.version_source})")


def _thp_writes(facts: Facts, name: str) -> list[SysfsWrite]:
    return [write for write in facts.boot_writes
            if (match := THP_FILE.fullmatch(write.path)) and match.group(1) == name]


def _tuned_option(facts: Facts, options: tuple[str, ...]) -> tuple[str, str] | None:
    """(value, profile) when the enabled tuned's active chain sets one of ``options``."""
    tuned = enabled_tuned(facts)
    if tuned is None:
        return None
    for key in options:
        setting = tuned.chain.setting("vm", key)
        if setting and tuned_ignores(tuned, key) is None:
            return setting
    return None


def thp_after_boot(facts: Facts, name: str) -> list[Evidence]:
    """What THP ``name`` (enabled or defrag) holds once a boot is over, for each boot entry
    that decides: the kernel command line (``transparent_hugepage=`` sets enabled only),
    then systemd-tmpfiles, then tuned (which leaves enabled alone when the command line sets
    it: plugin_vm.py since tuned 2.5), then RHEL 5/6 ktune, then executable init scripts and
    systemd units, the last to run. tuned before 2.5 writes its value over the command
    line's."""
    writes = _thp_writes(facts, name)
    early = [w for w in writes if w.stage == EARLY]
    late = [w for w in writes if w.stage != EARLY and w.runs]
    tuned = _tuned_option(facts, TUNED_THP_OPTIONS[name])
    ktune = facts.tuned.ktune if not isinstance(facts.tuned, Unavailable) else None
    notes = [f"{w.source} writes {w.value} but is {w.why_not}" for w in writes
             if w.stage != EARLY and not w.runs]
    active_tuned = enabled_tuned(facts)
    chain = active_tuned.chain if active_tuned else None
    notes.extend(f"tuned profile {profile} [{unit}] sets {value}, not applied here: {why}"
                 for option in (TUNED_THP_OPTIONS[name] if chain else ())
                 for unit, value, profile, why in (chain.not_applied("vm", option)
                                                   if chain else ()))
    for option in (TUNED_THP_OPTIONS[name] if active_tuned and chain else ()):
        setting = chain.setting("vm", option) if chain else None
        why = tuned_ignores(active_tuned, option) if active_tuned else None
        if setting and why:
            notes.append(f"tuned profile {setting[1]} [vm] sets {option}={setting[0]}, but {why}")
    cmdline_wins = active_tuned is None or active_tuned.honours(
        TUNED_THP_CMDLINE_WINS_SINCE) is not False
    boot = facts.boot
    entries: list[BootSource | None] = list(boot.deciding) if name == "enabled" else []
    items = []
    for entry in entries or [None]:
        value, source, entry_notes = None, "kernel default", list(notes)
        cmdline = arg_value(list(entry.args), "transparent_hugepage") if entry else None
        if cmdline is not None:
            value, source = cmdline, entry.path if entry else ""
        elif entry is not None and boot.loader == "grub2" and any(
                arg_value(list(t.args), "transparent_hugepage") for t in boot.templates):
            entry_notes.append(f"{GRUB_DEFAULTS} sets transparent_hugepage= but the menu GRUB "
                               "reads was not regenerated: run grub2-mkconfig (or grubby "
                               "--update-kernel=ALL --args=...)")
        if early:
            value, source = early[-1].value, early[-1].source
        if tuned is not None:
            if name == "enabled" and cmdline is not None and cmdline_wins:
                entry_notes.append(f"tuned profile {tuned[1]} sets {tuned[0]}, ignored: the "
                                   "kernel command line sets transparent_hugepage=")
            else:
                if name == "enabled" and cmdline is not None and active_tuned:
                    entry_notes.append(
                        f"tuned {active_tuned.release} writes its "
                        f"{tuned[0]} over the command line's {cmdline} (tuned leaves a "
                        "command line's value alone from 2.5)")
                value, source = tuned[0], f"tuned profile {tuned[1]} [vm]"
        if ktune and ktune.enabled:  # its start() functions, in the order ktune runs them
            writes_here = [w for w in ktune.thp_writes if w.file == name]
            if writes_here:
                value, source = writes_here[-1].value, writes_here[-1].source
                if writes_here[-1].call:
                    entry_notes.append(f"{ktune.enabled} runs {writes_here[-1].call} at every "
                                       "boot, after the command line and tuned")
            entry_notes.extend(ktune.undefined_calls)
        later = bool(late) or bool(ktune and ktune.enabled and any(
            w.file == name for w in ktune.thp_writes))
        if late:
            value, source = late[-1].value, late[-1].source
        subject = f"THP {name} after boot" + (f" ({entry.path})" if len(entries) > 1 and entry
                                              else "")
        unknown = tuned_unknown(facts)
        if unknown and not later and not (name == "enabled" and cmdline is not None
                                          and cmdline_wins):
            items.append(replace(unknown, subject=subject))  # tuned's may be the last word
            continue
        items.append(Evidence(subject, source, value or "not set: the kernel's default",
                              Verdict.PASS if value == "never" else Verdict.FAIL,
                              "; ".join(entry_notes)))
    return items


def thp_at_boot(params: Mapping[str, Any], facts: Facts, values: Mapping[str, Any]) -> Outcome:
    expected = ("THP enabled never after boot, and defrag never where enabled is not "
                "(kernel command line, tmpfiles.d, tuned, ktune, init script or systemd unit)")
    enabled = thp_after_boot(facts, "enabled")
    defrag = thp_after_boot(facts, "defrag")
    if all(item.verdict == Verdict.PASS for item in enabled):
        # No huge page is allocated while enabled is never: defrag is moot (seed 000 and Red
        # Hat's transparent_hugepage=never set enabled alone).
        defrag = [item if item.verdict == Verdict.PASS else Evidence(
            item.subject, item.source, item.actual, Verdict.INFORMATIONAL,
            "; ".join(filter(None, ["moot: THP enabled is never after boot", item.note])))
            for item in defrag]
    evidence = enabled + defrag
    return Outcome(combine(evidence), expected,
                   "; ".join(f"{e.subject}: {e.actual} ({e.source})" for e in evidence),
                   evidence)
