"""A compliant SAS host as a baseline; tests change one thing to make a rule fail.

``sas_host(path, **changes)`` builds a RHEL 8 style root: LVM stripes over two 4-path
multipath LUNs, xfs with noatime for DATA, WORK and UTILLOC, THP never, the
performance governor, a custom tuned profile including throughput-performance.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tests.support.boot_samples import RHEL6_ARGS
from tests.support.example_roots import SAS_TUNED_PROFILE
from tests.support.rootbuilder import RootBuilder

# The baseline host's profile is one an earlier sascheck fix wrote (its first line says so),
# which a fix may rewrite; a profile of that name without it is the site's, kept (issue 48).
SAS_PROFILE = ("# sas-performance: a tuned profile for SAS, written by sascheck 0.1.0 "
               "(profile default).\n" + SAS_TUNED_PROFILE)


@dataclass
class SasFs:
    lv: str
    mountpoint: str
    fstype: str = "xfs"
    options: str = "rw,noatime,attr2,inode64,noquota"
    fstab: str | None = ""  # its /etc/fstab options: "" the mounted ones, None no line
    source: str = ""  # the device /proc/mounts names, if not the LV's /dev/mapper node
    bdi_read_ahead_kb: int | None = None  # NFS: its bdi's read_ahead_kb (None: no bdi file)

    @property
    def network(self) -> bool:
        return self.fstype in ("nfs", "nfs4")

    @property
    def own_device(self) -> bool:
        """Mounted from something other than its LV (NFS, a Veritas VxVM volume): the LV's
        numbers are not the mount's."""
        return self.network or self.source.startswith("/dev/vx/")


# pam's /etc/security/limits.d/20-nproc.conf on RHEL 7 and 8.
RHEL_NPROC = ("# Default limit for number of user's processes to prevent\n"
              "# accidental fork bombs.\n# See rhbz #432903 for reasoning.\n\n"
              "*          soft    nproc     4096\nroot       soft    nproc     unlimited\n")
# viya-ark's pre.ulimit_config (commit 621649a): the file made with its first line, then each
# of defaults/main.yml's ulimits as community.general's pam_limits module writes a new one
# (plugins/modules/pam_limits.py line 342 at ade4f3e: tab-separated, no comment).
VIYA_ARK_LIMITS = ("#Custom file for SAS Viya ulimits#\n*\t-\tnofile\t150000\n"
                   "sas\t-\tstack\t10240\n*\t-\tnproc\t100000\nsas\t-\tnofile\t150000\n"
                   "sas\t-\tnproc\t100000\n")
VIYA_ARK_FILE = "/etc/security/limits.d/viya_3.4_limits.conf"
# What an administrator adds for SAS's installer account: soft and hard, as SAS 9.4's
# middle-tier tuning guide asks ("About Tuning the Operating System": at least 20480).
SAS_LIMITS = "sas    soft    nofile    20480\nsas    hard    nofile    20480\n"


