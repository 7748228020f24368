"""What `sascheck iotest` will measure, and whether it may: one target per file system, the
fio parameters, and the refusals (missing, read-only, not writable, too little space)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..rules.errors import UserInputError
from ..scanner.parsers.mounts import MountEntry

KIB, MIB, GIB = 1024, 1024**2, 1024**3
# Two ways to measure (--method). "sas" is SAS's own: sassoftware/viya-perf-tool
# (viya_perf_tool.sh, validate_system and start_iotests) writes with dd, 64 KiB blocks
# through the page cache closed by an fsync (conv=fsync), one writer per physical core,
# pushes the files out of the cache before reading them back, and divides by physical
# cores; its timing (/usr/bin/time around dd) includes the fsync. "fio-direct" is the
# earlier default: direct I/O, the SAS papers' 256 KiB stripe as block, at most 16 jobs,
# each phase stopped after PHASE_SECONDS.
SAS_BLOCK = 64 * KIB
DEFAULT_BLOCK = 256 * KIB  # fio-direct where no -BUFSIZE is configured (SAS papers: 256K stripes)
MAX_DEFAULT_JOBS = 16  # fio-direct only
# fio-direct's default size: as much as fits in a quarter of the free space (so twice the
# test size stays free), at most this per job, each phase stopped after PHASE_SECONDS.
DEFAULT_SIZE_CAP = 4 * GIB
MIN_SIZE = 16 * MIB
PHASE_SECONDS = 15
# The SAS method's default: files totalling twice the RAM (SAS's tests size them well
# beyond it), where a quarter of the free space allows.
SAS_RAM_FACTOR = 2
# Memory-backed and kernel file systems: a run there measures RAM or is meaningless
# (iotest --dir /dev, /proc, /dev/shm).
NOT_DISK_FILE_SYSTEMS = frozenset({
    "proc", "sysfs", "devtmpfs", "devpts", "tmpfs", "ramfs", "hugetlbfs", "mqueue", "cgroup",
    "cgroup2", "debugfs", "tracefs", "securityfs", "configfs", "pstore", "bpf", "efivarfs",
    "fusectl", "binfmt_misc", "autofs", "rpc_pipefs", "nsfs", "selinuxfs"})
_SIZE = re.compile(r"^([0-9]+)\s*([KMGT]?)(?:I?B)?$", re.IGNORECASE)


class PlanError(UserInputError):
    """The test cannot be run as asked; one line for the user, nothing was written."""


@dataclass(frozen=True)
class Target:
    directory: str  # the private test directory goes here
    mountpoint: str
    fstype: str
    device: str
    roles: tuple[str, ...]  # SAS roles on this file system; () for a --dir outside them
    # st_dev of the file system planned: the private directory must be made on it (the
    # directory's name may have been swapped for a link to another one since)
    st_dev: int | None = None


@dataclass(frozen=True)
class Plan:
    target: Target
    jobs: int
    block_bytes: int
    block_source: str
    size_bytes: int  # per job
    size_source: str  # "--size" or how the default was chosen
    runtime_s: int | None
    direct: bool
    free_bytes: int
    method: str = "fio-direct"
    ram_bytes: int | None = None  # the host's MemTotal, for the size against RAM
    jobs_source: str = "--jobs"

    @property
    def total_bytes(self) -> int:
        return self.size_bytes * self.jobs

    @property
    def cache(self) -> str:
        """How the page cache is kept out of the figures."""
        if self.direct:
            return "direct I/O: the page cache is bypassed"
        return ("writes closed by fsync and timed until it returns; the files' cached pages "
                "dropped before reading (fio invalidate: posix_fadvise DONTNEED)")

    def describe(self) -> str:
        kind = "direct I/O" if self.direct else "buffered I/O, fsync at the end"
        limit = f", each phase at most {self.runtime_s} s" if self.runtime_s else ""
        share = self.total_bytes / self.ram_bytes if self.ram_bytes else None
        # Below a tenth of RAM a "0.0 x RAM" says nothing; a share of it does.
        ram = ("" if share is None else f" ({share:.1f} x RAM)" if share >= 0.1
               else f" ({max(share * 100, 0.1):.1f} % of RAM: the page cache can hold it)")
        return (f"{self.target.mountpoint} ({self.target.fstype} on {self.target.device}): "
                f"{self.method} method, sequential write then read, {self.jobs} jobs "
                f"({self.jobs_source}) x {human(self.size_bytes)}{ram}, "
                f"{human(self.block_bytes)} blocks, {kind}{limit}; needs "
                f"{human(2 * self.total_bytes)} free, has {human(self.free_bytes)}")


def human(size: int) -> str:
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value % 1 else f"{int(value)} {unit}"
    return f"{size} B"


def parse_size(text: str) -> int:
    """``256k``, ``4G``, ``512MiB``, ``1048576``: binary units."""
    match = _SIZE.match(text.strip())
    if not match or int(match.group(1)) == 0:
        raise PlanError(f"{text!r} is not a size (write 256K, 512M, 4G)")
    power = " KMGT".index(match.group(2).upper() or " ")
    return int(match.group(1)) * (1 << (10 * power))


def mount_of(path: str, mounts: Sequence[MountEntry]) -> MountEntry | None:
    """The mount holding ``path`` (already resolved): the longest mount point above it,
    the last one mounted there when several are stacked."""
    best: MountEntry | None = None
    for mount in mounts:
        point = mount.mountpoint.rstrip("/") or "/"
        inside = path == point or path.startswith(point if point == "/" else point + "/")
        if inside and (best is None or len(point) >= len(best.mountpoint.rstrip("/") or "/")):
            best = mount
    return best


def targets(directories: Iterable[tuple[str, str]], mounts: Sequence[MountEntry]
            ) -> list[Target]:
    """One target per file system from (role or "", directory) pairs, in the order given;
    the first directory of each file system is where its test runs."""
    by_device: dict[int, tuple[str, str, list[str]]] = {}
    for role, directory in directories:
        resolved, device = _held(directory)
        entry = by_device.setdefault(device, (directory, resolved, []))
        if role and role not in entry[2]:
            entry[2].append(role)
    found = []
    for device, (directory, resolved, roles) in by_device.items():
        mount = mount_of(resolved, mounts)
        if mount is not None and _device_of(mount.mountpoint) != device:
            # The directory changed between its opening and now (a SAS directory swapped
            # for a link, issue 44), or /proc/mounts does not show its file system: the
            # figures would be reported for a file system fio did not write on.
            raise PlanError(f"{directory}: its file system is not the one mounted at "
                            f"{mount.mountpoint}, where its path leads (was it swapped for "
                            "a link?); nothing was measured")
        found.append(Target(directory, mount.mountpoint if mount else "?",
                            mount.fstype if mount else "?", mount.device if mount else "?",
                            tuple(roles), device))
    return found


def _held(directory: str) -> tuple[str, int]:
    """Where ``directory`` is and its file system, read from one opening of it: the path
    the kernel holds for the descriptor and its st_dev (a path resolved twice may lead to
    two places)."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except NotADirectoryError:
        raise PlanError(f"{directory}: not a directory") from None
    except OSError as exc:
        raise PlanError(f"{directory}: {exc.strerror}") from exc
    try:
        return os.readlink(f"/proc/self/fd/{fd}"), os.fstat(fd).st_dev
    except OSError as exc:
        raise PlanError(f"{directory}: {exc.strerror}") from exc
    finally:
        os.close(fd)


