"""Build system roots in the real layout, for tests, the shipped examples and benchmarks.

The roots look like what the kernel and RHEL put on disk: /sys/block entries are
relative symlinks into /sys/devices, dm devices have dm/name and slaves/, a
partition is a subdirectory of its disk, mount points exist as directories.
Every symlink is relative, so nothing in a root points at the building host.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
from collections.abc import Sequence
from pathlib import Path

SCSI_BUS = "pci0000:00/0000:00:1f.2/host{n}/target{n}:0:0/{n}:0:0:0"
NVME_BUS = "pci0000:00/0000:00:1d.0/0000:3c:00.0/nvme/{controller}"
DEFAULT_SCHEDULER = "[mq-deadline] kyber bfq none"
RHEL6_SCHEDULER = "noop anticipatory deadline [cfq]"
THP_DEFAULT = "[always] madvise never"
DEFRAG_DEFAULT = "[always] defer defer+madvise madvise never"

STOCK_TUNED = {
    "throughput-performance": """\
[main]
summary=Broadly applicable tuning that provides excellent performance across a variety of common server workloads

[cpu]
governor=performance
energy_perf_bias=performance
min_perf_pct=100

[vm]
transparent_hugepages=always

[disk]
readahead=>4096

[sysctl]
kernel.sched_min_granularity_ns = 10000000
vm.dirty_ratio = 40
vm.dirty_background_ratio = 10
vm.swappiness=10
""",
    "enterprise-storage": """\
[main]
summary=Legacy profile for RHEL6, for RHEL7, please use throughput-performance profile
include=throughput-performance
""",
    "virtual-guest": """\
[main]
summary=Optimize for running inside a virtual guest
include=throughput-performance

[sysctl]
vm.dirty_ratio = 30
vm.swappiness = 30
""",
    "virtual-host": """\
[main]
summary=Optimize for running KVM guests
include=throughput-performance

[sysctl]
vm.dirty_background_ratio = 5
""",
    "balanced": """\
[main]
summary=General non-specialized tuned profile

[cpu]
governor=conservative|powersave
energy_perf_bias=normal

