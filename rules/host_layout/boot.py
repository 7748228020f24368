"""What the next boot runs: systemd and SysV services, fstab, sysctl at boot (systemd-sysctl,
tuned's reapply_sysctl, ktune), the boot loaders, udev rules and rc scripts (scanner/boot/)."""

from __future__ import annotations

# -- systemd and SysV services ------------------------------------------------------------
SYSTEMD_WANTS_DIRS = ("/etc/systemd/system/multi-user.target.wants",
                      "/etc/systemd/system/graphical.target.wants",
                      "/etc/systemd/system/sockets.target.wants",
                      "/etc/systemd/system/basic.target.wants",
                      "/etc/systemd/system/sysinit.target.wants")
# Where systemd finds a unit by name, earliest first.
SYSTEMD_UNIT_DIRS = ("/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system",
                     "/lib/systemd/system")
# systemd-tmpfiles' configuration (its w lines write sysfs files early at boot, before
# tuned starts); a file in an earlier directory hides a namesake in a later one.
TMPFILES_DIRS = ("/etc/tmpfiles.d", "/run/tmpfiles.d", "/usr/lib/tmpfiles.d")
SYSV_RUNLEVEL_DIRS = ("/etc/rc.d/rc3.d", "/etc/rc3.d", "/etc/rc.d/rc5.d", "/etc/rc5.d")
# What every boot that starts services reaches, whichever of the two a server or a
# workstation boots (graphical.target requires multi-user.target; run level 3 is RHEL's
# server level): OVAL, which cannot follow default.target, counts only these where a unit
# or a start link makes a setting pass (content/).
SURE_WANTS_DIRS = tuple(d for d in SYSTEMD_WANTS_DIRS if not d.endswith("/graphical.target.wants"))
SURE_RUNLEVEL_DIRS = SYSV_RUNLEVEL_DIRS[:2]
INITTAB = "/etc/inittab"  # SysV init's initdefault: the run level a RHEL 5/6 boot enters

# -- mounts at boot ----------------------------------------------------------------------
FSTAB = "/etc/fstab"  # mount -a and systemd-fstab-generator read it; /etc units override

# -- sysctl at boot ----------------------------------------------------------------------
# systemd-sysctl reads *.conf from these, a file hiding its namesake in a later directory,
# all in file-name order; RHEL 7+ link /etc/sysctl.d/99-sysctl.conf to /etc/sysctl.conf.
SYSCTL_DIRS = ("/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d", "/usr/lib/sysctl.d",
               "/lib/sysctl.d")
SYSCTL_CONF = "/etc/sysctl.conf"
# tuned's reapply_sysctl (tuned-main.conf, on by default; from tuned 2.7) applies these
# after its own [sysctl], a file hiding its namesake in a later directory, in name order,
# then /etc/sysctl.conf (plugin_sysctl.py). 2.7 to 2.10 ran `sysctl --system`, which reads
# all five directories, as 2.11 and 2.12's own code did; 2.13 dropped the /usr ones
# (tuned commit 14053bc, "Make reapply_sysctl ignore configs from /usr").
TUNED_MAIN_CONF = "/etc/tuned/tuned-main.conf"
TUNED_REAPPLY_SYSCTL_DIRS = ("/run/sysctl.d", "/etc/sysctl.d")
TUNED_REAPPLY_SYSCTL_ALL_DIRS = (*TUNED_REAPPLY_SYSCTL_DIRS, "/usr/local/lib/sysctl.d",
                                 "/usr/lib/sysctl.d", "/lib/sysctl.d")
TUNED_REAPPLY_SYSCTL_SINCE = (2, 7)
TUNED_REAPPLY_SYSCTL_ETC_ONLY_SINCE = (2, 13)
# How tuned re-applies each line (tuned/plugins/plugin_sysctl.py): before 2.11 it runs
# `sysctl --system`; from 2.11 it writes /proc/sys/KEY itself, the key as written with dots
# made slashes, so a line with systemd-sysctl's leading "-" names no file and is skipped
# (ENOENT); from 2.22 (commit 6ca3f5a) it swaps dots and slashes, so a key written with
# slashes (vm/dirty_ratio) is skipped too; from 2.27 (commit 4e30052) tuned-main.conf's
# reapply_sysctl_exclude names shell patterns of keys it does not re-apply.
TUNED_REAPPLY_DIRECT_SINCE = (2, 11)
TUNED_REAPPLY_SLASH_SWAP_SINCE = (2, 22)
TUNED_REAPPLY_EXCLUDE_SINCE = (2, 27)
# RHEL 5/6 ktune (/etc/sysconfig/ktune): SYSCTL, then /etc/ktune.d/*.conf, then SYSCTL_POST.
KTUNE_SYSCONFIG = "/etc/sysconfig/ktune"
# What RHEL 5's ktune.sysconfig sets (RHEL 6's adds /etc/sysctl.d/* to SYSCTL_POST):
# taken where /etc/sysconfig/ktune cannot be read.
KTUNE_SHIPPED_CONFIG = {"SYSCTL": "/etc/sysctl.ktune", "USE_KTUNE_D": "yes",
                        "SYSCTL_POST": SYSCTL_CONF}
