"""Checks on the file systems that hold SAS directories and the devices below them."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ...rules.host_layout import VXFS_TUNEFSTAB, xfs_barrier_option, xfs_refuses_barrier_options
from ..facts import Facts
from ..parsers.selection import Selection
from ..parsers.vxfs import READ_NSTREAM_DEFAULT, READ_PREF_IO_DEFAULT, read_ahead_bytes
from ..results import Evidence, Outcome, Verdict, combine, combine_judged, summarise
from ..storage.blockdev import BlockDevice, multipath_paths
from ..storage.filesystems import SasFilesystem
from ..tuned.ktune import Ktune
from ..unavailable import Unavailable


def _filesystems(facts: Facts) -> list[SasFilesystem]:
    # The engine only calls SAS checks when the file systems could be placed.
    assert isinstance(facts.sas_filesystems, list)
    return facts.sas_filesystems


def _subject(filesystem: SasFilesystem) -> str:
    roles = "/".join(sorted(filesystem.roles))
    return f"{filesystem.mount.mountpoint} ({roles})"


def _unplaced(facts: Facts) -> list[Evidence]:
    return [Evidence(f"{d.role} {d.path}", d.source, "not placed", Verdict.ERROR, why)
            for d, why in facts.unplaced_dirs]


def _outcome(expected: str, evidence: list[Evidence], none_message: str = "") -> Outcome:
    """Combine item verdicts. Nothing judged (NFS only, bio-based devices only, no scheduler
    choice) is never a pass: notchecked where an item could not be seen into (a VxVM
    volume), else notapplicable, with none_message saying why."""
    result = combine(evidence, if_none=Verdict.NOTAPPLICABLE)
    unseen = [e.note for e in evidence if e.verdict == Verdict.NOTCHECKED]
    if result == Verdict.NOTAPPLICABLE and unseen:
        result = Verdict.NOTCHECKED
    judged = any(e.verdict in (Verdict.PASS, Verdict.FAIL, Verdict.ERROR) for e in evidence)
    message = "" if judged else (unseen[0] if unseen else "") or none_message or next(
        (e.note for e in evidence if e.note), "nothing to judge")
    return Outcome(result, expected, summarise(evidence) or "nothing to judge", evidence,
                   message)


def _device_layers(facts: Facts, filesystem: SasFilesystem,
                   judge: Callable[[BlockDevice], Evidence | None]) -> Iterator[Evidence]:
    subject = _subject(filesystem)
    if isinstance(filesystem.device, Unavailable):
        if not filesystem.mount.device.startswith("/dev/"):
            yield Evidence(subject, "/proc/mounts", filesystem.mount.device,
                           Verdict.NOTAPPLICABLE, "not a local block device")
        else:
            yield Evidence(subject, "/sys/block", "unknown device", Verdict.ERROR,
                           filesystem.device.reason)
        return
    for layer in filesystem.stack:
        item = judge(facts.block.devices[layer.device])
        if item is not None:
            # One device may serve several SAS file systems: say which one this is.
            yield Evidence(f"{filesystem.mount.mountpoint}: {item.subject}", item.source,
                           item.actual, item.verdict, item.note, device=layer.device)


def block_scheduler(params: Mapping[str, Any], facts: Facts,
                    values: Mapping[str, Any]) -> Outcome:
    allowed: list[str] = values["allowed_schedulers"]
    expected = f"scheduler one of {', '.join(allowed)} on every device below SAS file systems"

    paths = multipath_paths(facts.block)

    def judge(device: BlockDevice) -> Evidence | None:
        source = f"{device.sysfs}/queue/scheduler"
        scheduler = device.scheduler
        if device.kind == "partition":
            return None  # its disk's queue is judged
        if device.name in paths and isinstance(scheduler, Selection):
            return Evidence(device.label, source, str(scheduler.selected), Verdict.INFORMATIONAL,
                            f"a path of multipath map {paths[device.name]}: its scheduler "
                            "decides (dm-multipath hands the path cloned requests with "
                            "blk_insert_cloned_request, past the path's scheduler)")
        if scheduler is None:
            return Evidence(device.label, source, "no scheduler file", Verdict.NOTAPPLICABLE,
                            "bio-based device: the devices below it schedule its I/O")
        if isinstance(scheduler, Unavailable):
            return Evidence(device.label, source, "unreadable", Verdict.ERROR, scheduler.reason)
        if not scheduler.offers_choice:
            return Evidence(device.label, source, " ".join(scheduler.options) or "empty",
                            Verdict.NOTAPPLICABLE, "no scheduler choice offered")
        verdict = Verdict.PASS if scheduler.selected in allowed else Verdict.FAIL
        return Evidence(device.label, source, str(scheduler.selected), verdict)

    evidence = _unplaced(facts)
    for filesystem in _filesystems(facts):
        evidence.extend(_device_layers(facts, filesystem, judge))
    return _outcome(expected, evidence,
                    "no device below the SAS file systems offers a scheduler choice")


def block_read_ahead(params: Mapping[str, Any], facts: Facts,
                     values: Mapping[str, Any]) -> Outcome:
    minimum: int = values["read_ahead_min_kb"]
    expected = f"read_ahead_kb >= {minimum} on the device each SAS file system mounts"
    evidence = _unplaced(facts)
    for filesystem in _filesystems(facts):
        subject = _subject(filesystem)
        bdi = filesystem.bdi
        if bdi is not None:  # NFS: the read-ahead of its backing device info
            if isinstance(bdi.value, Unavailable):
                evidence.append(Evidence(subject, bdi.path, "unreadable", Verdict.ERROR,
                                         bdi.value.reason))
            else:
                evidence.append(Evidence(
                    f"{subject} ({filesystem.mount.fstype} bdi)", bdi.path, f"{bdi.value} KiB",
                    Verdict.PASS if bdi.value >= minimum else Verdict.FAIL,
                    "" if bdi.value >= minimum else "NFS reads ahead 128 KiB unless raised"))
            continue
        if isinstance(filesystem.device, Unavailable):
            evidence.extend(_device_layers(facts, filesystem, lambda d: None))
            continue
        if filesystem.veritas:
            evidence.extend(_veritas_read_ahead(facts, filesystem, minimum))
            continue
        device = facts.block.devices[facts.block.queue_device(filesystem.device)]
        source = f"{device.sysfs}/queue/read_ahead_kb"
        value = device.read_ahead_kb
        label = f"{subject} on {device.label}"
        if value is None or isinstance(value, Unavailable):
            reason = value.reason if value else "not read"
            evidence.append(Evidence(label, source, "unreadable", Verdict.ERROR, reason,
                                     device=device.name))
            continue
        verdict = Verdict.PASS if value >= minimum else Verdict.FAIL
        evidence.append(Evidence(label, source, f"{value} KiB", verdict, device=device.name))
    return _outcome(expected, evidence, "no local block device under the SAS file systems")


def _veritas_read_ahead(facts: Facts, filesystem: SasFilesystem,
                        minimum: int) -> Iterator[Evidence]:
    """A VxVM volume: each array LUN's read_ahead_kb, and VxFS's own read-ahead
    (read_pref_io x read_nstream) where /etc/vx/tunefstab sets it."""
    subject = _subject(filesystem)
    for layer in filesystem.stack:
        device = facts.block.devices[layer.device]
        value = device.read_ahead_kb
        source = f"{device.sysfs}/queue/read_ahead_kb"
        if value is None or isinstance(value, Unavailable):
            yield Evidence(f"{subject}: LUN {device.label}", source, "unreadable", Verdict.ERROR,
                           value.reason if value else "not read", device=device.name)
        else:
            yield Evidence(f"{subject}: LUN {device.label}", source, f"{value} KiB",
                           Verdict.PASS if value >= minimum else Verdict.FAIL,
                           device=device.name)
    if filesystem.mount.fstype != "vxfs":
        return
    tunables = facts.vxfs_tunables.get(filesystem.mount.device)
    if tunables is None:
        yield Evidence(f"{subject}: VxFS read-ahead", VXFS_TUNEFSTAB, "not set there",
                       Verdict.INFORMATIONAL, "VxFS takes read_pref_io and read_nstream from the "
                       "volume's stripe unit and columns: see vxtunefs -p " + filesystem.mount.mountpoint)
        return
    total = read_ahead_bytes(tunables)
    actual = (f"read_pref_io={tunables.get('read_pref_io', READ_PREF_IO_DEFAULT)} x "
              f"read_nstream={tunables.get('read_nstream', READ_NSTREAM_DEFAULT)}")
    # VxFS's own read-ahead is no block read-ahead: it follows the volume's stripe unit and
    # columns (vxtunefs), and the LUNs' read_ahead_kb above is what seed 003 raised.
    yield Evidence(f"{subject}: VxFS read-ahead", VXFS_TUNEFSTAB,
                   actual + (f" = {total // 1024} KiB" if total is not None else ""),
                   Verdict.INFORMATIONAL,
                   "VxFS's own read-ahead, sized to the volume's stripe unit x columns; "
                   "judged are the LUNs' read_ahead_kb" if total is not None else
                   "not numbers")


def _mount_source(filesystem: SasFilesystem) -> str:
    return f"/proc/mounts line {filesystem.mount.line}"


def _scratch(facts: Facts, filesystem: SasFilesystem) -> tuple[bool, str]:
    """Whether the forbidden options are allowed on ``filesystem`` as throw-away scratch
    (it holds a scratch_dirs directory and no SAS DATA), and what to say either way."""
    held = facts.scratch.get((filesystem.mount.mountpoint, filesystem.mount.line))
    if not held:
        return False, ""
    if "DATA" in filesystem.roles:
        return False, (f"holds scratch directory {held}, but SAS DATA too: scratch_dirs does "
                       "not lift the rule for permanent data")
    return True, (f"allowed: throw-away scratch (scratch_dirs names {held}), whose contents "
                  "are lost at every stop anyway")


def mount_option_forbidden(params: Mapping[str, Any], facts: Facts,
                           values: Mapping[str, Any]) -> Outcome:
    forbidden: list[str] = params["options"]
    lifted_by = params.get("allowed_when")
    lifted = bool(lifted_by and values.get(lifted_by))
    expected = (f"none of {', '.join(forbidden)} on SAS file systems"
                + (f" unless {lifted_by} is true" if lifted_by else "")
                + " (or on throw-away scratch without DATA)")
    evidence = _unplaced(facts)
    for filesystem in _filesystems(facts):
        found = [option for option in forbidden if filesystem.mount.has_option(option)]
        actual = ",".join(found) if found else "not set"
        scratch, scratch_note = _scratch(facts, filesystem)
        if found and lifted:
            evidence.append(Evidence(_subject(filesystem), _mount_source(filesystem), actual,
                                     Verdict.PASS, f"allowed: {lifted_by} is true"))
        elif found and scratch:
            evidence.append(Evidence(_subject(filesystem), _mount_source(filesystem), actual,
                                     Verdict.PASS, scratch_note))
        else:
            verdict = Verdict.FAIL if found else Verdict.PASS
            evidence.append(Evidence(_subject(filesystem), _mount_source(filesystem), actual,
                                     verdict, scratch_note if found else ""))
    return _outcome(expected, evidence)


def mount_option_required(params: Mapping[str, Any], facts: Facts,
                          values: Mapping[str, Any]) -> Outcome:
    option: str = params["option"]
    expected = f"every SAS file system mounted with {option}"
    evidence = _unplaced(facts)
    for filesystem in _filesystems(facts):
        present = filesystem.mount.has_option(option)
        evidence.append(Evidence(_subject(filesystem), _mount_source(filesystem),
                                 ",".join(filesystem.mount.options),
                                 Verdict.PASS if present else Verdict.FAIL))
    return _outcome(expected, evidence)


def fs_type(params: Mapping[str, Any], facts: Facts, values: Mapping[str, Any]) -> Outcome:
    """Each SAS file system's type: allowed_fs_types, or for one holding only DATA a shared
    type as well (seed 001 "RHEL Filesystems": NFS, GFS2; seed 003's VxCFS; Lustre), or for
    one holding WORK and no DATA a type allowed_work_fs_types names (SAS's GFS2 paper)."""
    allowed: list[str] = values["allowed_fs_types"]
    shared: list[str] = values.get("allowed_shared_data_fs_types") or []
    work: list[str] = values.get("allowed_work_fs_types") or []
    expected = f"SAS file systems of type {' or '.join(allowed)}" + (
        f"; DATA alone also {' or '.join(shared)}" if shared else "") + (
        f"; WORK without DATA also {' or '.join(work)}" if work else "")
    evidence = _unplaced(facts)
    for filesystem in _filesystems(facts):
        kind = filesystem.mount.fstype
        data_only = filesystem.roles == {"DATA"}
        work_apart = "WORK" in filesystem.roles and "DATA" not in filesystem.roles
        ok = kind in allowed or (data_only and kind in shared) or (work_apart and kind in work)
        note = ""
        if not ok and kind in work and "WORK" in filesystem.roles:
            note = (f"{kind} is allowed for WORK on a file system of its own, not one holding "
                    "DATA too (SAS's GFS2 paper)")
        elif not ok and kind in shared and not data_only:
            note = (f"a shared {kind} is allowed for DATA alone: WORK, UTILLOC and the CAS "
                    "disk cache want local storage")
        evidence.append(Evidence(_subject(filesystem), _mount_source(filesystem), kind,
                                 Verdict.PASS if ok else Verdict.FAIL, note))
    return _outcome(expected, evidence)


def _device_key(filesystem: SasFilesystem) -> str:
    """The block device under a mount, else (or for a VxVM volume, whose LUNs its disk group
    shares with others) its source as /proc/mounts names it."""
    if isinstance(filesystem.device, str) and not filesystem.veritas:
        return filesystem.device
    return filesystem.mount.device


def _may_share(roles: set[str], shared: list[str]) -> bool:
    """Whether these roles may be on one file system: one role, or a pair sas_shared_roles
    names (in either order)."""
    return len(roles) <= 1 or (len(roles) == 2 and any(
        set(pair.split("+")) == roles for pair in shared))


def sas_dirs_separate(params: Mapping[str, Any], facts: Facts,
                      values: Mapping[str, Any]) -> Outcome:
    shared_ok: list[str] = values.get("sas_shared_roles") or []
    expected = ("DATA, WORK, UTILLOC and the CAS disk cache each on its own file system, "
                "none on /"
                + (f" ({', '.join(shared_ok)} may share one)" if shared_ok else ""))
    evidence = _unplaced(facts)
    # One device mounted twice (a bind mount, an LV mounted at two places) is one file system.
    by_device: dict[str, list[SasFilesystem]] = {}
    for filesystem in _filesystems(facts):
        by_device.setdefault(_device_key(filesystem), []).append(filesystem)
    for filesystem in _filesystems(facts):
        problems = []
        if filesystem.mount.mountpoint == "/":
            problems.append("on the root file system")
        if not _may_share(filesystem.roles, shared_ok):
            problems.append("shared by " + " and ".join(sorted(filesystem.roles)))
        twins = [other for other in by_device[_device_key(filesystem)] if other is not filesystem]
        shared = set().union(*(other.roles for other in twins)) - filesystem.roles
        if shared and not _may_share(shared | filesystem.roles, shared_ok):
            problems.append(f"same device as {', '.join(o.mount.mountpoint for o in twins)} "
                            f"({filesystem.mount.device}), which holds "
                            + " and ".join(sorted(shared)))
        dirs = ", ".join(f"{d.role} {d.path}" for d in filesystem.dirs)
        evidence.append(Evidence(_subject(filesystem), _mount_source(filesystem),
                                 "; ".join(problems) or "separate",
                                 Verdict.FAIL if problems else Verdict.PASS, dirs))
    return _outcome(expected, evidence)


def _ktune_remounts_nobarrier(facts: Facts, ktune: Ktune | None, filesystem: SasFilesystem,
                              source: str) -> tuple[bool, str]:
    """Whether RHEL 5/6 ktune remounts this file system nobarrier at every boot, after fstab,
    and the source extended to say so: remount_partitions nobarrier (tuned v0.2.22) always;
    disable_disk_barriers (the 1.0 branch, RHEL 6) unless one of its disks reports a
    write-back cache (_devices_no_write_back_cache reads each SCSI disk's cache_type)."""
    if ktune is None:
        return False, source
    if ktune.nobarrier:
        return True, f"{source}; {ktune.nobarrier[0]} (ktune) remounts it nobarrier at every boot"
    if not ktune.nobarrier_unless_write_back:
        return False, source
    script = ktune.nobarrier_unless_write_back[0]
    disks = sorted({layer.device for layer in filesystem.stack
                    if layer.device in facts.block.devices
                    and facts.block.devices[layer.device].kind == "disk"})
    cached = [disk for disk in disks if disk in ktune.write_back_disks]
    if cached:
        return False, (f"{source}; {script} (ktune) runs disable_disk_barriers, which leaves it: "
                       f"{', '.join(cached)} report a write-back cache")
    return True, (f"{source}; {script} (ktune) runs disable_disk_barriers, which remounts it "
                  f"nobarrier at every boot: {', '.join(disks) or 'its disks'} report no "
                  "write-back cache")


def mount_options_at_boot(params: Mapping[str, Any], facts: Facts,
                          values: Mapping[str, Any]) -> Outcome:
    """What mounts each SAS file system at boot (scanner.boot_mounts) gives it the required
    options and none of the forbidden ones, unless a site value lifts them."""
    required: list[str] = params["required"]
    forbidden: list[str] = params.get("forbidden", [])
    lifted_by = params.get("allowed_when")
    lifted = bool(lifted_by and values.get(lifted_by))
    expected = (f"the fstab entry or mount unit of each SAS file system has "
                f"{', '.join(required)}" + (f" and none of {', '.join(forbidden)}"
                                            + (f" unless {lifted_by} is true" if lifted_by
                                               else "")
                                            + " (or on throw-away scratch without DATA)"
                                            if forbidden else ""))
    ktune = facts.tuned.ktune if not isinstance(facts.tuned, Unavailable) else None
    evidence = _unplaced(facts)
    for filesystem in _filesystems(facts):
        point = filesystem.mount.mountpoint
        entry = facts.boot_mounts.get(point.rstrip("/") or "/")
        subject = _subject(filesystem)
        if entry is None or not entry.at_boot:
            evidence.append(Evidence(
                subject, entry.source if entry else "", "not mounted at boot by fstab or a "
                "mount unit", Verdict.NOTCHECKED,
                (entry.why_not + "; " if entry else "")
                + "mounted by something else (cluster software such as Pacemaker, autofs, "
                  "a script): check its options there"))
            continue
        missing = [option for option in required if option not in entry.options]
        present = [option for option in forbidden if option in entry.options]
        source = entry.source
        refused = [option for option in entry.options if xfs_barrier_option(option)] if (
            filesystem.mount.fstype == "xfs"
            and xfs_refuses_barrier_options(facts.host.kernel)) else []
        if refused:  # whatever the cache: the entry does not mount at all
            evidence.append(Evidence(
                subject, source, ",".join(entry.options), Verdict.FAIL,
                f"has {', '.join(refused)}, which XFS does not accept on {facts.host.kernel} "
                "(removed in Linux 4.19, and in RHEL 8's 4.18): the mount fails and the host "
                "boots to emergency mode; remove it"))
            continue
        if "nobarrier" in forbidden and point not in ("/", "/boot"):
            remount, source = _ktune_remounts_nobarrier(facts, ktune, filesystem, source)
            if remount and "nobarrier" not in present:  # RHEL 5/6, after fstab
                present.append("nobarrier")
        problems = [f"lacks {option}" for option in missing]
        note = ""
        scratch, scratch_note = _scratch(facts, filesystem)
        if present and lifted:
            note = f"{', '.join(present)} allowed: {lifted_by} is true"
        elif present and scratch:
            note = f"{', '.join(present)} {scratch_note}"
        else:
            problems += [f"has {option}" for option in present]
            note = scratch_note if present else ""
        evidence.append(Evidence(subject, source, ",".join(entry.options) or "defaults",
                                 Verdict.FAIL if problems else Verdict.PASS,
                                 "; ".join(problems + ([note] if note else []))))
    # A file system whose boot-time options cannot be seen keeps a pass from being claimed.
    result = combine_judged(evidence, if_none=Verdict.NOTCHECKED)
    return Outcome(result, expected, summarise(evidence) or "nothing to judge", evidence)
