"""Collect, once and read-only, everything the rules judge.

Each collector reads files under the root and returns plain data; a fact that
cannot be read becomes ``Unavailable(reason)`` so the rules that need it say
``error`` with that reason, and the others are unaffected.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..rules.host_layout import (
    ETC_HOSTNAME,
    INIT_SCRIPTS,
    KERNEL_HOSTNAME,
    LVM_BACKUP,
    MOUNTINFO,
    NETWORK_FS_TYPES,
    OS_RELEASE,
    REDHAT_RELEASE,
    THP_DIRS,
    UDEV_RULES_DIRS,
    VXFS_TUNEFSTAB,
    VXVM_DEVICE_DIRS,
    host_name,
    os_platform,
)
from . import linear_re as re
from .boot.dropins import merged
from .boot.loader import BootConfig, collect_boot
from .boot.mounts import BootMount, collect_boot_mounts
from .boot.sysctl import SysctlBoot, collect_sysctl_boot
from .boot.target import BootStarts, boot_starts
from .boot.writers import NOT_EXECUTABLE, SysfsWrite, collect_boot_writes
from .parsers.dm_multipath import MultipathMap
from .parsers.libvirt import Domain
from .parsers.lvm_metadata import lv_read_ahead
from .parsers.mounts import MountEntry, parse_mountinfo, parse_mounts
from .parsers.multipath_conf import MultipathConf
from .parsers.selection import Selection, parse_selection
from .parsers.simple import ascii_int, cpuinfo_count, meminfo_kib, shell_assignments
from .parsers.udev_rules import UdevRule, parse_udev_rules
from .parsers.vxfs import parse_tunefstab
from .sources.hostroot import FactError, HostRoot
from .storage.blockdev import (
    BlockGraph,
    disk_vendors,
    lvm_dm_name,
    read_queue,
    read_topology,
    stripe_published,
)
from .storage.filesystems import (
    SasFilesystem,
    place_on_array,
    place_sas_dirs,
    read_bdi,
    scratch_mounts,
)
from .storage.multipath import collect_multipath, knows_detect_pgpolicy
from .storage.multipath_hwtable import HwTable, host_table
from .storage.multipath_runtime import collect_runtime_maps
from .storage.sasdirs import Discovery, SasDir, discover
from .system.cpu_features import CpuFeatures, collect_cpu_features
from .system.cpuidle import CpuIdle, collect_cpuidle
from .system.guests import collect_guests
from .system.limits import LimitsFacts, collect_limits
from .system.numa import NumaFacts, collect_numa
from .system.role import RoleDecision, detect_role, forced_role
from .system.selinux import SelinuxFacts, collect_selinux
from .tuned.active import TunedFacts, collect_tuned
from .unavailable import Unavailable

T = TypeVar("T")

MOUNTS_LIMIT = 16 * 1024 * 1024


@dataclass(frozen=True)
class ThpFacts:
    base: str
    enabled: Selection | Unavailable
    defrag: Selection | Unavailable


@dataclass
class HostInfo:
    hostname: str = ""
    machine_id: str = ""  # /etc/machine-id, "" where missing or not one
    kernel: str = ""
    os: str = ""
    cpus: int = 0
    memory_kib: int | None = None
    # The CPE name of the RHEL-family system the release files name; "" where there are
    # none (a partial root, or unreadable: judged); None for another system (not judged).
    os_platform: str | None = ""


@dataclass
class Facts:
    root: str
    host: HostInfo
    role: RoleDecision
    mounts: list[MountEntry] | Unavailable
    mount_problems: list[str]
    discovery: Discovery
    sas_filesystems: list[SasFilesystem] | Unavailable
    unplaced_dirs: list[tuple[SasDir, str]]
    block: BlockGraph
    thp: ThpFacts | Unavailable | None
    governors: dict[str, str | Unavailable]
    sysctl: dict[str, str | Unavailable]
    tuned: TunedFacts | Unavailable
    boot: BootConfig
    init_scripts: dict[str, InitScript]
    boot_writes: list[SysfsWrite]
    sysctl_boot: SysctlBoot
    boot_mounts: dict[str, BootMount]
    lvm_read_ahead: dict[str, tuple[int, str]]  # dm name -> (sectors, metadata file)
    udev_rules: list[tuple[str, UdevRule]]
    numa: NumaFacts = field(default_factory=lambda: NumaFacts((), 0, None, ""))
    guests: dict[str, Domain | Unavailable] = field(default_factory=dict)  # path -> domain
    stripe_published: bool = False  # some block device's queue has an optimal I/O size
    disk_vendors: frozenset[str] = frozenset()  # every disk's SCSI vendor
    multipath: MultipathConf | Unavailable | None = None  # None: no multipath.conf
    # The mounts holding scratch_dirs (throw-away storage): (mount point, line) -> the dir
    scratch: dict[tuple[str, int], str] = field(default_factory=dict)
    # whether the installed multipath-tools has detect_pgpolicy, and where that was read
    multipath_detects: tuple[bool | None, str] = (None, "")
    # The kernel's tables for each multipath map by name; None: not recorded
    multipath_runtime: dict[str, MultipathMap] | Unavailable | None = None
    # multipath-tools' built-in hardware table as this host has it, or why it is not known
    multipath_table: HwTable | str = "not read"
    vxfs_tunables: dict[str, dict[str, str]] = field(default_factory=dict)  # tunefstab
    cpuidle: CpuIdle = field(default_factory=lambda: CpuIdle(""))
    cpu_features: CpuFeatures = field(default_factory=CpuFeatures)
    limits: LimitsFacts = field(default_factory=LimitsFacts)  # the SAS accounts' limits
    selinux: SelinuxFacts = field(default_factory=SelinuxFacts)
    problems: list[str] = field(default_factory=list)
    # sascheck iotest's results (iotest.runner.Measurement.to_dict), None in a scan
    measurements: list[dict[str, Any]] | None = None


def _guard(collector: Callable[[], T]) -> T | Unavailable:
    try:
        return collector()
    except FactError as exc:
        return Unavailable(str(exc))


def _selection(root: HostRoot, path: str) -> Selection | Unavailable:
    try:
        selection = parse_selection(root.read_text(path, 4096))
    except FactError as exc:
        return Unavailable(str(exc))
    except ValueError as exc:
        return Unavailable(f"{path}: {exc}", "not understood")
    if selection.selected is None:
        return Unavailable(f"{path}: no [selected] value in {' '.join(selection.options)!r}",
                           "not understood")
    return selection


def collect_thp(root: HostRoot) -> ThpFacts | None:
    for base in THP_DIRS:
        if root.is_dir(base):
            return ThpFacts(base, _selection(root, f"{base}/enabled"),
                            _selection(root, f"{base}/defrag"))
    return None


def collect_governors(root: HostRoot) -> dict[str, str | Unavailable]:
    governors: dict[str, str | Unavailable] = {}
    for name in root.listdir("/sys/devices/system/cpu"):
        if not (name.startswith("cpu") and ascii_int(name[3:]) is not None):
            continue
        path = f"/sys/devices/system/cpu/{name}/cpufreq/scaling_governor"
        if not root.exists(f"/sys/devices/system/cpu/{name}/cpufreq"):
            continue
        try:
            governors[name] = root.read_first_line(path) or Unavailable(f"{path}: empty",
                                                                        "empty")
        except FactError as exc:
            governors[name] = Unavailable(str(exc))
    return dict(sorted(governors.items(), key=lambda item: int(item[0][3:])))


def collect_sysctl(root: HostRoot, keys: list[str]) -> dict[str, str | Unavailable]:
    values: dict[str, str | Unavailable] = {}
    for key in keys:
        path = "/proc/sys/" + key.replace(".", "/")
        try:
            values[key] = root.read_first_line(path) or Unavailable(f"{path}: empty", "empty")
        except FactError as exc:
            values[key] = Unavailable(str(exc))
    return values


def _read_noting(root: HostRoot, path: str, problems: list[str],
                 limit: int = 1024 * 1024) -> str | None:
    """An optional file's text; a file that exists but cannot be read is noted, not fatal."""
    try:
        return root.read_optional(path, limit)
    except FactError as exc:
        problems.append(str(exc))
        return None


