"""Checks that settings come back after a reboot: tuned, kernel command line, udev, init scripts.

Seed 000 §5.4: read-ahead set with blockdev is lost at boot, and tuned turns THP
back on, so a setting only counts when something re-establishes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ...rules.host_layout import (
    GRUB_DEFAULTS,
    KERNEL_DEFAULT_READAHEAD_KIB,
    KTUNE_SYSCONFIG,
    legacy_kernel,
    scheduler_written,
)
from ..blockdev import BlockDevice, default_scheduler, multipath_paths
from ..boot_writers import EARLY, NOT_EXECUTABLE, SysfsWrite
from ..bootloader import BootSource
from ..facts import Facts
from ..parsers.boot import arg_value
from ..parsers.selection import Selection
from ..parsers.simple import ascii_int
from ..parsers.udev_rules import is_block_rule, partition_only
from ..results import Evidence, Outcome, Verdict, combine
from ..tuned import Ktune, TunedFacts
from ..unavailable import Unavailable

_SETRA = re.compile(r"^[^#\n]*blockdev\s+(?:[^\n]*\s)?--setra\s+([0-9]{1,12})\b", re.MULTILINE)
TUNED_THP_KEYS = ("transparent_hugepages", "transparent_hugepage")


def enabled_tuned(facts: Facts) -> TunedFacts | None:
    tuned = facts.tuned
    if isinstance(tuned, Unavailable) or not tuned.enabled_at_boot:
        return None
    return tuned


THP_FILE = re.compile(r"/sys/kernel/mm/(?:redhat_)?transparent_hugepage/(enabled|defrag)")
# tuned's [vm] options for each THP file (plugin_vm.py; transparent_hugepage.defrag since 2.11)
TUNED_THP_OPTIONS = {"enabled": TUNED_THP_KEYS, "defrag": ("transparent_hugepage.defrag",)}


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
        if setting:
            return setting
    return None


def thp_after_boot(facts: Facts, name: str) -> list[Evidence]:
    """What THP ``name`` (enabled or defrag) holds once a boot is over, for each boot entry
    that decides: the kernel command line (``transparent_hugepage=`` sets enabled only),
    then systemd-tmpfiles, then tuned (which leaves enabled alone when the command line sets
    it: plugin_vm.py since tuned 2.5), then RHEL 5/6 ktune, then executable init scripts and
    systemd units, the last to run."""
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
            if name == "enabled" and cmdline is not None:
                entry_notes.append(f"tuned profile {tuned[1]} sets {tuned[0]}, ignored: the "
                                   "kernel command line sets transparent_hugepage=")
            else:
                value, source = tuned[0], f"tuned profile {tuned[1]} [vm]"
        if ktune and ktune.enabled:  # its start() functions, in the order ktune runs them
            writes_here = [w for w in ktune.thp_writes if w.file == name]
            if writes_here:
                value, source = writes_here[-1].value, writes_here[-1].source
                if writes_here[-1].call:
                    entry_notes.append(f"{ktune.enabled} runs {writes_here[-1].call} at every "
                                       "boot, after the command line and tuned")
            entry_notes.extend(ktune.undefined_calls)
        if late:
            value, source = late[-1].value, late[-1].source
        subject = f"THP {name} after boot" + (f" ({entry.path})" if len(entries) > 1 and entry
                                              else "")
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


def tuned_readahead_kib(value: str) -> int | None:
    """The read-ahead in KiB that tuned's ``[disk] readahead=`` sets at least, or None when
    tuned rejects the value ("Invalid readahead value") and sets nothing.

    As tuned's disk plugin parses it (``_parse_ra`` after ``_process_assignment_modifiers``):
    ``N`` KiB; ``N s...`` sectors (a space, then a word starting with ``s``); ``>N`` raises
    to N only (and ``>N s`` is passed whole to the parser, which rejects it); ``Ns`` is not
    a number. ``<N`` only lowers: it guarantees no minimum.
    """
    text = value.strip()
    if text[:1] in "<>" and len(text) > 1:
        number = ascii_int(text[1:].strip())
        return number if text[0] == ">" else None
    words = text.split(None, 1)
    number = ascii_int(words[0]) if words else None
    if number is None:
        return None
    return number // 2 if len(words) > 1 and words[1][0] == "s" else number


def _kernel_honours_elevator(kernel: str) -> bool:
    """elevator= works on legacy single-queue kernels (RHEL 5/6/7), not on blk-mq ones."""
    return legacy_kernel(kernel)


def io_tuning_at_boot(params: Mapping[str, Any], facts: Facts,
                      values: Mapping[str, Any]) -> Outcome:
    minimum: int = values["read_ahead_min_kb"]
    allowed: list[str] = values["allowed_schedulers"]
    expected = (f"read-ahead >= {minimum} KiB and scheduler in {', '.join(allowed)} "
                "set at boot (tuned or udev)")
    read_ahead: list[Evidence] = []
    scheduler: list[Evidence] = []

    def judge(items: list[Evidence], subject: str, source: str, actual: str, ok: bool,
              note: str = "") -> None:
        items.append(Evidence(subject, source, actual, Verdict.PASS if ok else Verdict.FAIL,
                              note))

    refused: list[Evidence] = []

    def judge_scheduler(source: str, actual: str, name: str) -> None:
        written = scheduler_written(facts.host.kernel, name)
        if written is None:  # blk-mq refuses it: the device keeps its default
            refused.append(Evidence(
                "scheduler", source, actual, Verdict.INFORMATIONAL,
                f"sets nothing: blk-mq kernels ({facts.host.kernel}) have no {name} (the "
                "write fails with EINVAL; none, mq-deadline and its alias deadline work)"))
            return
        judge(scheduler, "scheduler", source, actual, written in allowed,
              f"the kernel selects {written}" if written != name else "")

    tuned = enabled_tuned(facts)
    if tuned is not None:
        setting = tuned.chain.setting("disk", "readahead")
        if setting:
            kib = tuned_readahead_kib(setting[0])
            judge(read_ahead, "read-ahead", f"tuned profile {setting[1]} [disk]",
                  f"readahead={setting[0]}", kib is not None and kib >= minimum,
                  "" if kib is not None else "tuned rejects this value and sets nothing "
                  "(write N, >N or N s)")
        setting = tuned.chain.setting("disk", "elevator")
        if setting:
            judge_scheduler(f"tuned profile {setting[1]} [disk]", f"elevator={setting[0]}",
                            setting[0])
    ktune = facts.tuned.ktune if not isinstance(facts.tuned, Unavailable) else None
    # RHEL 5/6 ktune multiplies what udev and LVM set (multiply_disk_readahead), before
    # rc.local runs.
    factor, scaled = _ktune_readahead_factor(ktune)
    # RHEL 5/6: ktune sets ELEVATOR on sd, cciss, dm and vd at boot, unless the booting
    # command line holds "elevator=" (ktune.init: fgrep -q 'elevator=' /proc/cmdline).
    cmdline_elevator = [source.path for source in facts.boot.deciding
                        if any("elevator=" in arg for arg in source.args)]
    if ktune and ktune.elevator and cmdline_elevator:
        refused.append(Evidence(
            "scheduler", f"{KTUNE_SYSCONFIG} (ktune, {ktune.enabled})",
            f"ELEVATOR={ktune.elevator}", Verdict.INFORMATIONAL,
            f"skipped at boot: the command line ({cmdline_elevator[0]}) sets elevator=, "
            "which ktune leaves in charge"))
    elif ktune and ktune.elevator:
        judge(scheduler, "scheduler", f"{KTUNE_SYSCONFIG} (ktune, {ktune.enabled})",
              f"ELEVATOR={ktune.elevator}", ktune.elevator in allowed)
    for path, rule in facts.udev_rules:
        source = f"{path}:{rule.line}"
        if not is_block_rule(rule):
            for items, attrs in ((read_ahead, ("queue/read_ahead_kb", "bdi/read_ahead_kb")),
                                 (scheduler, ("queue/scheduler",))):
                value = rule.assigned_attr(*attrs)
                if value is not None and partition_only(rule):
                    judge(items, "udev rule", source, f"sets {value} on partitions only", False,
                          "a partition has no queue/: the setting goes nowhere (match the disk)")
            continue
        value = rule.assigned_attr("queue/read_ahead_kb", "bdi/read_ahead_kb")
        if value is not None:
            kib = ascii_int(value)
            judge(read_ahead, "read-ahead", source, f"read_ahead_kb={value}",
                  kib is not None and kib * factor >= minimum, scaled(kib))
        value = rule.assigned_attr("queue/scheduler")
        if value is not None:
            judge_scheduler(source, f"scheduler={value}", value)
        for pair in rule.assignments:
            match = _SETRA.search(pair.value) if pair.key == "RUN" else None
            if match:
                kib = int(match.group(1)) // 2
                judge(read_ahead, "read-ahead", source, f"blockdev --setra {match.group(1)}",
                      kib * factor >= minimum, scaled(kib))
    for path, script in facts.init_scripts.items():
        for match in _SETRA.finditer(script.text):
            judge(read_ahead, "read-ahead", path, f"blockdev --setra {match.group(1)}",
                  script.executable and int(match.group(1)) // 2 >= minimum,
                  "" if script.executable else NOT_EXECUTABLE)
    if _kernel_honours_elevator(facts.host.kernel):
        for boot_source in facts.boot.deciding:
            value = arg_value(list(boot_source.args), "elevator")
            if value is not None:
                judge(scheduler, "scheduler", boot_source.path, f"elevator={value}",
                      value in allowed)

    # LVM sets read-ahead on its LVs at every activation, over udev's rules: where the
    # metadata of every SAS LV keeps one, those decide (each must hold).
    lvm, lvm_covers_all = _lvm_read_ahead(facts, minimum, factor)
    if ktune and factor != 1 and not read_ahead and not lvm_covers_all:
        default = KERNEL_DEFAULT_READAHEAD_KIB
        judge(read_ahead, "read-ahead", f"{ktune.readahead_factors[0][0]} (ktune, {ktune.enabled})",
              f"multiply_disk_readahead {factor:g}", default * factor >= minimum,
              f"the kernel's {default} KiB becomes {int(default * factor)} KiB at every boot")
    # With nothing setting a scheduler every device keeps the kernel's default: each one
    # must be allowed (all of them, where the configured ones need only one source).
    defaults = [] if scheduler else _kernel_defaults(facts, allowed)
    evidence = list(refused)
    for subject, items in (("read-ahead", read_ahead), ("scheduler", scheduler)):
        if subject == "scheduler" and defaults:
            evidence.extend(defaults)
        elif subject == "read-ahead" and lvm and lvm_covers_all:
            evidence.extend(lvm)
        elif not items:
            evidence.append(Evidence(subject, "", "not set at boot", Verdict.FAIL,
                                     "no tuned [disk] setting or udev rule sets it"))
        elif any(item.verdict == Verdict.PASS for item in items):
            evidence.extend(item for item in items if item.verdict == Verdict.PASS)
        else:
            evidence.extend(items)
        if subject == "read-ahead" and lvm and not lvm_covers_all:
            evidence.extend(lvm)
    result = combine(evidence)
    actual = "; ".join(f"{e.subject}: {e.actual}" for e in evidence)
    return Outcome(result, expected, actual, evidence)


def _ktune_readahead_factor(ktune: Ktune | None) -> tuple[float, Callable[[int | None], str]]:
    """What RHEL 5/6 ktune's multiply_disk_readahead lines multiply read-ahead by at every
    boot (1 when nothing), and a note saying what a value set before ktune becomes."""
    factor = 1.0
    for _, by in (ktune.readahead_factors if ktune and ktune.enabled else ()):
        factor *= by

    def scaled(kib: int | None) -> str:
        if factor == 1 or kib is None:
            return ""
        return f"ktune's multiply_disk_readahead {factor:g} makes it {int(kib * factor)} KiB"
    return factor, scaled


def _lvm_read_ahead(facts: Facts, minimum: int,
                    factor: float = 1.0) -> tuple[list[Evidence], bool]:
    """The read_ahead LVM metadata keeps for the SAS file systems' LVs (lvchange -r), and
    whether every SAS file system has one. ktune multiplies it by ``factor`` afterwards."""
    items = []
    filesystems = facts.sas_filesystems if isinstance(facts.sas_filesystems, list) else []
    for filesystem in filesystems:
        if not isinstance(filesystem.device, str):
            continue
        dm_name = facts.block.devices[filesystem.device].dm_name
        if dm_name in facts.lvm_read_ahead:
            sectors, source = facts.lvm_read_ahead[dm_name]
            items.append(Evidence("read-ahead", f"{source} (LV {dm_name})",
                                  f"read_ahead = {sectors} sectors",
                                  Verdict.PASS if sectors // 2 * factor >= minimum
                                  else Verdict.FAIL,
                                  "LVM sets it at every activation, after udev's rules"
                                  + (f"; ktune multiplies it by {factor:g}" if factor != 1
                                     else "")))
    return items, bool(filesystems) and len(items) == len(filesystems)


def _kernel_defaults(facts: Facts, allowed: list[str]) -> list[Evidence]:
    """With nothing configuring a scheduler, each SAS device gets the kernel's default at
    boot: that persists too. With no SAS device to look at, the kernel's default for a
    plain disk stands for them (what OVAL's vacuous test on no devices also says)."""
    devices = {layer.device: facts.block.devices[layer.device]
               for filesystem in (facts.sas_filesystems
                                  if isinstance(facts.sas_filesystems, list) else [])
               for layer in filesystem.stack}
    paths = multipath_paths(facts.block)  # a request-based map schedules for its paths
    choosing = [device for device in devices.values() if device.kind != "partition"
                and device.name not in paths
                and isinstance(device.scheduler, Selection) and device.scheduler.offers_choice]
    items = []
    for device in choosing or [BlockDevice("(any disk)", "", "disk")]:
        default = default_scheduler(facts.host.kernel, device)
        if default is None:
            continue
        items.append(Evidence("scheduler", f"kernel default for {device.label}", default[0],
                              Verdict.PASS if default[0] in allowed else Verdict.FAIL,
                              f"{default[1]}; nothing else sets it at boot"))
    return items


def tuned_cpu_latency(params: Mapping[str, Any], facts: Facts,
                      values: Mapping[str, Any]) -> Outcome:
    """[cpu] force_latency in the active chain, at most max_us (tuned's cpu plugin opens
    /dev/cpu_dma_latency with it; a cstate.id:... value from tuned 2.15 is no number of
    microseconds and is not judged as one)."""
    maximum = int(params["max_us"])
    expected = f"tuned enabled with [cpu] force_latency <= {maximum} us"
    ktune = facts.tuned.ktune if not isinstance(facts.tuned, Unavailable) else None
    if ktune and ktune.enabled and ktune.cpu_dma_latency:  # RHEL 5/6: tuned 0.2's PM QoS
        script, held = ktune.cpu_dma_latency
        item = Evidence("cpu_dma_latency", f"{script} (ktune, {ktune.enabled})",
                        f"pmqos-static.py cpu_dma_latency={held}",
                        Verdict.PASS if held <= maximum else Verdict.FAIL)
        return Outcome(item.verdict, expected, f"{item.subject}: {item.actual}", [item])
    tuned = enabled_tuned(facts)
    if tuned is None:
        return Outcome(Verdict.FAIL, expected, "tuned is not enabled at boot")
    setting = tuned.chain.setting("cpu", "force_latency")
    if setting is None:
        item = Evidence("force_latency", "tuned profile chain", "not set", Verdict.FAIL,
                        "the CPUs may sleep in deep C-states")
    else:
        microseconds = ascii_int(setting[0])
        item = Evidence("force_latency", f"tuned profile {setting[1]} [cpu]",
                        f"force_latency={setting[0]}",
                        Verdict.PASS if microseconds is not None and microseconds <= maximum
                        else Verdict.FAIL,
                        "" if microseconds is not None else "not a number of microseconds")
    return Outcome(item.verdict, expected, f"{item.subject}: {item.actual}", [item])