def _device_of(mountpoint: str) -> int | None:
    try:
        return os.stat(mountpoint).st_dev
    except OSError:
        return None


def free_bytes(directory: str) -> int:
    status = os.statvfs(directory)
    return status.f_bavail * status.f_frsize


def refusal(target: Target) -> str | None:
    """Why the test may not write in this directory, or None."""
    if target.fstype in NOT_DISK_FILE_SYSTEMS:
        return (f"{target.directory}: on {target.fstype} ({target.mountpoint}), not a disk "
                "file system: there is nothing to measure")
    try:
        status = os.statvfs(target.directory)
        mode = os.stat(target.directory).st_mode
    except OSError as exc:
        return f"{target.directory}: {exc.strerror}"
    if status.f_flag & os.ST_RDONLY:
        return f"{target.directory}: on a read-only file system ({target.mountpoint})"
    if not os.access(target.directory, os.W_OK | os.X_OK):
        return f"{target.directory}: not writable by this user"
    if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
        # Anyone may rename what root makes there; SAS WORK areas shared by all users are
        # 1777 (sticky), as /tmp is.
        return (f"{target.directory}: writable by every user without the sticky bit; "
                "chmod +t it or test a subdirectory")
    return None


def plan(target: Target, jobs: tuple[int, str], block: tuple[int, str], size: int | None,
         method: str, ram_bytes: int | None, direct: bool | None = None) -> Plan:
    """The run for one target, or PlanError when it does not fit (less than twice the test
    size free). ``direct`` overrides the method's (--buffered with fio-direct)."""
    problem = refusal(target)
    if problem:
        raise PlanError(problem)
    free = free_bytes(target.directory)
    count, jobs_source = jobs
    block_bytes, block_source = block
    quarter = free // (4 * count)
    if size is not None:
        per_job, source, runtime = max(size // block_bytes, 1) * block_bytes, "--size", None
    elif method == "sas":
        wanted = -(-SAS_RAM_FACTOR * (ram_bytes or 0) // count)  # ceiling
        if ram_bytes and wanted <= quarter:
            per_job, source = wanted, f"{SAS_RAM_FACTOR} x RAM in all"
        else:
            per_job = quarter
            source = ("a quarter of the free space" + (
                f" ({SAS_RAM_FACTOR} x RAM does not fit)" if ram_bytes else " (RAM unknown)"))
        per_job, runtime = max(per_job // block_bytes, 1) * block_bytes, None
    else:
        per_job = min(DEFAULT_SIZE_CAP, quarter) // block_bytes * block_bytes
        source, runtime = "default: fits a quarter of the free space", PHASE_SECONDS
    if size is None and per_job < max(MIN_SIZE, block_bytes):
        raise PlanError(f"{target.directory}: {human(free)} free is too little for "
                        f"{count} jobs of at least {human(max(MIN_SIZE, block_bytes))}")
    chosen = Plan(target, count, block_bytes, block_source, per_job, source, runtime,
                  method == "fio-direct" if direct is None else direct, free, method,
                  ram_bytes, jobs_source)
    if free < 2 * chosen.total_bytes:
        raise PlanError(f"{target.directory}: needs {human(2 * chosen.total_bytes)} free "
                        f"(twice the test size), has {human(free)}; use a smaller --size")
    return chosen
