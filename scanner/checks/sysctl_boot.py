"""The value a sysctl key ends with after the next boot: sysctl.d, ktune, tuned (and its
reapply_sysctl), the kernel's own default (content/checks/sysctl_boot.py is the OVAL half)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.check_kinds import sysctl_wanted
from ...rules.host_layout import (
    SYSCTL_BYTES_TWINS,
    TUNED_SYSCTL_MODIFIERS_SINCE,
    TUNED_VM_DIRTY_PERCENT_SINCE,
    TUNED_VM_DIRTY_SINCE,
)
from ..boot.sysctl import kernel_default, kernel_line_sysctl
from ..facts import Facts
from ..parsers.simple import ascii_int
from ..results import Evidence, Outcome, Verdict, combine
from ..tuned.active import TunedFacts
from ..unavailable import Unavailable
from .boot import tuned_unknown
from .kernel import BYTES_NOTE, expected_text, holds

# What a boot leaves a key with (_boot_value): (the key or its byte twin, value, source),
# notes on sources that lose, and the value's bound: "" where it is the value, ">" or "<"
# where it is only at least or at most that (tuned's ">N" over a value not known); or the
# Outcome that it cannot be told.
BootValue = tuple[tuple[str, str, str], list[str], str]
BOUND_SHOWN = {">": " (at least this: tuned raises only)",
               "<": " (at most this: tuned lowers only)"}


def _partial_write(value: str, before: str | None) -> str:
    """What a key of several numbers holds after ``value`` is written over ``before``: the
    kernel's proc_dointvec (kernel/sysctl.c __do_proc_dointvec, which ipc/ipc_sysctl.c's
    kernel.sem handler calls) stores only the numbers given, so "512 32000 256" leaves
    SEMMNI as it was. Unchanged where either is not all numbers, or the earlier value is
    not known (then the value is judged as written)."""
    given, held = value.split(), (before or "").split()
    if (0 < len(given) < len(held) and all(ascii_int(word) is not None for word in given)
            and all(ascii_int(word) is not None for word in held)):
        return " ".join(given + held[len(given):])
    return value


def _tuned_sysctl(value: str, before: str | None, tuned: TunedFacts, source: str,
                  notes: list[str]) -> tuple[str, str, str] | None:
    """(what tuned leaves the key with, the source to show, its bound: BootValue) for a
    profile's [sysctl] value,
    as _process_assignment_modifiers (tuned/plugins/base.py, v2.22.1 lines 466-489) reads
    it against the value the key has when tuned starts (``before``; None: not known); None
    where tuned leaves it as it was."""
    text = value.strip()
    if len(text) < 2 or text[0] not in "<>":
        return value, source, ""
    if tuned.honours(TUNED_SYSCTL_MODIFIERS_SINCE) is False:
        notes.append(f"{source} = {text}: tuned {tuned.release} writes it as it is (its "
                     "[sysctl] reads '>' and '<' from 2.10), which the kernel refuses")
        return None
    number, current = ascii_int(text[1:]), ascii_int(before) if before else None
    if number is None:  # int() fails: tuned writes the text as it is, the kernel refuses it
        notes.append(f"{source} = {text}: not a number after '{text[0]}'; nothing is set")
        return None
    if current is None:
        return str(number), source + BOUND_SHOWN[text[0]], text[0]
    if (number > current) if text[0] == ">" else (number < current):
        return str(number), f"{source} = {text}", ""
    notes.append(f"{source} = {text} leaves {current}, which is already "
                 + ("higher" if text[0] == ">" else "lower"))
    return None


def _boot_value(key: str, expected: str, facts: Facts) -> BootValue | Outcome:
    """The value ``key`` ends with after the next boot (scanner.boot.sysctl's order): the
    last source that sets it wins; nothing: the kernel's default."""
    boot = facts.sysctl_boot
    twin = SYSCTL_BYTES_TWINS.get(key, "")
    found: tuple[str, str, str] | None = None  # (key or its byte twin, value, source)
    bound = ""  # found's bound (BootValue)
    notes: list[str] = []

    def before(name: str) -> str | None:
        """What ``name`` holds when the next source writes it."""
        return (found[1] if found is not None and found[0] == name
                else kernel_default(name, facts.host.kernel))

    def write(name: str, value: str, source: str, limit: str = "") -> None:
        nonlocal found, bound
        if name == key or (name == twin and (ascii_int(value) or 0) > 0):  # 0 is refused
            found, bound = (name, _partial_write(value, before(name)), source), limit

    kernel_line, untold = [], ""
    for name in filter(None, (key, twin)):
        lines, why = kernel_line_sysctl(facts.boot.deciding, facts.host.kernel, name)
        kernel_line += lines
        untold = untold or why
    for line in (*kernel_line, *boot.early, *boot.ktune):
        write(line.key, line.value, line.source)
    tuned = facts.tuned
    if not isinstance(tuned, Unavailable) and tuned.enabled_at_boot and any(
            unit.type == "sysctl" and tuned.chain.applies(unit) is None
            for unit in tuned.chain.units.values()):
        setting = tuned.chain.setting("sysctl", key)
        for name, value, source in _tuned_vm_dirty(tuned, key, notes):
            write(name, value, source)
        for name in filter(None, (twin, key)):
            if profile_setting := tuned.chain.setting("sysctl", name):
                written = _tuned_sysctl(profile_setting[0], before(name), tuned,
                                        f"tuned profile {profile_setting[1]} [sysctl]", notes)
                if written is not None:
                    write(name, *written)
        if boot.reapply_sysctl:
            notes += [why for line, why in boot.reapply_skipped if line.key in (key, twin)]
            for line in boot.reapply:
                if line.key == key and setting and line.value != setting[0]:
                    notes.append(f"tuned's reapply_sysctl puts {line.source} back after "
                                 f"the profile's {setting[0]}")
                write(line.key, line.value, line.source)
        elif setting:
            notes.append(f"reapply_sysctl is off ({boot.reapply_source}): the profile wins")
    unknown = tuned_unknown(facts)
    if unknown:  # tuned's profile, and whether it re-applies sysctl files, cannot be told
        return Outcome(Verdict.ERROR, expected, "unreadable", [unknown],
                       message=unknown.note)
    if found is None and untold:  # nothing later sets it: the kernel line would decide
        return Outcome(Verdict.NOTCHECKED, expected, "unknown", [Evidence(
            key, "kernel line", "unknown", Verdict.NOTCHECKED, untold)], message=untold)
    if found is None and not facts.host.kernel:  # the default is the running kernel's
        why = "nothing sets it at boot, and the kernel's release (so its default) is unknown"
        return Outcome(Verdict.ERROR, expected, "unknown", [Evidence(
            key, "kernel default", "unknown", Verdict.ERROR, why)], message=why)
    if found is None:
        default = kernel_default(key, facts.host.kernel)
        if default is None:
            why = (f"nothing sets it at boot, and the default of kernel {facts.host.kernel} "
                   "is not known")
            return Outcome(Verdict.ERROR, expected, "unknown", [Evidence(
                key, "kernel default", "unknown", Verdict.ERROR, why)], message=why)
        found = (key, default, f"kernel default ({facts.host.kernel})")
        notes.append("nothing sets it at boot")
    return found, notes, bound


def sysctl_at_boot(params: Mapping[str, Any], facts: Facts,
                   values: Mapping[str, Any]) -> Outcome:
    """The value ``key`` ends with after the next boot holds against the site value."""
    key: str = params["key"]
    wanted = sysctl_wanted(params, values)
    expected = expected_text(params, wanted, " after boot")
    boot_value = _boot_value(key, expected, facts)
    if isinstance(boot_value, Outcome):
        return boot_value
    (name, value, source), notes, bound = boot_value
    if name != key:  # the byte twin
        evidence = Evidence(name, source, value, Verdict.PASS, BYTES_NOTE)
        return Outcome(Verdict.PASS, expected, f"{name} = {value} ({source}; reported)",
                       [evidence])
    verdict = Verdict.PASS if holds(params, ascii_int(value), wanted) else Verdict.FAIL
    compare = params.get("compare", "equal")
    settled = verdict == Verdict.PASS and compare == {">": "at_least", "<": "at_most"}.get(bound)
    if bound and not settled:  # a bound that does not settle it: the value before tuned decides
        why = (f"{source}: the value the key has when tuned starts (the kernel's default "
               f"for {facts.host.kernel or 'this kernel'}) is not known, so neither is what "
               "tuned leaves")
        return Outcome(Verdict.NOTCHECKED, expected, "unknown", [Evidence(
            key, source, value, Verdict.NOTCHECKED, why)], message=why)
    evidence = Evidence(key, source, value, verdict, "; ".join(notes))
    return Outcome(verdict, expected, f"{value} ({source})", [evidence])


def sysctl_fields_at_boot(params: Mapping[str, Any], facts: Facts,
                          values: Mapping[str, Any]) -> Outcome:
    """Each field of the value ``key`` ends with after the next boot is at least its site
    value, as the running value's fields are judged."""
    key: str = params["key"]
    names: list[str] = params["fields_from"]
    wanted = [int(values[name]) for name in names]
    expected = f"{key} at least {' '.join(map(str, wanted))} after boot, field by field"
    boot_value = _boot_value(key, expected, facts)
    if isinstance(boot_value, Outcome):
        return boot_value
    (_, value, source), notes, _ = boot_value
    shown = " ".join(value.split())
    fields = [ascii_int(field) for field in value.split()]
    if len(fields) != len(wanted) or None in fields:
        # The kernel would set only the numbers given (proc_dointvec): not a value to judge.
        why = f"{source}: not {len(wanted)} numbers"
        return Outcome(Verdict.ERROR, expected, shown, [Evidence(
            key, source, shown, Verdict.ERROR, why)], why)
    note = "; ".join(notes)
    evidence = [Evidence(f"{key} field {number + 1} ({name})", source, str(field),
                         Verdict.PASS if field is not None and field >= least else Verdict.FAIL,
                         f"at least {least}" + (f"; {note}" if note else ""))
                for number, (name, field, least) in enumerate(zip(names, fields, wanted))]
    return Outcome(combine(evidence), expected, f"{shown} ({source})", evidence)


def _tuned_vm_dirty(tuned: TunedFacts, key: str,
                    notes: list[str]) -> list[tuple[str, str, str]]:
    """What tuned's [vm] plugin writes for ``key`` (vm.dirty_ratio and its byte twin), as
    plugin_vm.py does in the installed version: dirty_ratio and dirty_bytes from 2.25,
    dirty_bytes = N% as dirty_ratio from 2.26. [vm] is applied before [sysctl] in the stock
    profiles' unit order."""
    option = key.removeprefix("vm.")
    twin = SYSCTL_BYTES_TWINS.get(key, "").removeprefix("vm.")
    if not twin:
        return []
    found = []
    for name in (option, twin):
        setting = tuned.chain.setting("vm", name)
        if not setting:
            continue
        value, source = setting[0].strip(), f"tuned profile {setting[1]} [vm] {name}"
        if tuned.honours(TUNED_VM_DIRTY_SINCE) is False:
            notes.append(f"{source}: tuned {tuned.release} ignores it (from 2.25)")
            continue
        if value.endswith("%"):
            if name != twin or tuned.honours(TUNED_VM_DIRTY_PERCENT_SINCE) is False:
                notes.append(f"{source} = {value}: tuned {tuned.release} wants an integer "
                             "there and sets nothing")
                continue
            found.append((key, value[:-1].strip(), f"{source} = {value} (as a ratio)"))
        else:
            found.append((f"vm.{name}", value, source))
    return found