@dataclass(frozen=True)
class InitScript:
    text: str
    # Why it does not run at the next boot, or "": systemd's rc-local.service and SysV's rc
    # run it only when executable, and only in a boot that reaches them.
    why_not: str = ""

    @property
    def runs(self) -> bool:
        return not self.why_not


def collect_init_scripts(root: HostRoot, problems: list[str],
                         starts: BootStarts | None = None) -> dict[str, InitScript]:
    skipped = (starts or BootStarts()).rc_local_skipped
    scripts: dict[str, InitScript] = {}
    for path in INIT_SCRIPTS:
        text = _read_noting(root, path, problems)
        if text is not None:
            scripts[path] = InitScript(text, NOT_EXECUTABLE if not root.is_executable(path)
                                       else skipped)
    return scripts


def collect_udev_rules(root: HostRoot, problems: list[str]) -> list[tuple[str, UdevRule]]:
    # As udev does: a file in /etc hides a same-named one in /usr/lib or /lib.
    files = merged(root, UDEV_RULES_DIRS, ".rules", problems)
    rules: list[tuple[str, UdevRule]] = []
    for name in sorted(files):
        try:
            text = root.read_text(files[name], 1024 * 1024)
        except FactError as exc:
            problems.append(str(exc))
            continue
        if "block" not in text and "KERNEL" not in text:
            continue  # cheap filter: only rules that can reach block devices matter here
        rules.extend((files[name], rule) for rule in parse_udev_rules(text))
    return rules