@dataclass
class HostSpec:
    kernel: str = "4.18.0-513.el8.x86_64"
    pretty_name: str = "Red Hat Enterprise Linux 8.9 (Ootpa)"  # os-release's PRETTY_NAME
    thp_enabled: str | None = "always madvise [never]"
    thp_defrag: str = "always defer defer+madvise madvise [never]"
    rhel6_thp: bool = False
    governor: str | None = "performance"
    cpus: int = 4
    sockets: int | None = None  # None: /proc/cpuinfo without topology lines
    numa_online: str | None = None  # /sys/devices/system/node/online, e.g. "0-1"
    # /proc/cmdline: None means BOOT_IMAGE plus the BLS options (what that entry booted)
    proc_cmdline: str | None = None
    cpu_flags: str = "fpu vme de pse tsc msr pae"
    dirty_ratio: int | None = 40
    swappiness: int | None = 10  # throughput-performance's, which the baseline's profile includes
    path_scheduler: str = "[mq-deadline] kyber bfq none"
    mpath_scheduler: str = "[mq-deadline] kyber bfq none"
    path_vendor: str = "XtremIO"  # SCSI vendor of the multipath's paths ("ATA": SATA disks)
    path_model: str = "XtremApp"  # and their SCSI product
    path_hw_queues: int | None = None  # None: one for a blk-mq scheduler, else none
    read_ahead_kb: int = 4096
    # The SAS volume group's LUNs (multipath maps of 4 paths each); with more than one the
    # volumes are LVM stripes of stripe_kib over all of them (seed 000: 64 KiB stripes).
    sas_luns: int = 2
    stripe_kib: int = 64
    lun_paths: int = 4  # SCSI paths of each LUN's multipath map
    path_wwids: bool = False  # paths show their LUN's wwid (device/wwid), as DMP groups them
    filesystems: list[SasFs] = field(default_factory=lambda: [
        SasFs("sasdata", "/sasdata"), SasFs("saswork", "/saswork"),
        SasFs("sasutil", "/sasutil")])
    tuned_installed: bool = True
    tuned_enabled: bool = True
    tuned_active: str | None = "sas-performance"
    tuned_custom: dict[str, str] = field(default_factory=lambda: {"sas-performance": SAS_PROFILE})
    tuned_shipped: dict[str, str] | None = None  # None: every stock profile (STOCK_TUNED)
    sas_dirs: tuple[str, ...] = ()  # directories the SAS site values name (a real host has them)
    tuned_new_layout: bool = False  # tuned 2.23+: .../tuned/profiles/NAME
    bls_options: str | None = "root=/dev/mapper/rhel-root ro transparent_hugepage=never"
    grub_cmdline: str | None = "crashkernel=auto transparent_hugepage=never"
    sas_local_cfg: str | None = "-WORK /saswork\n-UTILLOC /sasutil\n-BUFSIZE 64K\n"
    # /etc/tmpfiles.d keeps THP defrag never at boot, whatever the tuned profile does not set.
    defrag_tmpfiles: bool = True
    # The SAS installer account owning the installation, and what its administrator added
    # to pam_limits for it (SAS 9.4's middle-tier tuning guide asks for 20480 open files).
    sas_account: bool = True
    sas_limits: str | None = SAS_LIMITS
    extra_files: dict[str, str] = field(default_factory=dict)
    without_files: tuple[str, ...] = ()  # e.g. /etc/os-release, which RHEL 5 and 6 lack
    extra_links: dict[str, str] = field(default_factory=dict)
    # Extra files made executable (when written): a site that puts commands in rc.local
    # makes it executable, as RHEL 7+ requires; () shows RHEL 7's shipped 0644 rc.local.
    executables: tuple[str, ...] = ("/etc/rc.d/rc.local",)


BASELINE_SETS = ["sas_data_dirs=/sasdata"]
# What the baseline host (bare metal, default profile) does not pass, and why: every other
# rule of the catalogue passes on it (tests/test_verdicts.py), so a new rule that errors or
# fails there is caught without a list of the rules that pass.
BASELINE_NOT_PASSING = {
    "thp_enabled_on_kvm_host": ("notapplicable", "for a KVM host; the baseline is bare metal"),
    "kvm_guest_disks_direct": ("notapplicable", "for a KVM guest; the baseline is bare metal"),
    "cpu_turbo_smt_on": ("notapplicable", "the baseline has no CPU feature files to read"),
    "sas_fs_throughput": ("notchecked", "sascheck iotest measures it; a scan reads files"),
}
# Rules the default profile leaves out, judged with their own profile's values elsewhere.
BASELINE_OUTSIDE_DEFAULT = {"cpu_dma_latency": "the xtremio profile's only",
                            **dict.fromkeys(("vm_max_map_count", "max_map_count_at_boot",
                                             "net_core_somaxconn", "somaxconn_at_boot",
                                             "vm_overcommit_memory",
                                             "overcommit_memory_at_boot", "kernel_sem",
                                             "kernel_sem_at_boot", "sas_accounts_nproc",
                                             "sas_accounts_stack", "selinux_viya_deployment"),
                                            "the viya3 profile's only (tests/test_viya3.py)")}
# A tmpfiles.d(5) line writing a THP file at boot, as systemd-tmpfiles reads it.
THP_TMPFILES = "# THP off for SAS\nw /sys/kernel/mm/transparent_hugepage/{file} - - - - never\n"
# RHEL's rc.local (Red Hat's THP solution): both files, RHEL 6's names.
RHEL6_RC_LOCAL = "".join(f"echo never > /sys/kernel/mm/redhat_transparent_hugepage/{file}\n"
                         for file in ("enabled", "defrag"))