# The kernel's own value where nothing sets one, by release prefix, the first that matches:
# RHEL 5's 2.6.18 kept dirty_ratio at 40, later kernels 20 (seed 000 §3.2.2).
KERNEL_SYSCTL_DEFAULTS: dict[str, tuple[tuple[str, str | None], ...]] = {
    "vm.dirty_ratio": (("2.6.18", "40"), ("", "20")),
    # mm/vmscan.c vm_swappiness = 60; mm/page-writeback.c dirty_background_ratio = 10,
    # unchanged since 2.6.18
    "vm.swappiness": (("", "60"),),
    "vm.dirty_background_ratio": (("", "10"),),
    # include/linux/mm.h DEFAULT_MAX_MAP_COUNT, USHRT_MAX - MAPCOUNT_ELF_CORE_MARGIN (5)
    "vm.max_map_count": (("", "65530"),),
    # mm/util.c (mm/mmap.c before 4.x) sysctl_overcommit_memory = OVERCOMMIT_GUESS (0)
    "vm.overcommit_memory": (("", "0"),),
    # include/linux/socket.h SOMAXCONN: 128, then 4096 from Linux 5.4 (19f92a030ca6). RHEL 8's
    # 4.18 keeps 128: RHEL 8.6 and 8.7 hosts read 128 (sap-linuxlab/community.sap_install
    # issue 782, measured per release); the 2048 of 8.8 on is throughput-performance's
    # ">2048" (tuned 2.20, redhat-performance/tuned pull 491, rhbz#1998310), which those
    # SAP profiles include, not the kernel's. (None would mean "not known": a verdict that
    # needs the default is then an error.)
    "net.core.somaxconn": (("2.", "128"), ("3.", "128"), ("4.", "128"),
                           *((f"5.{minor}.", "128") for minor in range(4)), ("", "4096")),
    # include/uapi/linux/sem.h SEMMSL SEMMNS SEMOPM SEMMNI: 250 32000 32 128 (RHEL 7's 3.10),
    # raised in Linux 3.19 ("ipc/sem.c: increase SEMMSL, SEMMNI, SEMOPM") to 32000
    # 1024000000 500 32000 (RHEL 8's 4.18 and later).
    "kernel.sem": (("2.", "250 32000 32 128"),
                   *((f"3.{minor}.", "250 32000 32 128") for minor in range(19)),
                   ("", "32000 1024000000 500 32000")),
}
# The kernel keeps one of each pair: writing a positive value to one zeroes the other, and
# the one set is what it uses (mm/page-writeback.c, dirty_bytes_handler and
# dirty_ratio_handler). A site limiting dirty memory in bytes has dirty_ratio 0.
SYSCTL_BYTES_TWINS = {"vm.dirty_ratio": "vm.dirty_bytes",
                      "vm.dirty_background_ratio": "vm.dirty_background_bytes"}

# -- boot loader ----------------------------------------------------------------------------
GRUB_DEFAULTS = "/etc/default/grub"  # GRUB 2's template (grub2-mkconfig reads it)
KERNEL_CMDLINE = "/etc/kernel/cmdline"  # kernel-install's command line
BLS_ENTRIES = "/boot/loader/entries"  # Boot Loader Specification entries (RHEL 8+)
GRUBENV = "/boot/grub2/grubenv"  # kernelopts, tuned_params, saved_entry
GRUB2_CFG = "/boot/grub2/grub.cfg"  # the menu grub2-mkconfig writes (BIOS boot)
EFI_FIRMWARE = "/sys/firmware/efi"  # exists when the running system booted with UEFI
# On an EFI boot the loader reads its grub.cfg / grub.conf / grubenv from the EFI system
# partition, in the distribution's directory.
EFI_VENDOR_DIRS = ("/boot/efi/EFI/redhat", "/boot/efi/EFI/centos", "/boot/efi/EFI/rocky",
                   "/boot/efi/EFI/almalinux")
# GRUB 0.97 (RHEL 5, 6): grubby keeps /etc/grub.conf a link to the live file.
LEGACY_GRUB_CONFS = ("/boot/grub/grub.conf", "/etc/grub.conf")

# -- udev ---------------------------------------------------------------------------------
# A rules file in an earlier directory hides a namesake in a later one.
UDEV_RULES_DIRS = ("/etc/udev/rules.d", "/run/udev/rules.d", "/usr/lib/udev/rules.d",
                   "/lib/udev/rules.d")

# -- boot-time scripts ----------------------------------------------------------------------
# rc.local and its SysV runlevel links: where sites put `echo never > .../enabled` and
# `blockdev --setra`.
INIT_SCRIPTS = ("/etc/rc.d/rc.local", "/etc/rc.local", "/etc/rc.d/rc3.d/S99local",
                "/etc/rc3.d/S99local", "/etc/rc.d/rc5.d/S99local", "/etc/rc5.d/S99local")