def collect_host(root: HostRoot) -> HostInfo:
    info = HostInfo()

    def text(path: str) -> str:
        try:
            return root.read_optional(path, 1024 * 1024) or ""
        except FactError:
            return ""

    info.hostname = host_name(text(ETC_HOSTNAME), text(KERNEL_HOSTNAME))
    # systemd's machine-id(5): 32 lower-case hex digits; anything else is not an identity.
    machine_id = text("/etc/machine-id").strip()
    info.machine_id = machine_id if re.fullmatch(r"[0-9a-f]{32}", machine_id) else ""
    info.kernel = text("/proc/sys/kernel/osrelease").strip()
    # The release files, read once for the name shown and the platform judged: None where
    # missing. What cannot be read never makes a rule notapplicable.
    releases: dict[str, str | None] = {}
    unreadable = False
    for path in (OS_RELEASE, REDHAT_RELEASE):
        try:
            releases[path] = root.read_optional(path, 1024 * 1024)
        except FactError:
            releases[path], unreadable = None, True
    release = shell_assignments(releases[OS_RELEASE] or "")
    info.os = release.get("PRETTY_NAME") or (releases[REDHAT_RELEASE] or "").strip()
    info.os_platform = "" if unreadable else os_platform(releases[OS_RELEASE],
                                                         releases[REDHAT_RELEASE])
    info.cpus = cpuinfo_count(text("/proc/cpuinfo"))
    info.memory_kib = meminfo_kib(text("/proc/meminfo"))
    return info


def collect_lvm_read_ahead(root: HostRoot, problems: list[str]) -> dict[str, tuple[int, str]]:
    """The read-ahead LVM sets on each LV at activation, by the LV's device-mapper name."""
    found: dict[str, tuple[int, str]] = {}
    try:
        paths = root.glob_files(LVM_BACKUP)
    except FactError as exc:
        problems.append(str(exc))
        return found
    for path in paths:
        text = _read_noting(root, path, problems)
        vg = posixpath.basename(path)
        for lv, sectors in lv_read_ahead(text or "").items():
            found[lvm_dm_name(vg, lv)] = (sectors, path)
    return found


def _mountinfo(root: HostRoot, problems: list[str]) -> dict[str, str]:
    text = _read_noting(root, MOUNTINFO, problems, MOUNTS_LIMIT)
    return parse_mountinfo(text) if text else {}


def _tuned_version(tuned: TunedFacts | Unavailable) -> tuple[tuple[int, int, int] | None, str]:
    return (tuned.version, tuned.version_source) if isinstance(tuned, TunedFacts) else (None, "")