# RHEL 9's throughput-performance as tuned 2.20-2.21 ship it (profiles/throughput-performance/
# tuned.conf at tag v2.21.0), abridged: THP never only in a unit for Marvell ThunderX.
THROUGHPUT_PERFORMANCE_2_21 = """\
[main]
summary=Broadly applicable tuning that provides excellent performance across a variety of common server workloads

[variables]
thunderx_cpuinfo_regex=CPU part\\s+:\\s+(0x0?516)|(0x0?af)|(0x0?a[0-3])|(0x0?b8)\\b
amd_cpuinfo_regex=model name\\s+:.*\\bAMD\\b

[cpu]
governor=performance
energy_perf_bias=performance
min_perf_pct=100

# Marvell ThunderX
[vm.thunderx]
type=vm
uname_regex=aarch64
cpuinfo_regex=${thunderx_cpuinfo_regex}
transparent_hugepages=never

[disk]
# The default unit for readahead is KiB.  This can be adjusted to sectors
# by specifying the relevant suffix, eg. (readahead => 8192 s). There must
# be at least one space between the number and suffix (if suffix is specified).
readahead=>4096

[sysctl]
vm.dirty_ratio = 40
vm.dirty_background_ratio = 10
vm.swappiness=10
"""
# /proc/cpuinfo of a Marvell ThunderX2 (arm64: no "model name"; the part number identifies it).
THUNDERX2_CPUINFO = "".join(
    f"processor\t: {n}\nBogoMIPS\t: 400.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 "
    "crc32 atomics cpuid asimdrdm\nCPU implementer\t: 0x43\nCPU architecture: 8\n"
    "CPU variant\t: 0x1\nCPU part\t: 0x0af\nCPU revision\t: 2\n\n" for n in range(4))
RHEL9_STOCK = "/usr/lib/tuned/throughput-performance/tuned.conf"
# RHEL 6's /etc/inittab (initscripts 9.03), abridged: upstart reads only initdefault.
RHEL6_INITTAB = """\
# inittab is only used by upstart for the default runlevel.
#
# ADDING OTHER CONFIGURATION HERE WILL HAVE NO EFFECT ON YOUR SYSTEM.
#
# Default runlevel. The runlevels used are:
#   0 - halt (Do NOT set initdefault to this)
#   1 - Single user mode
#   3 - Full multiuser mode
#   5 - X11
#
id:{level}:initdefault:
"""
# A site's own boot target, as systemd.special(7) suggests writing one.
SAS_TARGET = ("[Unit]\nDescription=SAS batch host\nRequires=multi-user.target\n"
              "After=multi-user.target\nAllowIsolate=yes\n")
NO_THP_ON_CMDLINE = {"bls_options": "root=/dev/mapper/rhel-root ro", "grub_cmdline": "",
                     "tuned_active": "throughput-performance"}


