"""The example hosts shipped in examples/roots/, so a new user sees a full report
without SAS installed. ``scripts/make-example-roots`` writes them; a test checks
the committed copies are current."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.support.rootbuilder import RHEL6_SCHEDULER, RootBuilder

SAS_TUNED_PROFILE = """\
[main]
summary=SAS on RHEL: throughput-performance with THP off and SAS read-ahead
include=throughput-performance

[vm]
transparent_hugepages=never
transparent_hugepage.defrag=never

[disk]
elevator=mq-deadline
readahead=>4096

[sysctl]
vm.dirty_ratio = 40
"""

SAS_LOCAL_CFG = """\
/* Site configuration: SAS WORK and UTILLOC on their own file systems */
-WORK /saswork
-UTILLOC /sasutil
/* Pages of whole stripe units: the SAS volumes are LVM stripes of 64 KiB */
-BUFSIZE 64K
"""


def rhel6_defaults(path: Path) -> RootBuilder:
    """A RHEL 6 host as installed: THP on, CFQ, ext3/ext4, relatime, nothing persistent."""
    root = RootBuilder(path)
    root.identity("sasprod01", "2.6.32-754.el6.x86_64",
                  "Red Hat Enterprise Linux Server release 6.10 (Santiago)")
    root.disk("sda", scheduler=RHEL6_SCHEDULER, read_ahead_kb=128)
    root.partition("sda", "sda1", 1).partition("sda", "sda2", 2)
    root.disk("sdb", scheduler=RHEL6_SCHEDULER, read_ahead_kb=128)
    root.dm("dm-0", "vg_sas-lv_saswork", ["sdb"], read_ahead_kb=128)
    root.dm("dm-1", "vg_sas-lv_sasdata", ["sdb"], read_ahead_kb=128)
    root.mount("/dev/sda2", "/", "ext4", "rw,relatime,barrier=1,data=ordered")
    root.mount("/dev/sda1", "/boot", "ext4", "rw,relatime,barrier=1,data=ordered")
    root.mount("/dev/mapper/vg_sas-lv_saswork", "/saswork", "ext3",
               "rw,relatime,errors=continue,barrier=0,data=ordered")
    root.mount("/dev/mapper/vg_sas-lv_sasdata", "/sasdata", "ext4",
               "rw,relatime,barrier=1,data=ordered")
    root.write_mounts()
    root.fstab([("UUID=5f3c2b8e-9a41-4d7e-8c0b-2e6f1d9a4b70", "/", "ext4", "defaults"),
                ("UUID=a0e4c6d2-13b5-47f9-b8e1-7c5d3f2a9e64", "/boot", "ext4", "defaults"),
                ("/dev/mapper/vg_sas-lv_saswork", "/saswork", "ext3", "defaults,barrier=0"),
                ("/dev/mapper/vg_sas-lv_sasdata", "/sasdata", "ext4", "defaults")])
    root.thp(enabled="[always] madvise never", defrag="[always] madvise never", rhel6=True)
    root.cpus(8, governor="ondemand")
    root.sysctl("vm.dirty_ratio", 20)
    root.file("/boot/grub/grub.conf",
              "default=0\ntimeout=5\ntitle Red Hat Enterprise Linux (2.6.32-754.el6.x86_64)\n"
              "\troot (hd0,0)\n\tkernel /vmlinuz-2.6.32-754.el6.x86_64 ro root=/dev/sda2 "
              "rhgb quiet\n\tinitrd /initramfs-2.6.32-754.el6.x86_64.img\n")
    root.file("/etc/rc.d/rc.local", "#!/bin/sh\ntouch /var/lock/subsys/local\n", mode=0o755)
    root.sas_install(local="-WORK /saswork\n")
    return root


def rhel8_tuned_sas(path: Path) -> RootBuilder:
    """A RHEL 8 SAS host tuned as the seeds say: LVM stripes over two multipath LUNs, xfs, noatime, a custom
    tuned profile; SAS DATA named by the site, WORK and UTILLOC from sasv9_local.cfg."""
    root = RootBuilder(path)
    root.identity("sasgrid07", "4.18.0-513.5.1.el8_9.x86_64",
                  "Red Hat Enterprise Linux 8.9 (Ootpa)", memory_kib=263842048)
    root.disk("sda").partition("sda", "sda1", 1).partition("sda", "sda2", 2)
    root.dm("dm-0", "rhel-root", ["sda2"])
    root.multipath_lvm("mpatha", ["sdb", "sdc", "sdd", "sde"], "sasvg",
                       ["sasdata", "saswork", "sasutil"], first_dm=1,
                       scheduler="[mq-deadline] kyber bfq none",
                       path_scheduler="[mq-deadline] kyber bfq none", read_ahead_kb=4096,
                       more_luns=[("mpathb", ["sdf", "sdg", "sdh", "sdi"])], stripe_kib=64)
    root.mount("/dev/mapper/rhel-root", "/", "xfs", "rw,relatime,attr2,inode64,noquota")
    root.mount("/dev/sda1", "/boot", "xfs", "rw,relatime,attr2,inode64,noquota")
    for lv, point in (("sasdata", "/sasdata"), ("saswork", "/saswork"), ("sasutil", "/sasutil")):
        root.mount(f"/dev/mapper/sasvg-{lv}", point, "xfs",
                   "rw,noatime,nodiratime,attr2,inode64,logbufs=8,logbsize=256k,noquota")
    root.write_mounts()
    root.fstab([("/dev/mapper/rhel-root", "/", "xfs", "defaults"),
                ("UUID=0b2a2a5e-5b3c-4f0e-9d8e-6b2c1f0a7e11", "/boot", "xfs", "defaults")]
               + [(f"/dev/mapper/sasvg-{lv}", f"/{lv}", "xfs",
                   "defaults,noatime,nodiratime,logbufs=8,logbsize=256k")
                  for lv in ("sasdata", "saswork", "sasutil")])
    root.thp(enabled="always madvise [never]", defrag="always defer defer+madvise madvise [never]")
    root.cpus(16, governor="performance")
    # Hyper-Threading and Turbo Boost on, as the kernel shows them (kernel/cpu.c's smt/,
    # intel_pstate's no_turbo)
    root.file("/sys/devices/system/cpu/smt/active", "1\n")
    root.file("/sys/devices/system/cpu/smt/control", "on\n")
    root.file("/sys/devices/system/cpu/intel_pstate/no_turbo", "0\n")
    root.sysctl("vm.dirty_ratio", 40).sysctl("vm.swappiness", 10)  # throughput-performance's
    root.tuned("sas-performance", custom={"sas-performance": SAS_TUNED_PROFILE})
    root.grub_defaults("crashkernel=auto resume=/dev/mapper/rhel-swap rd.lvm.lv=rhel/root "
                       "transparent_hugepage=never")
    root.bls_entry("4.18.0-513.5.1.el8_9.x86_64",
                   "root=/dev/mapper/rhel-root ro crashkernel=auto rd.lvm.lv=rhel/root "
                   "transparent_hugepage=never")
    root.file("/etc/udev/rules.d/99-sas-io.rules",
              'ACTION=="add|change", SUBSYSTEM=="block", ENV{DM_NAME}=="mpatha", '
              'ATTR{queue/scheduler}="mq-deadline", ATTR{queue/read_ahead_kb}="4096"\n')
    root.sas_install(local=SAS_LOCAL_CFG)
    # SAS's installer account and the open files SAS 9.4's middle-tier guide asks for, soft
    # and hard (RHEL 8's inherited hard limit is not known). A copied root keeps no owners:
    # the site names the account (EXAMPLE_VALUES).
    root.sas_account()
    root.file("/etc/security/limits.d/99-sas.conf", "sas\t-\tnofile\t65536\n")
    return root


def kvm_host(path: Path) -> RootBuilder:
    """A RHEL 8 KVM host running SAS guests: THP left on, virtual-host tuned profile."""
    root = RootBuilder(path)
    root.identity("kvmhost02", "4.18.0-513.5.1.el8_9.x86_64",
                  "Red Hat Enterprise Linux 8.9 (Ootpa)", memory_kib=527683584)
    root.disk("nvme0n1", scheduler="[none] mq-deadline kyber bfq", read_ahead_kb=128)
    root.partition("nvme0n1", "nvme0n1p1", 1).partition("nvme0n1", "nvme0n1p2", 2)
    root.dm("dm-0", "rhel-root", ["nvme0n1p2"])
    root.mount("/dev/mapper/rhel-root", "/", "xfs", "rw,relatime,attr2,inode64,noquota")
    root.mount("/dev/nvme0n1p1", "/boot", "xfs", "rw,relatime,attr2,inode64,noquota")
    root.write_mounts()
    root.thp()
    root.cpus(32, governor="performance", flags="fpu vme de pse tsc msr pae mce cx8 apic sep vmx")
    # as virtual-host leaves them: throughput-performance's, its own background ratio 5
    root.sysctl("vm.dirty_ratio", 40).sysctl("vm.swappiness", 10)
    root.sysctl("vm.dirty_background_ratio", 5)
    root.file("/proc/modules", "kvm_intel 344064 8 - Live 0x0000000000000000\n"
                               "kvm 958464 1 kvm_intel, Live 0x0000000000000000\n")
    root.file("/usr/libexec/qemu-kvm", "", mode=0o755)
    root.file("/etc/libvirt/qemu.conf", "# libvirt QEMU driver configuration\n")
    # A running SAS guest: its definition and libvirt's status file (abridged).
    for directory in ("/etc/libvirt/qemu", "/run/libvirt/qemu"):
        root.file(f"{directory}/sasguest01.xml",
                  "<domain type='kvm'>\n  <name>sasguest01</name>\n</domain>\n")
    root.symlink("/etc/systemd/system/multi-user.target.wants/libvirtd.service",
                 "/usr/lib/systemd/system/libvirtd.service")
    root.tuned("virtual-host")
    root.grub_defaults("crashkernel=auto rd.lvm.lv=rhel/root")
    root.bls_entry("4.18.0-513.5.1.el8_9.x86_64", "root=/dev/mapper/rhel-root ro crashkernel=auto")
    return root


EXAMPLES: dict[str, Callable[[Path], RootBuilder]] = {
    "rhel6-defaults": rhel6_defaults,
    "rhel8-tuned-sas": rhel8_tuned_sas,
    "kvm-host": kvm_host,
}
EXAMPLE_VALUES = {
    "rhel6-defaults": ["sas_data_dirs=/sasdata"],
    "rhel8-tuned-sas": ["sas_data_dirs=/sasdata", "sas_accounts=sas"],
    "kvm-host": [],
}
