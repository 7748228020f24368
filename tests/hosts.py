"""A compliant SAS host as a baseline; tests change one thing to make a rule fail.

``sas_host(path, **changes)`` builds a RHEL 8 style root: LVM on a 4-path
multipath LUN, xfs with noatime for DATA, WORK and UTILLOC, THP never, the
performance governor, a custom tuned profile including throughput-performance.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tests.example_roots import SAS_TUNED_PROFILE
from tests.rootbuilder import RootBuilder

SAS_PROFILE = SAS_TUNED_PROFILE


@dataclass
class SasFs:
    lv: str
    mountpoint: str
    fstype: str = "xfs"
    options: str = "rw,noatime,attr2,inode64,noquota"


@dataclass
class HostSpec:
    kernel: str = "4.18.0-513.el8.x86_64"
    thp_enabled: str | None = "always madvise [never]"
    thp_defrag: str = "always defer defer+madvise madvise [never]"
    rhel6_thp: bool = False
    governor: str | None = "performance"
    cpus: int = 4
    cpu_flags: str = "fpu vme de pse tsc msr pae"
    dirty_ratio: int | None = 40
    path_scheduler: str = "[mq-deadline] kyber bfq none"
    mpath_scheduler: str = "[mq-deadline] kyber bfq none"
    read_ahead_kb: int = 4096
    filesystems: list[SasFs] = field(default_factory=lambda: [
        SasFs("sasdata", "/sasdata"), SasFs("saswork", "/saswork"),
        SasFs("sasutil", "/sasutil")])
    tuned_installed: bool = True
    tuned_enabled: bool = True
    tuned_active: str | None = "sas-performance"
    tuned_custom: dict[str, str] = field(default_factory=lambda: {"sas-performance": SAS_PROFILE})
    bls_options: str | None = "root=/dev/mapper/rhel-root ro transparent_hugepage=never"
    grub_cmdline: str | None = "crashkernel=auto transparent_hugepage=never"
    sas_local_cfg: str | None = "-WORK /saswork\n-UTILLOC /sasutil\n"
    extra_files: dict[str, str] = field(default_factory=dict)
    extra_links: dict[str, str] = field(default_factory=dict)


BASELINE_SETS = ["sas_data_dirs=/sasdata"]


def build_host(path: Path, spec: HostSpec) -> RootBuilder:
    root = RootBuilder(path)
    root.identity("sastest", spec.kernel, "Red Hat Enterprise Linux 8.9 (Ootpa)")
    root.disk("sda", read_ahead_kb=128).partition("sda", "sda1", 1).partition("sda", "sda2", 2)
    root.dm("dm-0", "rhel-root", ["sda2"])
    lvs = [fs.lv for fs in spec.filesystems]
    root.multipath_lvm("mpatha", ["sdb", "sdc", "sdd", "sde"], "sasvg", lvs, first_dm=1,
                       scheduler=spec.mpath_scheduler, path_scheduler=spec.path_scheduler,
                       read_ahead_kb=spec.read_ahead_kb)
    root.mount("/dev/mapper/rhel-root", "/", "xfs", "rw,relatime,attr2,inode64,noquota")
    root.mount("/dev/sda1", "/boot", "xfs", "rw,relatime,attr2,inode64,noquota")
    for fs in spec.filesystems:
        root.mount(f"/dev/mapper/sasvg-{fs.lv}", fs.mountpoint, fs.fstype, fs.options)
    root.write_mounts()
    if spec.thp_enabled is not None:
        root.thp(spec.thp_enabled, spec.thp_defrag, rhel6=spec.rhel6_thp)
    root.cpus(spec.cpus, spec.governor, flags=spec.cpu_flags)
    if spec.dirty_ratio is not None:
        root.sysctl("vm.dirty_ratio", spec.dirty_ratio)
    if spec.tuned_installed:
        root.tuned(spec.tuned_active, enabled=spec.tuned_enabled, custom=spec.tuned_custom)
    if spec.grub_cmdline is not None:
        root.grub_defaults(spec.grub_cmdline)
    if spec.bls_options is not None:
        root.bls_entry(spec.kernel, spec.bls_options)
    root.sas_install(local=spec.sas_local_cfg)
    for file_path, text in spec.extra_files.items():
        root.file(file_path, text)
    for link, target in spec.extra_links.items():
        root.symlink(link, target)
    return root


def sas_host(path: Path, **changes: Any) -> Path:
    build_host(path, replace(HostSpec(), **changes))
    return path


def tree_digest(path: Path) -> str:
    """Names, modes, modification times, link targets and contents of a whole tree: equal
    digests mean nothing was written."""
    digest = hashlib.sha256()
    for directory, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(dirs + files):
            full = Path(directory) / name
            info = full.lstat()
            digest.update(f"{full.relative_to(path)} {info.st_mode} {info.st_mtime_ns} "
                          f"{info.st_size}".encode())
            if full.is_symlink():
                digest.update(os.readlink(full).encode())
            elif full.is_file():
                digest.update(full.read_bytes())
    return digest.hexdigest()