def sd_name(index: int) -> str:
    """The kernel's name for the index-th SCSI disk: sda ... sdz, sdaa, sdab ..."""
    return "sd" + (chr(ord("a") + index // 26 - 1) if index >= 26 else "") + chr(
        ord("a") + index % 26)


def build_host(path: Path, spec: HostSpec) -> RootBuilder:
    root = RootBuilder(path)
    root.identity("sastest", spec.kernel, spec.pretty_name)
    if not spec.kernel.startswith("2."):  # RHEL 7+ boot with systemd, as its units show
        root.file("/usr/lib/systemd/system/systemd-sysctl.service",
                  "[Unit]\nDescription=Apply Kernel Variables\n")
    else:  # RHEL 5/6's initscripts: rc runs rc.local from S99local in run levels 2 to 5
        for level in "2345":
            root.symlink(f"/etc/rc.d/rc{level}.d/S99local", "../rc.local")
    root.disk("sda", read_ahead_kb=128).partition("sda", "sda1", 1).partition("sda", "sda2", 2)
    root.dm("dm-0", "rhel-root", ["sda2"])
    lvs = [fs.lv for fs in spec.filesystems]
    paths = [[sd_name(1 + spec.lun_paths * lun + path) for path in range(spec.lun_paths)]
             for lun in range(spec.sas_luns)]
    more_luns = [(f"mpath{chr(ord('a') + lun)}", paths[lun]) for lun in range(1, spec.sas_luns)]
    root.multipath_lvm("mpatha", paths[0], "sasvg", lvs, first_dm=1, path_wwids=spec.path_wwids,
                       scheduler=spec.mpath_scheduler, path_scheduler=spec.path_scheduler,
                       read_ahead_kb=spec.read_ahead_kb, path_vendor=spec.path_vendor,
                       path_hw_queues=spec.path_hw_queues, path_model=spec.path_model,
                       more_luns=more_luns, stripe_kib=spec.stripe_kib)
    root.mount("/dev/mapper/rhel-root", "/", "xfs", "rw,relatime,attr2,inode64,noquota")
    root.mount("/dev/sda1", "/boot", "xfs", "rw,relatime,attr2,inode64,noquota")
    for fs in spec.filesystems:
        node = f"/dev/mapper/sasvg-{fs.lv}"
        root.mount(fs.source or node, fs.mountpoint, fs.fstype, fs.options,
                   number_of=None if fs.own_device else node)
        if fs.bdi_read_ahead_kb is not None:
            root.bdi(fs.mountpoint, fs.bdi_read_ahead_kb)
    root.write_mounts()
    root.fstab([("/dev/mapper/rhel-root", "/", "xfs", "defaults"),
                ("UUID=0b2a2a5e-5b3c-4f0e-9d8e-6b2c1f0a7e11", "/boot", "xfs", "defaults")]
               + [(f"/dev/mapper/sasvg-{fs.lv}", fs.mountpoint, fs.fstype, fs.fstab or fs.options)
                  for fs in spec.filesystems if fs.fstab is not None])
    if spec.thp_enabled is not None:
        root.thp(spec.thp_enabled, spec.thp_defrag, rhel6=spec.rhel6_thp)
    root.cpus(spec.cpus, spec.governor, flags=spec.cpu_flags, sockets=spec.sockets)
    if spec.numa_online is not None:
        root.file("/sys/devices/system/node/online", spec.numa_online + "\n")
    # What the running kernel booted with: the BLS entry's options (GRUB 2 adds BOOT_IMAGE),
    # else a GRUB 0.97 title's kernel line as anaconda writes it (RHEL 5, 6).
    cmdline = spec.proc_cmdline if spec.proc_cmdline is not None else (
        f"BOOT_IMAGE=(hd0,msdos1)/vmlinuz-{spec.kernel} {spec.bls_options}"
        if spec.bls_options is not None else RHEL6_ARGS)
    root.file("/proc/cmdline", cmdline + "\n")
    if spec.dirty_ratio is not None:
        root.sysctl("vm.dirty_ratio", spec.dirty_ratio)
    if spec.swappiness is not None:
        root.sysctl("vm.swappiness", spec.swappiness)
    if spec.tuned_installed:
        # RHEL 5 and 6 (2.6 kernels) boot with SysV init: no systemd directories.
        root.tuned(spec.tuned_active, enabled=spec.tuned_enabled, custom=spec.tuned_custom,
                   sysv=spec.kernel.startswith("2."), shipped=spec.tuned_shipped,
                   new_layout=spec.tuned_new_layout)
    if spec.grub_cmdline is not None:
        root.grub_defaults(spec.grub_cmdline)
    if spec.bls_options is not None:
        root.bls_entry(spec.kernel, spec.bls_options)
    root.sas_install(local=spec.sas_local_cfg)
    if spec.sas_account:
        root.sas_account()
    if spec.sas_limits is not None:
        root.file("/etc/security/limits.d/99-sas.conf", spec.sas_limits)
    for directory in spec.sas_dirs:
        root.kept_directory(directory)
    if spec.defrag_tmpfiles:
        root.file("/etc/tmpfiles.d/thp-defrag.conf", THP_TMPFILES.format(file="defrag"))
    for file_path, text in spec.extra_files.items():
        # A tuned 0.2 profile's ktune.sh is mode 0755 in tuned's tree, copied with cp -a.
        executable = file_path in spec.executables or file_path.endswith("/ktune.sh")
        root.file(file_path, text, mode=0o755 if executable else None)
    for link, target in spec.extra_links.items():
        root.symlink(link, target)
    for file_path in spec.without_files:
        (path / file_path.lstrip("/")).unlink()
    return root


def sas_host(path: Path, **changes: Any) -> Path:
    build_host(path, replace(HostSpec(), **changes))
    return path


def tree_digest(path: Path, times: bool = True) -> str:
    """Names, modes, owners, modification times, link targets and contents of a whole tree:
    equal digests mean nothing was written. Without ``times``, equal digests mean the same
    bytes, links and modes (a directory whose entries came and went, a link pointed away
    and back, still match)."""
    digest = hashlib.sha256()
    for directory, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(dirs + files):
            full = Path(directory) / name
            info = full.lstat()
            when = info.st_mtime_ns if times else 0
            digest.update(f"{full.relative_to(path)} {info.st_mode} {info.st_uid}:{info.st_gid} "
                          f"{when} {info.st_size}".encode())
            if full.is_symlink():
                digest.update(os.readlink(full).encode())
            elif full.is_file():
                digest.update(full.read_bytes())
    return digest.hexdigest()
