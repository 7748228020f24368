"""io_tuning_at_boot: read-ahead and the I/O scheduler set again at every boot (tuned's
[disk], udev rules, init scripts, LVM metadata, ktune, elevator=, the kernel's default).

Seed 000 §5.4: read-ahead set with blockdev is lost at boot, so a setting only counts when
something re-establishes it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ...rules.host_layout import (
    KERNEL_DEFAULT_READAHEAD_KIB,
    KTUNE_SYSCONFIG,
    TUNED_MODIFIERS_SINCE,
    legacy_kernel,
    scheduler_written,
)
from .. import linear_re as re
from ..facts import Facts
from ..parsers.boot import arg_value
from ..parsers.selection import Selection
from ..parsers.simple import ascii_int
from ..parsers.udev_rules import is_block_rule, partition_only
from ..results import Evidence, Outcome, Verdict, combine_judged
from ..storage.blockdev import BlockDevice, default_scheduler, multipath_paths
from ..storage.sasdirs import HOW_TO_NAME_SAS_DIRS
from ..storage.udev_devices import sas_udev_devices
from ..tuned.ktune import Ktune
from ..unavailable import Unavailable
from .boot import enabled_tuned, tuned_unknown

_SETRA = re.compile(r"^[^#\n]*blockdev\s+(?:[^\n]*\s)?--setra\s+([0-9]{1,12})\b", re.MULTILINE)
# plugin_disk._device_is_supported: disks whose parent subsystem is scsi, virtio or xen,
# and nvme from v2.18.0; device-mapper devices (no parent) always.
TUNED_DISK_NVME_SINCE = (2, 18)


def tuned_readahead_kib(value: str, modifiers: bool = True) -> int | None:
    """The read-ahead in KiB that tuned's ``[disk] readahead=`` sets at least, or None when
    tuned rejects the value ("Invalid readahead value") and sets nothing.

    As tuned's disk plugin parses it (``_parse_ra`` after ``_process_assignment_modifiers``):
    ``N`` KiB; ``N s...`` sectors (a space, then a word starting with ``s``); ``>N`` raises
    to N only (and ``>N s`` is passed whole to the parser, which rejects it); ``Ns`` is not
    a number. ``<N`` only lowers: it guarantees no minimum. Without ``modifiers`` (tuned
    before 2.4) ``>N`` and ``<N`` are not numbers either.
    """
    text = value.strip()
    if text[:1] in "<>" and not modifiers:
        return None
    if text[:1] in "<>" and len(text) > 1:
        number = ascii_int(text[1:].strip())
        return number if text[0] == ">" else None
    words = text.split(None, 1)
    number = ascii_int(words[0]) if words else None
    if number is None:
        return None
    return number // 2 if len(words) > 1 and words[1][0] == "s" else number


def _nvme_only(facts: Facts) -> list[str]:
    """The NVMe disks under the SAS file systems when nothing else (no device-mapper or md
    layer, which tuned's disk plugin tunes whatever is below) is: [] otherwise."""
    if not isinstance(facts.sas_filesystems, list) or not facts.sas_filesystems:
        return []
    names = {layer.device for filesystem in facts.sas_filesystems for layer in filesystem.stack}
    devices = [facts.block.devices[name] for name in names if name in facts.block.devices]
    disks = sorted(d.name for d in devices if d.kind == "disk" and d.name.startswith("nvme"))
    if not disks or any(d.kind in ("dm", "md") or (d.kind == "disk" and d.name not in disks)
                        for d in devices):
        return []
    return disks


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
    nvme_only = _nvme_only(facts)
    if tuned is not None and nvme_only and tuned.honours(TUNED_DISK_NVME_SINCE) is False:
        for key in ("readahead", "elevator"):
            if setting := tuned.chain.setting("disk", key):
                refused.append(Evidence(
                    "read-ahead" if key == "readahead" else "scheduler",
                    f"tuned profile {setting[1]} [disk]", f"{key}={setting[0]}",
                    Verdict.INFORMATIONAL,
                    f"sets nothing here: tuned {tuned.release}'s disk "
                    f"plugin tunes NVMe disks from 2.18, and the SAS file systems sit on "
                    f"{', '.join(nvme_only)} alone"))
    elif tuned is not None:
        setting = tuned.chain.setting("disk", "readahead")
        if setting:
            modifiers = tuned.honours(TUNED_MODIFIERS_SINCE) is not False
            kib = tuned_readahead_kib(setting[0], modifiers)
            rejected = ("tuned rejects this value and sets nothing (write N, >N or N s)"
                        if modifiers or not setting[0].strip().startswith(("<", ">")) else
                        f"tuned {tuned.release} rejects this value "
                        "and sets nothing: > and < come in tuned 2.4 (write N)")
            judge(read_ahead, "read-ahead", f"tuned profile {setting[1]} [disk]",
                  f"readahead={setting[0]}", kib is not None and kib >= minimum,
                  "" if kib is not None else rejected)
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
    sas_devices = sas_udev_devices(facts)
    for path, rule in facts.udev_rules:
        source = f"{path}:{rule.line}"
        if is_block_rule(rule) and sas_devices and rule.assigns_queue and not any(
                rule.may_reach(device) for device in sas_devices):
            refused.append(Evidence(
                "udev rule", source, "reaches no SAS device", Verdict.INFORMATIONAL,
                "its matches, or the GOTO guards above it, leave out every device under "
                "the SAS file systems"))
            continue
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
                  script.runs and int(match.group(1)) // 2 >= minimum, script.why_not)
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
    unknown = tuned_unknown(facts)
    for subject, items in (("read-ahead", read_ahead), ("scheduler", scheduler)):
        if unknown and not any(item.verdict == Verdict.PASS for item in items):
            evidence.append(replace(unknown, subject=subject))  # tuned may set it
        elif subject == "scheduler" and defaults:
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
    result = combine_judged(evidence)
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
    if not devices and not facts.discovery.dirs:
        # No SAS directory known: which devices hold SAS data cannot be told, and a plain
        # disk's default would be a guess (nothing judged is never a pass).
        return [Evidence("scheduler", "kernel default", "not judged", Verdict.NOTCHECKED,
                         "nothing sets a scheduler at boot, so each SAS device keeps its "
                         f"kernel default; {HOW_TO_NAME_SAS_DIRS}")]
    items = []
    for device in choosing or [BlockDevice("(any disk)", "", "disk")]:
        default = default_scheduler(facts.host.kernel, device)
        if default is None:
            continue
        items.append(Evidence("scheduler", f"kernel default for {device.label}", default[0],
                              Verdict.PASS if default[0] in allowed else Verdict.FAIL,
                              f"{default[1]}; nothing else sets it at boot"))
    return items