def collect(root: HostRoot, values: Mapping[str, Any], value_origins: Mapping[str, str],
            role: str = "auto", sysctl_keys: list[str] | None = None) -> Facts:
    problems: list[str] = []
    mount_problems: list[str] = []
    mounts: list[MountEntry] | Unavailable
    try:
        mounts, mount_problems = parse_mounts(
            root.read_text("/proc/mounts", MOUNTS_LIMIT, allow_nul=True))
    except FactError as exc:
        mounts = Unavailable(str(exc))
    discovery = discover(root, values, value_origins)
    graph = read_topology(root)
    sas_filesystems: list[SasFilesystem] | Unavailable
    unplaced: list[tuple[SasDir, str]] = []
    if isinstance(mounts, Unavailable):
        sas_filesystems = mounts
    else:
        numbers = _mountinfo(root, problems)
        sas_filesystems, unplaced = place_sas_dirs(root, discovery.dirs, mounts, graph,
                                                   numbers)
        # Named at the top of every output, not only on each rule's card.
        problems.extend(why for _, why in unplaced)
        for filesystem in sas_filesystems:
            if isinstance(filesystem.device, Unavailable) and filesystem.mount.device.startswith(
                    VXVM_DEVICE_DIRS):
                place_on_array(root, graph, filesystem, values.get("array_vendors") or [])
            for layer in filesystem.stack:
                read_queue(root, graph.devices[layer.device])
            if filesystem.mount.fstype in NETWORK_FS_TYPES:
                filesystem.bdi = read_bdi(root, numbers.get(filesystem.mount.mountpoint))
    decision = detect_role(root) if role == "auto" else forced_role(role)
    governors = _guard(lambda: collect_governors(root))
    boot = collect_boot(root, problems)
    # What the next boot starts: its systemd target, or its SysV run level.
    starts = boot_starts(root, boot.deciding[0].args if boot.deciding else (), problems)
    init_scripts = collect_init_scripts(root, problems, starts)
    # tuned's ${f:virt_check} asks virt-what, which names a hypervisor or a container
    virtual = None if decision.problems else decision.name in ("kvm_guest", "container")
    tuned = _guard(lambda: collect_tuned(root, virtual, starts))
    ktune = tuned.ktune if not isinstance(tuned, Unavailable) and tuned.ktune.enabled else None
    return Facts(
        root=root.root,
        host=collect_host(root),
        role=decision,
        mounts=mounts,
        mount_problems=mount_problems,
        discovery=discovery,
        sas_filesystems=sas_filesystems,
        unplaced_dirs=unplaced,
        block=graph,
        thp=_guard(lambda: collect_thp(root)),
        governors=governors if isinstance(governors, dict) else {"cpu*": governors},
        sysctl=collect_sysctl(root, sysctl_keys or []),
        tuned=tuned,
        boot=boot,
        init_scripts=init_scripts,
        boot_writes=collect_boot_writes(
            root, {path: (script.text, script.why_not) for path, script in init_scripts.items()},
            problems, starts),
        sysctl_boot=collect_sysctl_boot(root, ktune, problems, *_tuned_version(tuned)),
        boot_mounts=collect_boot_mounts(root, problems),
        lvm_read_ahead=collect_lvm_read_ahead(root, problems),
        udev_rules=collect_udev_rules(root, problems),
        numa=collect_numa(root),
        cpuidle=collect_cpuidle(root),
        cpu_features=collect_cpu_features(root),
        guests=collect_guests(root, problems),
        stripe_published=stripe_published(root, graph),
        disk_vendors=disk_vendors(root, graph),
        multipath=collect_multipath(root),
        scratch={} if isinstance(mounts, Unavailable) else scratch_mounts(
            root, values.get("scratch_dirs") or [], mounts),
        multipath_detects=knows_detect_pgpolicy(root),
        multipath_runtime=collect_runtime_maps(root),
        multipath_table=host_table(root),
        vxfs_tunables=parse_tunefstab(_read_noting(root, VXFS_TUNEFSTAB, problems) or ""),
        limits=collect_limits(root, values, discovery.files_read),
        selinux=collect_selinux(root),
        problems=problems,
    )