[disk]
# Comma separated list of devices, all devices if commented out.
# devices=sda
""",
}


class RootBuilder:
    """Writes a fake system root below ``path``; methods chain."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self._mounts: list[str] = []
        self._mountinfo: list[tuple[str, str, str, str, str]] = []  # number, point, type...
        self._numbers: dict[str, str] = {}  # /dev path -> major:minor
        self._scsi_hosts = 0
        self._nvme = 0

    # -- plain files -------------------------------------------------------------------
    def _host(self, path: str) -> Path:
        return self.path / path.lstrip("/")

    def file(self, path: str, content: str | bytes, mode: int | None = None) -> RootBuilder:
        target = self._host(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        if mode is not None:
            target.chmod(mode)
        return self

    def directory(self, path: str) -> RootBuilder:
        self._host(path).mkdir(parents=True, exist_ok=True)
        return self

    def symlink(self, path: str, target: str) -> RootBuilder:
        """A link at ``path``; an absolute in-root ``target`` is made relative."""
        link = self._host(path)
        link.parent.mkdir(parents=True, exist_ok=True)
        if target.startswith("/"):
            target = posixpath.relpath(target, posixpath.dirname(path))
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
        return self

    # -- block devices -----------------------------------------------------------------
    def _queue(self, device_dir: str, scheduler: str | None, read_ahead_kb: int | None,
               hw_queues: int | None = None, io_hints: tuple[int, int] = (512, 0)) -> None:
        """``io_hints``: minimum_io_size and optimal_io_size (a plain disk: 512 and 0)."""
        self.file(f"{device_dir}/queue/minimum_io_size", f"{io_hints[0]}\n")
        self.file(f"{device_dir}/queue/optimal_io_size", f"{io_hints[1]}\n")
        if scheduler is not None:
            self.file(f"{device_dir}/queue/scheduler", scheduler + "\n")
        if hw_queues is None:  # blk-mq SCSI and dm-multipath queues have one hardware queue
            hw_queues = 1 if scheduler and "mq-deadline" in scheduler else 0
        for queue in range(hw_queues):  # as blk-mq shows them: mq/<n>/ with nr_tags etc.
            self.file(f"{device_dir}/mq/{queue}/nr_tags", "256\n")
        if read_ahead_kb is not None:
            self.file(f"{device_dir}/queue/read_ahead_kb", f"{read_ahead_kb}\n")

    def _register(self, name: str, device_dir: str, dev: str) -> None:
        self.file(f"{device_dir}/dev", dev + "\n")
        self._numbers[f"/dev/{name}"] = dev
        self.symlink(f"/sys/block/{name}", device_dir)
        self.symlink(f"/sys/class/block/{name}", device_dir)

    def disk(self, name: str, scheduler: str | None = DEFAULT_SCHEDULER,
             read_ahead_kb: int | None = 128, vendor: str = "ATA",
             model: str = "DISK", wwid: str | None = None,
             hw_queues: int | None = None) -> RootBuilder:
        if name.startswith("nvme"):
            if hw_queues is None:  # NVMe: a hardware queue per CPU (or per vector)
                hw_queues = 4
            bus = NVME_BUS.format(controller=name.split("n")[1] if "n" in name else "0")
            device_dir = f"/sys/devices/{bus}/{name}"
        else:
            bus = SCSI_BUS.format(n=self._scsi_hosts)
            self._scsi_hosts += 1
            device_dir = f"/sys/devices/{bus}/block/{name}"
            # SCSI INQUIRY fields, space-padded to their width as the kernel shows them.
            self.file(f"/sys/devices/{bus}/vendor", f"{vendor:<8}\n")
            self.file(f"/sys/devices/{bus}/model", f"{model:<16}\n")
            if wwid is not None:  # as the SCSI layer shows it: naa., eui. or t10. prefixed
                self.file(f"/sys/devices/{bus}/wwid", f"{wwid}\n")
            self.symlink(f"{device_dir}/device", f"/sys/devices/{bus}")
        self._queue(device_dir, scheduler, read_ahead_kb, hw_queues)
        self._register(name, device_dir, f"8:{self._scsi_hosts * 16}")
        return self

    def partition(self, disk: str, name: str, number: int = 1) -> RootBuilder:
        disk_dir = os.readlink(self._host(f"/sys/block/{disk}"))
        device_dir = posixpath.normpath(posixpath.join("/sys/block", disk_dir)) + f"/{name}"
        self.file(f"{device_dir}/partition", f"{number}\n")
        major, minor = self._numbers[f"/dev/{disk}"].split(":")  # the disk's, then its own
        self.file(f"{device_dir}/dev", f"{major}:{int(minor) + number}\n")
        self._numbers[f"/dev/{name}"] = f"{major}:{int(minor) + number}"
        self.symlink(f"/sys/class/block/{name}", device_dir)
        return self

    def _slave_link(self, device_dir: str, slave: str) -> None:
        """slaves/<name> -> the slave's directory (a disk or a partition of one)."""
        target = os.readlink(self._host(f"/sys/class/block/{slave}"))
        resolved = posixpath.normpath(posixpath.join("/sys/class/block", target))
        self.symlink(f"{device_dir}/slaves/{slave}", resolved)

    def dm(self, name: str, dm_name: str, slaves: list[str], uuid: str = "",
           scheduler: str | None = None, read_ahead_kb: int | None = 128,
           stripe_kib: int | None = None) -> RootBuilder:
        """A device-mapper device. Bio-based (LVM) by default: no scheduler file.

        Give ``scheduler`` for a request-based (multipath) device, ``stripe_kib`` for a
        dm-stripe volume over all ``slaves`` (its queue limits as dm-stripe's io_hints set
        them: the chunk, and the chunk times the stripes).
        """
        device_dir = f"/sys/devices/virtual/block/{name}"
        self.file(f"{device_dir}/dm/name", dm_name + "\n")
        self.file(f"{device_dir}/dm/uuid", (uuid or f"LVM-{dm_name}") + "\n")
        hints = (stripe_kib * 1024, stripe_kib * 1024 * len(slaves)) if stripe_kib else (512, 0)
        self._queue(device_dir, scheduler, read_ahead_kb, io_hints=hints)
        self.directory(f"{device_dir}/slaves")
        for slave in slaves:
            self._slave_link(device_dir, slave)
        self._register(name, device_dir, f"253:{name.split('-')[-1]}")
        self._numbers[f"/dev/mapper/{dm_name}"] = self._numbers[f"/dev/{name}"]
        self.symlink(f"/dev/mapper/{dm_name}", f"/dev/{name}")
        self.file(f"/dev/{name}", "")
        return self

    def md(self, name: str, slaves: list[str], read_ahead_kb: int = 128,
           chunk_kib: int = 512) -> RootBuilder:
        """An md RAID0 set (mdadm's default 512 KiB chunk) over ``slaves``."""
        device_dir = f"/sys/devices/virtual/block/{name}"
        chunk = chunk_kib * 1024
        self._queue(device_dir, "none", read_ahead_kb, io_hints=(chunk, chunk * len(slaves)))
        self.file(f"{device_dir}/md/level", "raid0\n")
        self.file(f"{device_dir}/md/chunk_size", f"{chunk}\n")
        for slave in slaves:
            self._slave_link(device_dir, slave)
        self._register(name, device_dir, f"9:{name[2:] or 0}")
        return self

    def multipath_lvm(self, lun: str, paths: list[str], vg: str, lvs: list[str],
                      first_dm: int = 0, scheduler: str = DEFAULT_SCHEDULER,
                      path_scheduler: str = DEFAULT_SCHEDULER,
                      read_ahead_kb: int = 128, path_vendor: str = "XtremIO",
                      path_hw_queues: int | None = None,
                      path_model: str = "XtremApp",
                      more_luns: Sequence[tuple[str, list[str]]] = (),
                      stripe_kib: int = 64, path_wwids: bool = False) -> RootBuilder:
        """A multipath LUN (request-based dm over SCSI paths) with LVM volumes on it. The
        paths report the array's SCSI vendor and product (the seed 003 paper's XtremIO).

        ``more_luns`` (map name, paths) are further LUNs of the volume group: the volumes
        are then LVM stripes of ``stripe_kib`` over every LUN (seed 000's Table 1: 8 x 64
        KiB). Their maps take the dm numbers after the volumes'."""
        maps = []
        for number, (name, lun_paths) in enumerate([(lun, paths), *more_luns]):
            for path in lun_paths:  # XtremIO's NAA ids begin 514f0c5
                self.disk(path, scheduler=path_scheduler, read_ahead_kb=read_ahead_kb,
                          vendor=path_vendor, model=path_model, hw_queues=path_hw_queues,
                          wwid=f"naa.514f0c5{number:09x}" if path_wwids else None)
            index = first_dm if not number else first_dm + len(lvs) + number
            maps.append(f"dm-{index}")
            self.dm(maps[-1], name, lun_paths, uuid=f"mpath-3600{index:028d}",
                    scheduler=scheduler, read_ahead_kb=read_ahead_kb)
        for index, lv in enumerate(lvs, start=1):
            dm_name = f"{vg.replace('-', '--')}-{lv.replace('-', '--')}"
            self.dm(f"dm-{first_dm + index}", dm_name, maps, read_ahead_kb=read_ahead_kb,
                    stripe_kib=stripe_kib if len(maps) > 1 else None)
        return self

    # -- mounts ------------------------------------------------------------------------
    @staticmethod
    def escape(text: str) -> str:
        return "".join(f"\\{ord(c):03o}" if c in " \t\n\\" else c for c in text)

    def mount(self, device: str, mountpoint: str, fstype: str = "xfs",
              options: str = "rw,relatime,attr2,inode64,noquota",
              number_of: str | None = None) -> RootBuilder:
        """A mount of ``device``; ``number_of`` names the device node whose major:minor
        /proc/self/mountinfo shows when ``device`` is a name /sys does not know."""
        # Mount points must exist (oscap's partition probe stats them); the marker file
        # keeps the directory when a root is committed to git, which drops empty ones.
        if mountpoint != "/":
            self.file(posixpath.join(mountpoint, ".mountpoint"), "")
        self._mounts.append(f"{self.escape(device)} {self.escape(mountpoint)} {fstype} "
                            f"{options} 0 0")
        number = self._numbers.get(number_of or device, f"0:{40 + len(self._mountinfo)}")
        self._mountinfo.append((number, mountpoint, options, fstype, device))
        return self

    def bdi(self, mountpoint: str, read_ahead_kb: int) -> RootBuilder:
        """The backing device info of a mount without a block device (NFS): named by the
        major:minor its mountinfo line shows."""
        number = next(n for n, point, *_ in reversed(self._mountinfo) if point == mountpoint)
        return self.file(f"/sys/class/bdi/{number}/read_ahead_kb", f"{read_ahead_kb}\n")

    def write_mounts(self) -> RootBuilder:
        base = ["proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0",
                "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0"]
        self.file("/proc/mounts", "\n".join(base + self._mounts) + "\n")
        # proc(5): id parent major:minor root mount-point options optional - type source
        # super-options; the mount options split as the kernel does (per mount, per sb).
        info = ["22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:5 - proc proc rw",
                "23 1 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:6 - sysfs sysfs rw"]
        info += [f"{60 + index} 1 {number} / {self.escape(point)} {options} shared:{index + 1}"
                 f" - {fstype} {self.escape(device)} rw"
                 for index, (number, point, options, fstype, device)
                 in enumerate(self._mountinfo)]
        self.file("/proc/self/mountinfo", "\n".join(info) + "\n")
        return self

    def fstab(self, entries: list[tuple[str, str, str, str]]) -> RootBuilder:
        """/etc/fstab as anaconda writes it: (device, mount point, type, options) lines with
        the kernel's octal escapes."""
        lines = ["", "#", "# /etc/fstab", "# Created by anaconda on Tue Mar  5 10:11:12 2024",
                 "#", "# Accessible filesystems, by reference, are maintained under '/dev/disk/'.",
                 "#"]
        lines += [f"{self.escape(device)} {self.escape(point)} {fstype} {options} 0 0"
                  for device, point, fstype, options in entries]
        return self.file("/etc/fstab", "\n".join(lines) + "\n")

    # -- kernel and services -----------------------------------------------------------
    def thp(self, enabled: str = THP_DEFAULT, defrag: str = DEFRAG_DEFAULT,
            rhel6: bool = False) -> RootBuilder:
        base = "/sys/kernel/mm/" + ("redhat_transparent_hugepage" if rhel6
                                    else "transparent_hugepage")
        self.file(f"{base}/enabled", enabled + "\n").file(f"{base}/defrag", defrag + "\n")
        return self

    def cpus(self, count: int, governor: str | None = "performance",
             flags: str = "fpu vme de pse tsc msr pae mce cx8 apic sep",
             sockets: int | None = None) -> RootBuilder:
        """``count`` CPUs in /proc/cpuinfo (fs/proc's x86 format); with ``sockets``, their
        topology lines too (physical id, core id), split evenly across the sockets."""
        blocks = []
        per_socket = count // sockets if sockets else count
        for cpu in range(count):
            topology = (f"physical id\t: {cpu // per_socket}\nsiblings\t: {per_socket}\n"
                        f"core id\t\t: {cpu % per_socket}\ncpu cores\t: {per_socket}\n"
                        if sockets else "")
            blocks.append(f"processor\t: {cpu}\nvendor_id\t: GenuineIntel\n"
                          f"model name\t: Intel(R) Xeon(R) CPU\n{topology}flags\t\t: {flags}\n")
            self.directory(f"/sys/devices/system/cpu/cpu{cpu}")
            if governor is not None:
                policy = f"/sys/devices/system/cpu/cpufreq/policy{cpu}"
                self.file(f"{policy}/scaling_governor", governor + "\n")
                self.symlink(f"/sys/devices/system/cpu/cpu{cpu}/cpufreq", policy)
        self.file("/proc/cpuinfo", "\n".join(blocks))
        return self

    def sysctl(self, key: str, value: str | int) -> RootBuilder:
        return self.file("/proc/sys/" + key.replace(".", "/"), f"{value}\n")

    def identity(self, hostname: str, kernel: str, pretty_name: str,
                 memory_kib: int = 49283116) -> RootBuilder:
        self.file("/etc/hostname", hostname + "\n")
        self.file("/proc/sys/kernel/hostname", hostname + "\n")
        self.file("/proc/sys/kernel/osrelease", kernel + "\n")
        version = re.search(r"\b([0-9]+(?:\.[0-9]+)?) ", pretty_name)
        # As RHEL 8 writes it (its redhat-release package's os-release).
        self.file("/etc/os-release", 'NAME="Red Hat Enterprise Linux"\n'
                                     'ID="rhel"\nID_LIKE="fedora"\n'
                                     + (f'VERSION_ID="{version.group(1)}"\n' if version else "")
                                     + f'PRETTY_NAME="{pretty_name}"\n')
        self.file("/etc/redhat-release", pretty_name + "\n")
        self.file("/proc/meminfo", f"MemTotal:       {memory_kib} kB\n")
        # Every kernel's /proc/sys has them; its own defaults until something sets them
        # (mm/vmscan.c vm_swappiness, mm/page-writeback.c dirty_background_ratio).
        self.sysctl("vm.swappiness", 60).sysctl("vm.dirty_background_ratio", 10)
        return self

    def tuned(self, active: str | None, enabled: bool = True,
              custom: dict[str, str] | None = None, stock: bool = True,
              sysv: bool = False, shipped: dict[str, str] | None = None,
              new_layout: bool = False) -> RootBuilder:
        """tuned 2.x (RHEL 7+) with the stock profiles (or ``shipped``: name -> tuned.conf);
        ``new_layout``: tuned 2.23+, profiles under /usr/lib/tuned/profiles and
        /etc/tuned/profiles; ``sysv`` for a RHEL 6 host, whose tuned 0.2 keeps its profiles
        in /etc/tune-profiles (written by the caller)."""
        self.file("/usr/sbin/tuned", "#!/usr/bin/python3\n", mode=0o755)
        below = "/profiles" if new_layout else ""
        if stock and not sysv:
            for name, text in (STOCK_TUNED if shipped is None else shipped).items():
                self.file(f"/usr/lib/tuned{below}/{name}/tuned.conf", text)
        for name, text in (custom or {}).items():
            self.file(f"/etc/tuned{below}/{name}/tuned.conf", text)
        if active is not None:
            self.file("/etc/tuned/active_profile", active + "\n")
        if enabled:
            if sysv:  # chkconfig tuned on: run levels 2 to 5
                for level in "2345":
                    self.symlink(f"/etc/rc.d/rc{level}.d/S28tuned", "/etc/rc.d/init.d/tuned")
                self.file("/etc/rc.d/init.d/tuned", "#!/bin/sh\n", mode=0o755)
            else:
                self.file("/usr/lib/systemd/system/tuned.service", "[Service]\n")
                self.symlink("/etc/systemd/system/multi-user.target.wants/tuned.service",
                             "/usr/lib/systemd/system/tuned.service")
        return self

    def grub_defaults(self, cmdline: str) -> RootBuilder:
        return self.file("/etc/default/grub", 'GRUB_TIMEOUT=5\nGRUB_DEFAULT=saved\n'
                                              f'GRUB_CMDLINE_LINUX="{cmdline}"\n'
                                              'GRUB_ENABLE_BLSCFG=true\n')

    def bls_entry(self, kernel: str, options: str) -> RootBuilder:
        return self.file(f"/boot/loader/entries/0123456789abcdef-{kernel}.conf",
                         f"title Red Hat Enterprise Linux ({kernel})\nversion {kernel}\n"
                         f"linux /vmlinuz-{kernel}\ninitrd /initramfs-{kernel}.img\n"
                         f"options {options}\nid rhel-{kernel}\ngrub_users $grub_users\n")

    def sas_install(self, sashome: str = "/opt/sas/SASHome", local: str | None = None,
                    language_work: str = "/tmp") -> RootBuilder:
        """A SAS 9.4 install: the shipped configs, and optionally a sasv9_local.cfg."""
        sasroot = f"{sashome}/SASFoundation/9.4"
        self.file(f"{sasroot}/sasv9.cfg",
                  "/* Do not edit: this file is replaced when SAS is updated. */\n"
                  f'-CONFIG "{sasroot}/nls/en/sasv9.cfg"\n')
        self.file(f"{sasroot}/nls/en/sasv9.cfg",
                  "/* English language configuration */\n"
                  f"-WORK {language_work}\n-MEMSIZE 2G\n-SORTSIZE 256M\n")
        if local is not None:
            self.file(f"{sasroot}/sasv9_local.cfg", local)
        # A SAS host has the directories its configuration names.
        for named in [language_work, *re.findall(r"^-(?:WORK|UTILLOC)\s+(.+?)\s*$", local or "",
                                                 re.MULTILINE | re.IGNORECASE)]:
            self.kept_directory(named.strip("'\""))
        return self

    def sas_account(self, name: str = "sas", uid: int = 1001,
                    owns: tuple[str, ...] = ("/opt/sas/SASHome",)) -> RootBuilder:
        """The SAS installer account, as useradd writes it to /etc/passwd and /etc/group
        (with RHEL's root line), owning the SAS installation as SAS's deployment leaves
        it (owner kept only where the tests run as root: else sas_accounts names it)."""
        self.file("/etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"
                  f"{name}:x:{uid}:{uid}:SAS installer:/home/{name}:/bin/bash\n")
        self.file("/etc/group", f"root:x:0:\n{name}:x:{uid}:\n")
        for owned in owns:
            for directory, _, files in os.walk(self._host(owned)):
                for entry in (directory, *(os.path.join(directory, f) for f in files)):
                    with contextlib.suppress(PermissionError):
                        os.chown(entry, uid, uid)
        return self

    def kept_directory(self, path: str) -> RootBuilder:
        """A directory with a marker file, so that git keeps it in a committed root."""
        return self.file(posixpath.join(path, ".keep"), "")
