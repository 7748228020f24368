"""Where things are on a RHEL host, and how to recognise them: the one home of every path,
marker, vendor list and version cut-off the engines read.

The scanner (``scanner/``) and the OVAL generator (``content/``) import these; the bash
remediation library and the standalone collector get them rendered as shell words
(``shell_layout``), so no list is written twice. Add a fact here, then use it everywhere.
"""

from __future__ import annotations

import re
import shlex

# -- Transparent Huge Pages ---------------------------------------------------------------
# RHEL 7+ and upstream; RHEL 6 backported THP under its own name.
THP_DIRS = ("/sys/kernel/mm/transparent_hugepage", "/sys/kernel/mm/redhat_transparent_hugepage")

# -- what the host is -------------------------------------------------------------------
CONTAINER_MARKERS = ("/.dockerenv", "/run/.containerenv")  # docker, podman
INIT_ENVIRON = "/proc/1/environ"  # NUL-separated; container engines set container=
# DMI sys_vendor / product_name substrings (lower case) of virtual machines, after virt-what
# and systemd-detect-virt: KVM/QEMU (also as Red Hat, oVirt, RHEV, OpenStack, KubeVirt,
# Nutanix AHV, Alibaba, Google and Amazon clouds), VMware, Xen, Hyper-V (product "Virtual
# Machine"; a bare Microsoft vendor is also their laptops), VirtualBox, Bochs, Parallels,
# bhyve, Apple's Virtualization framework.
VM_VENDORS = ("qemu", "kvm", "red hat", "ovirt", "rhev hypervisor", "openstack", "kubevirt",
              "nutanix", "alibaba cloud", "google compute engine", "amazon ec2", "vmware",
              "xen", "virtual machine", "innotek", "virtualbox", "bochs", "parallels", "bhyve",
              "apple virtualization")
DMI_FILES = ("/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name")
PROC_MODULES = "/proc/modules"  # name size use-count dependencies state address
KERNEL_RELEASE = "/proc/sys/kernel/osrelease"  # uname -r
# A KVM host is one that runs guests, not one that merely could (seed 000 §6: the host
# tuning is for hosts running SAS guests). Evidence, any of: the vendor module in use (each
# open /dev/kvm and each guest holds a reference), a running libvirt guest (its status
# file), or a defined guest with a libvirt daemon enabled at boot.
KVM_VENDOR_MODULES = ("kvm_intel", "kvm_amd")
LIBVIRT_RUNNING_DOMAINS = ("/run/libvirt/qemu", "/var/run/libvirt/qemu")  # NAME.xml
LIBVIRT_DEFINED_DOMAINS = "/etc/libvirt/qemu"  # NAME.xml
LIBVIRT_UNITS = ("libvirtd.service", "libvirtd.socket", "virtqemud.service",
                 "virtqemud.socket")  # monolithic daemon (RHEL 7, 8), modular (RHEL 9)
LIBVIRT_SYSV = "libvirtd"  # RHEL 6: /etc/rc.d/rc3.d/S97libvirtd

# -- tuned ----------------------------------------------------------------------------
TUNED_SHIPPED_PROFILES = "/usr/lib/tuned"  # the package's profiles: tuned is installed
# tuned 2.23 moved profiles one level down (consts.py SYSTEM_PROFILE_DIR, CFG_DEF_PROFILE_DIRS
# = /usr/lib/tuned/profiles, /etc/tuned/profiles; its spec's %post moves the site's
# /etc/tuned/NAME there). Earlier releases load /usr/lib/tuned and /etc/tuned (LOAD_DIRECTORIES).
TUNED_PROFILES_SUBDIR = "profiles"
TUNED_NEW_LAYOUT = f"{TUNED_SHIPPED_PROFILES}/{TUNED_PROFILES_SUBDIR}"  # exists: tuned >= 2.23
# Searched first to last, /etc before /usr/lib as tuned's Locator does (a site's profile
# hides a namesake the package ships); both layouts, since only one exists on a host.
TUNED_PROFILE_DIRS = (f"/etc/tuned/{TUNED_PROFILES_SUBDIR}", "/etc/tuned", TUNED_NEW_LAYOUT,
                      TUNED_SHIPPED_PROFILES)
# The profile sascheck's fix includes, by role, where the host has it: tuned's own profile
# for a guest or a KVM host (both include throughput-performance, and keep what that role
# needs, e.g. virtual-host's dirty_background_ratio = 5), else the site's allowed ones.
TUNED_ROLE_PROFILES = {"kvm_guest": "virtual-guest", "kvm_host": "virtual-host"}
TUNED02_PROFILES = "/etc/tune-profiles"  # RHEL 5/6's tuned 0.2
# The profiles tuned 0.2 ships (tune-profiles/ on tuned's 1.0 branch, RHEL 6's tuned); any
# other active profile is a site's own, which a fix keeps.
TUNED02_SHIPPED_PROFILES = ("default", "desktop-powersave", "enterprise-storage",
                            "laptop-ac-powersave", "laptop-battery-powersave",
                            "latency-performance", "oracle", "sap-hana", "sap-hana-vmware",
                            "sap-netweaver", "server-powersave", "spindown-disk",
                            "throughput-performance", "virtual-guest", "virtual-host")
# tuned-main.conf's daemon (tuned 2.5+): tuned's get_bool takes 1, y, yes, t, true (any case)
# as on and anything else as off; unset, it is on. Off, tuned applies the profile and exits,
# and its [cpu] force_latency request on /dev/cpu_dma_latency ends with it.
TUNED_DAEMON_SINCE = (2, 5)
TUNED_DAEMON_ON_WORDS = ("1", "y", "yes", "t", "true")
# tuned-main.conf's booleans (daemon, reapply_sysctl, dynamic_tuning): GlobalConfig.get_bool
# maps y/yes/t/true (any case) to "1" and takes only "1" as true (tuned/utils/commands.py
# get_bool, the same from 2.7 to 2.25); "on", "2" or "enable" are false.
TUNED_TRUE_WORDS = TUNED_DAEMON_ON_WORDS
TUNED_PROFILE_MODE_FILE = "/etc/tuned/profile_mode"  # tuned 2.9+: auto or manual
# tuned's recommendations (consts.py RECOMMEND_CONF_FILE, RECOMMEND_DIRECTORIES) and what
# their conditions read (SYSTEM_RELEASE_FILE, the DMI chassis type, subscription-manager's
# syspurpose role).
TUNED_RECOMMEND_CONF = "/etc/tuned/recommend.conf"
TUNED_RECOMMEND_DIRS = (f"{TUNED_SHIPPED_PROFILES}/recommend.d", "/etc/tuned/recommend.d")
SYSTEM_RELEASE_CPE = "/etc/system-release-cpe"
DMI_CHASSIS_TYPE = "/sys/class/dmi/id/chassis_type"
SYSPURPOSE_FILE = "/etc/rhsm/syspurpose/syspurpose.json"
FIX_TUNED_PROFILE = "sas-performance"  # the tuned profile sascheck's fixes write
TUNED02_ACTIVE = f"{TUNED02_PROFILES}/active-profile"
# tuned 2.x, then RHEL 6's tuned 0.2 (tune-profiles); the first that exists is in force.
TUNED_ACTIVE_FILES = ("/etc/tuned/active_profile", TUNED02_ACTIVE)
TUNED_BINARIES = ("/usr/sbin/tuned", "/usr/bin/tuned-adm")
# tuned-ppd (tuned 2.22+, tuned/ppd/): at every start it switches tuned to the profile its
# saved base profile maps to (controller.initialize); its unit is WantedBy=graphical.target.
TUNED_PPD_BINARY = "/usr/sbin/tuned-ppd"
TUNED_PPD_CONF = "/etc/tuned/ppd.conf"  # consts.PPD_CONFIG_FILE
TUNED_PPD_BASE = "/etc/tuned/ppd_base_profile"  # consts.PPD_BASE_PROFILE_FILE
TUNED_PPD_LINK = "/etc/systemd/system/graphical.target.wants/tuned-ppd.service"
DEFAULT_TARGET_LINKS = ("/etc/systemd/system/default.target",
                        "/usr/lib/systemd/system/default.target",
                        "/lib/systemd/system/default.target")
# The installed tuned's version: its Python package's tuned/version.py (TUNED_VERSION_MAJOR,
# _MINOR, _PATCH), under /usr/lib/python3.N/site-packages on RHEL (python2.7 on RHEL 7),
# /usr/lib/python3/dist-packages on Debian.
TUNED_VERSION_PARENT = "/usr/lib"
TUNED_VERSION_DIRS = ("site-packages", "dist-packages")
# [vm] dirty_ratio / dirty_bytes from tuned 2.25 (plugin_vm.py); dirty_bytes = N% writes
# dirty_ratio from 2.26 (throughput-performance then sets dirty_bytes = 40%).
TUNED_VM_DIRTY_SINCE = (2, 25)
TUNED_VM_DIRTY_PERCENT_SINCE = (2, 26)
# The read-ahead floor (KiB, readahead=>N) of tuned's shipped throughput profiles
# (profiles/throughput-performance/tuned.conf; enterprise-storage, virtual-guest and virtual-host
# include it since 2.0): a profile including one of them must not ask for less.
# tuned's ">N" / "<N" assignment modifiers (base.py _check_and_save_value from v2.4.0): tuned
# 2.3 hands ">4096" to int() and sets nothing.
TUNED_MODIFIERS_SINCE = (2, 4)
TUNED_STOCK_READAHEAD_KIB = {"throughput-performance": 4096, "enterprise-storage": 4096,
                             "virtual-guest": 4096, "virtual-host": 4096}
# RHEL 5/6 ktune (tuned 0.2): `tuned-adm profile` links the profile's ktune.sh into
# /etc/ktune.d and enables the ktune service, which runs those scripts at every boot
# (S27ktune), after the kernel command line took effect.
KTUNE_SCRIPTS = "/etc/ktune.d"
# tuned 0.2's profiles (tune-profiles/ at tag v0.2.22) and what `tuned-adm profile NAME` does
# with the files of /etc/tune-profiles/NAME (tuned_adm.py): the name goes to active-profile,
# ktune.sh and sysctl.ktune are linked into /etc/ktune.d, ktune.sysconfig to
# /etc/sysconfig/ktune and tuned.conf to /etc/tuned.conf (the replaced files kept as .bckp).
TUNED02_LINKS = (("ktune.sh", f"{KTUNE_SCRIPTS}/tunedadm.sh"),
                 ("sysctl.ktune", f"{KTUNE_SCRIPTS}/tunedadm.conf"),
                 ("ktune.sysconfig", "/etc/sysconfig/ktune"),
                 ("tuned.conf", "/etc/tuned.conf"))
# The shipped throughput profiles whose ktune.sh runs remount_partitions nobarrier.
TUNED02_NOBARRIER_PROFILES = ("enterprise-storage",)
TUNED02_THROUGHPUT_PROFILES = ("throughput-performance", "enterprise-storage")
# RHEL 5 (kernel 2.6.18) has no tuned: its own ktune package is the throughput tuning (seed
# 001's ktune; seed 000 §3.2.1), and its kernel predates THP.
RHEL5_KERNEL_PREFIX = "2.6.18"
KTUNE_SYSV = "ktune"
KTUNE_ENABLES_THP = r"^[ \t]*enable_transparent_hugepages\b"  # tune-profiles/functions
# RHEL 6's tuned is tuned's 1.0 branch (0.2.19 to 0.2.24), whose tune-profiles/functions
# replaced enable_transparent_hugepages with set_transparent_hugepages VALUE (commit 355fd87,
# rhbz#887355) and remount_partitions with disable_disk_barriers (commit 64b45e8), which
# skips a file system whose disks report a write-back cache. A ktune script sources the
# host's /etc/tune-profiles/functions: what that file defines decides what a call does.
TUNED02_FUNCTIONS = "/etc/tune-profiles/functions"
KTUNE_SETS_THP = r"^[ \t]*set_transparent_hugepages[ \t]+([A-Za-z_]{1,16})[ \t]*(?:[;#].*)?$"
KTUNE_DISABLES_BARRIERS = r"^[ \t]*disable_disk_barriers\b"
# The functions the 1.0 branch's tune-profiles/functions defines (at its head, 613169b):
# what a RHEL 6 host runs where its own file cannot be read.
TUNED_1_0_FUNCTIONS = frozenset({
    "set_disk_alpm", "set_disk_apm", "set_disk_spindown", "multiply_disk_readahead",
    "restore_disk_readahead", "set_disk_scheduler_quantum", "restore_disk_scheduler_quantum",
    "_devices_no_write_back_cache", "_disk_barriers_remount", "disable_disk_barriers",
    "enable_disk_barriers", "set_cpu_governor", "restore_cpu_governor",
    "_cpu_multicore_powersave", "enable_cpu_multicore_powersave",
    "disable_cpu_multicore_powersave", "set_transparent_hugepages",
    "restore_transparent_hugepages", "_wifi_set_power_level", "enable_wifi_powersave",
    "disable_wifi_powersave", "disable_bluetooth", "enable_bluetooth", "_usb_autosuspend",
    "enable_usb_autosuspend", "disable_usb_autosuspend", "disable_logs_syncing",
    "restore_logs_syncing", "_eee_fsb_control", "eee_set_reduced_fsb", "eee_set_normal_fsb",
    "error_not_implemented", "start", "stop", "reload", "restart", "status", "process"})
# _devices_no_write_back_cache: a disk whose cache_type says "write back" keeps barriers.
SCSI_CACHE_TYPE = "device/scsi_disk"  # below /sys/block/<disk>: <h:c:t:l>/cache_type
# enterprise-storage's ktune.sh remounts every local file system but / and /boot nobarrier.
KTUNE_NOBARRIER = r"^[ \t]*remount_partitions[ \t]+nobarrier\b"
# ... and multiplies the read-ahead of every sd, cciss, dm and vd disk (multiply_disk_readahead
# 4 in tune-profiles/functions), after udev has set it.
# ... and, in a site's own profile, holds CPU wake-up latency with tuned 0.2's PM QoS helper
# (seed 003's "/usr/libexec/tuned/pmqos-static.py cpu_dma_latency=1"), tuned 2's force_latency.
KTUNE_PMQOS_LATENCY = r"^[ \t]*\S*pmqos-static\.py[ \t]+cpu_dma_latency=([0-9]{1,12})\b"
KTUNE_READAHEAD_FACTOR = r"^[ \t]*multiply_disk_readahead[ \t]+([0-9]{1,12}(?:\.[0-9]{1,12})?)[ \t]*$"
# The kernel's read-ahead for a disk nothing configures (VM_MAX_READAHEAD, KiB).
KERNEL_DEFAULT_READAHEAD_KIB = 128
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

# -- LVM ----------------------------------------------------------------------------------
# Metadata backups, one file per VG: an LV's read_ahead there is set at every activation.
LVM_BACKUP = "/etc/lvm/backup"

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
# RHEL 5/6 ktune (/etc/sysconfig/ktune): SYSCTL, then /etc/ktune.d/*.conf, then SYSCTL_POST.
KTUNE_SYSCONFIG = "/etc/sysconfig/ktune"
# What RHEL 5's ktune.sysconfig sets (RHEL 6's adds /etc/sysctl.d/* to SYSCTL_POST):
# taken where /etc/sysconfig/ktune cannot be read.
KTUNE_SHIPPED_CONFIG = {"SYSCTL": "/etc/sysctl.ktune", "USE_KTUNE_D": "yes",
                        "SYSCTL_POST": SYSCTL_CONF}
# The kernel's own value where nothing sets one: RHEL 5's 2.6.18 kept dirty_ratio at 40,
# later kernels 20 (seed 000 §3.2.2).
KERNEL_SYSCTL_DEFAULTS = {"vm.dirty_ratio": (("2.6.18", "40"), ("", "20"))}
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

# -- I/O schedulers ---------------------------------------------------------------------
# Kernels before blk-mq (RHEL 5, 6, 7: 2.6.x and 3.10) honour elevator= and offer these
# names; blk-mq kernels (RHEL 8+) offer mq-deadline, kyber, bfq, none.
LEGACY_KERNEL_PREFIXES = ("2.", "3.")
LEGACY_SCHEDULERS = ("deadline", "noop", "cfq", "anticipatory")
# The scheduler a legacy kernel gives a device nothing configures, by release prefix:
# RHEL 5/6 (2.6) cfq; RHEL 7 (3.10) deadline except SATA disks, which keep cfq.
LEGACY_DEFAULT_SCHEDULERS = (("2.", "cfq"), ("3.", "deadline"))
SATA_VENDOR = "ATA"  # libata's SCSI translation reports this as every SATA disk's vendor

# -- Veritas InfoScale (seed 003) ---------------------------------------------------------
# VxVM volumes (block devices under /dev/vx/dsk/<disk group>/) and DMP nodes link to no
# device in /sys/block's holders: the array LUNs below them are the SCSI disks whose vendor is
# one of the site's array_vendors (the paper's udev rules match ENV{ID_VENDOR}=="XtremIO").
VXVM_DEVICE_DIRS = ("/dev/vx/dsk/", "/dev/vx/dmp/")
# VxFS reads ahead read_pref_io x read_nstream bytes (vxtunefs(1M)); /etc/vx/tunefstab
# sets them per volume at mount time ("<block device> name=value,name=value").
VXFS_TUNEFSTAB = "/etc/vx/tunefstab"

# -- network file systems -----------------------------------------------------------------
# NFS has no block device: its read-ahead is its backing device info's, the bdi named by the
# mount's major:minor (/proc/self/mountinfo); 128 KiB by default since RHEL 8.3's kernels.
NETWORK_FS_TYPES = ("nfs", "nfs4")
BDI_CLASS = "/sys/class/bdi"
MOUNTINFO = "/proc/self/mountinfo"  # proc(5): each mount's major:minor

# -- dm-multipath ------------------------------------------------------------------------
MULTIPATH_CONF = "/etc/multipath.conf"
MULTIPATH_CONF_DIR = "/etc/multipath/conf.d"  # defaults' config_dir, read after it
# The installed multipath-tools' multipath.conf(5): whether it documents detect_pgpolicy
# (libmultipath: add "detect_pgpolicy" config option, 0.9.6; a backport brings its page too).
MULTIPATH_MANPAGES = ("/usr/share/man/man5/multipath.conf.5.gz",
                      "/usr/share/man/man5/multipath.conf.5")
# What the kernel says of each multipath map (dmsetup table / status --target multipath),
# kept under these names in a snapshot of a running host and in a rebuilt sosreport.
DMSETUP_TABLE = "/run/sascheck/dmsetup-table"
DMSETUP_STATUS = "/run/sascheck/dmsetup-status"
MULTIPATH_UUID_PREFIX = "mpath-"  # dm/uuid of a multipath map: mpath-<wwid>
# Path grouping that sends I/O down every path (seed 000 §4.2.2: round robin, all paths
# active/active); group_by_prio does for ALUA arrays, over the paths of the best group.
# Policies that put every path of a LUN (or of its best ALUA port group) to work; group_by_tpg
# (by ALUA target port group) arrived in multipath-tools 0.9.6 (libmultipath: add
# group_by_tpg path_grouping_policy).
MULTIPATH_ALL_PATHS = ("multibus", "group_by_prio", "group_by_tpg")
# The installed multipath-tools' whole configuration, its built-in hardware table merged
# with multipath.conf (`multipath -t`), kept under this name in a snapshot of a running host
# and in a rebuilt sosreport (sos 3.7 on: the multipath plugin's multipath_-t).
MULTIPATH_CONFIG_DUMP = "/run/sascheck/multipath-t"
# Where none was recorded, the table of the multipath-tools the release ships, as
# scripts/extract-hwtable took it from libmultipath/hwtable.c at that version's tag.
MULTIPATH_HWTABLE_FILE = "multipath_hwtable.json"  # in rules/
XTREMIO_VENDOR = "XtremIO"  # the SCSI vendor XtremIO LUNs report (device/vendor, ID_VENDOR)
MULTIPATH_DEFAULT_GROUPING = "failover"  # multipath-tools' own default (DEFAULT_PGPOLICY)
OS_RELEASE = "/etc/os-release"
REDHAT_RELEASE = "/etc/redhat-release"

# -- striping ------------------------------------------------------------------------------
# dm-stripe and md publish a striped volume's layout in its queue limits (the kernel's
# Documentation/ABI/stable/sysfs-block): minimum_io_size is the stripe unit (chunk) and
# optimal_io_size the unit times the data devices.
QUEUE_IO_MIN = "minimum_io_size"
QUEUE_IO_OPT = "optimal_io_size"
# dm-multipath maps and their partitions (kpartx: part<N>-mpath-<wwid>) stack paths of one
# LUN, never stripes.
MULTIPATH_UUID_PATTERN = r"^(?:part[0-9]+-)?mpath-"
# With BUFSIZE=0 (unset) SAS on UNIX picks each data set's page size itself: the smallest
# multiple of 8 KiB that holds 80 observations, at most 64 KiB (SAS 9.3 Companion for UNIX
# Environments, "BUFSIZE= Data Set Option: UNIX"). Any table with observations over about
# 720 bytes gets the 64 KiB page, so an unset BUFSIZE is judged as 64 KiB.
SAS_DEFAULT_PAGE_STEP = 8192
SAS_DEFAULT_PAGE_MAX = 65536
# OVAL pairs a page and a stripe unit when one is at most this many times the other.
PAGE_UNIT_RATIO_MAX = 1024

# -- NUMA ---------------------------------------------------------------------------------
PROC_CMDLINE = "/proc/cmdline"  # the arguments the running kernel booted with
PROC_CPUINFO = "/proc/cpuinfo"
# The idle states tuned's force_latency=cstate.* resolves through (plugin_cpu.py's
# cpuidle_states_path) and the driver offering them (intel_idle, acpi_idle, ...).
CPUIDLE_STATES = "/sys/devices/system/cpu/cpu0/cpuidle"
CPUIDLE_DRIVER = "/sys/devices/system/cpu/cpuidle/current_driver"
# Hyper-Threading (SMT) and Turbo Boost: the kernel's SMT control (kernel/cpu.c, 4.19 and
# RHEL 7.6+: active 1 while sibling threads run; control on, off, forceoff, notsupported),
# intel_pstate's no_turbo (1: turbo off) and the cpufreq boost switch of acpi-cpufreq and
# amd-pstate (0: boost off).
CPU_SMT_ACTIVE = "/sys/devices/system/cpu/smt/active"
CPU_SMT_CONTROL = "/sys/devices/system/cpu/smt/control"
INTEL_NO_TURBO = "/sys/devices/system/cpu/intel_pstate/no_turbo"
CPUFREQ_BOOST = "/sys/devices/system/cpu/cpufreq/boost"
CPU_FEATURE_FILES = (CPU_SMT_ACTIVE, CPU_SMT_CONTROL, INTEL_NO_TURBO, CPUFREQ_BOOST)
# The NUMA nodes the kernel brought online, a cpulist ("0-1"): Documentation/ABI/stable/
# sysfs-devices-node. Absent when the kernel has no NUMA support.
NUMA_NODES_ONLINE = "/sys/devices/system/node/online"

# -- SAS ----------------------------------------------------------------------------------
# SAS 9.3 and 9.4 install under a SASHome; SAS 9.2's default was /usr/local/SAS.
SAS_HOMES = ("/opt/sas/SASHome", "/usr/local/SASHome", "/opt/SASHome", "/sas/SASHome",
             "/usr/local/SAS", "/opt/SAS")
SAS_FOUNDATIONS = ("SASFoundation/9.4", "SASFoundation/9.3", "SASFoundation/9.2")
# SAS 9.4 configuration directories: server contexts at <dir>/Lev<N>/<context>/sasv9.cfg
# (SASApp's is what workspace and batch servers start with), site changes in the context's
# sasv9_usermods.cfg.
SAS_CONFIG_DIRS = ("/opt/sas/config", "/sas/config", "/opt/sas/sasconfig", "/sasconfig")
SAS_USERMODS = "sasv9_usermods.cfg"
# SAS Viya 3.x: the SAS Programming Run-time Environment's configuration.
SAS_VIYA_SPRE_CONFIG = "/opt/sas/viya/config/etc/spre/default"
SAS_VIYA_SASROOT = "/opt/sas/spre/home/SASFoundation"
# Where SAS keeps its own configuration: a -CONFIG include is read only inside these, the
# SAS directories and the files the site names (sas_config_files), so that a sasv9.cfg the
# SAS account writes cannot make a collector running as root copy another file.
SAS_INSTALL_DIRS = (*SAS_HOMES, *SAS_CONFIG_DIRS, "/opt/sas/viya", "/opt/sas/spre")
# SAS directory role -> the site value that names its directories.
SAS_ROLE_VALUES = {"DATA": "sas_data_dirs", "WORK": "sas_work_dirs",
                   "UTILLOC": "sas_utilloc_dirs"}
SAS_ROLES = tuple(SAS_ROLE_VALUES)
# The site values that name SAS directories or configuration files: a collection follows
# them (collect.sh --set), since the scan elsewhere will read what they name.
SAS_PATH_VALUES = (*SAS_ROLE_VALUES.values(), "sas_config_files")


def legacy_kernel(release: str) -> bool:
    """A pre-blk-mq kernel: honours elevator= and uses the legacy scheduler names."""
    return release.startswith(LEGACY_KERNEL_PREFIXES)


# blk-mq (block/elevator.c, elevator_change): "none" is special-cased and mq-deadline answers
# to its alias "deadline"; any other legacy name (noop, cfq) is not found and the write fails
# with EINVAL, so the device keeps its default.
BLK_MQ_SCHEDULER_ALIASES = {"deadline": "mq-deadline"}
BLK_MQ_UNKNOWN_SCHEDULERS = ("noop", "cfq", "anticipatory")


def scheduler_written(release: str, name: str) -> str | None:
    """The scheduler a write of ``name`` to queue/scheduler selects on this kernel, or None
    where the kernel refuses it."""
    if legacy_kernel(release):
        return name
    if name in BLK_MQ_UNKNOWN_SCHEDULERS:
        return None
    return BLK_MQ_SCHEDULER_ALIASES.get(name, name)


# XFS lost its barrier and nobarrier mount options in Linux 4.19 (commit 1c02d502c208, "xfs:
# remove deprecated barrier/nobarrier mount options"), and RHEL 8's 4.18 kernel carries the
# removal: there an fstab entry with one fails to mount and the host boots to emergency mode
# (leapp's check: "on RHEL 8, their occurrence will lead to an unbootable machine"). ext4
# still accepts barrier, nobarrier and barrier=N. "barrier=N" is no XFS option either.
XFS_BARRIER_OPTIONS_REMOVED_IN = (4, 19)
XFS_BARRIER_OPTIONS_RHEL = ("4.18.", ".el8")  # RHEL 8's 4.18: release prefix and dist tag


def xfs_barrier_option(option: str) -> bool:
    return option in ("barrier", "nobarrier") or option.startswith("barrier=")


def xfs_refuses_barrier_options(release: str) -> bool:
    """Whether this kernel's XFS refuses barrier/nobarrier (an unknown kernel: False)."""
    match = re.match(r"([0-9]{1,4})\.([0-9]{1,4})\.", release)
    if not match:
        return False
    version = (int(match.group(1)), int(match.group(2)))
    prefix, dist = XFS_BARRIER_OPTIONS_RHEL
    return version >= XFS_BARRIER_OPTIONS_REMOVED_IN or (
        release.startswith(prefix) and dist in release)


def legacy_kernel_regex() -> str:
    """LEGACY_KERNEL_PREFIXES as an anchored regular expression (Python, ERE and OVAL)."""
    return "^(" + "|".join(re.escape(prefix) for prefix in LEGACY_KERNEL_PREFIXES) + ")"


def vm_vendor_regex(whitespace: str = " ") -> str:
    """An alternation of VM_VENDORS (case-insensitive callers), with ``whitespace`` for the
    spaces inside vendor names (OVAL's regex wants ``\\s``)."""
    return "(" + "|".join(whitespace.join(re.escape(word) for word in vendor.split(" "))
                          for vendor in VM_VENDORS) + ")"


def shell_layout() -> str:
    """The layout as POSIX shell assignments (space-separated words; the vendor list as an
    ERE), for the generated bash library and the standalone collector."""
    words = {
        "THP_DIRS": THP_DIRS, "CONTAINER_MARKERS": CONTAINER_MARKERS, "DMI_FILES": DMI_FILES,
        "PROC_MODULES": (PROC_MODULES,), "GRUB_DEFAULTS": (GRUB_DEFAULTS,),
        "KERNEL_CMDLINE": (KERNEL_CMDLINE,), "BLS_ENTRIES": (BLS_ENTRIES,), "GRUBENV": (GRUBENV,),
        "GRUB2_CFG": (GRUB2_CFG,), "EFI_FIRMWARE": (EFI_FIRMWARE,), "EFI_VENDOR_DIRS": EFI_VENDOR_DIRS,
        "LEGACY_GRUB_CONFS": LEGACY_GRUB_CONFS, "UDEV_RULES_DIRS": UDEV_RULES_DIRS,
        "KVM_VENDOR_MODULES": KVM_VENDOR_MODULES,
        "LIBVIRT_RUNNING_DOMAINS": LIBVIRT_RUNNING_DOMAINS,
        "LIBVIRT_DEFINED_DOMAINS": (LIBVIRT_DEFINED_DOMAINS,), "LIBVIRT_UNITS": LIBVIRT_UNITS,
        "LIBVIRT_SYSV": (LIBVIRT_SYSV,), "KTUNE_SCRIPTS": (KTUNE_SCRIPTS,),
        "KTUNE_SYSV": (KTUNE_SYSV,), "TUNED02_PROFILES": (TUNED02_PROFILES,),
        "TUNED02_ACTIVE": (TUNED02_ACTIVE,),
        "TUNED02_LINKS": tuple(f"{name}:{link}" for name, link in TUNED02_LINKS),
        "RHEL5_KERNEL_PREFIX": (RHEL5_KERNEL_PREFIX,), "SAS_PATH_VALUES": SAS_PATH_VALUES,
        **{name: (pattern.replace(r"[ \t]", "[[:space:]]").replace(r"\b", "([^[:alnum:]_]|$)"),)
           for name, pattern in (("KTUNE_ENABLES_THP", KTUNE_ENABLES_THP),
                                 ("KTUNE_NOBARRIER", KTUNE_NOBARRIER),
                                 ("KTUNE_DISABLES_BARRIERS", KTUNE_DISABLES_BARRIERS))},
        "TUNED_PROFILE_DIRS": TUNED_PROFILE_DIRS, "TUNED_ACTIVE_FILES": TUNED_ACTIVE_FILES,
        "TUNED_BINARIES": TUNED_BINARIES,
        "TUNED_PPD_FILES": (TUNED_PPD_BINARY, TUNED_PPD_CONF, TUNED_PPD_BASE, TUNED_PPD_LINK,
                            *DEFAULT_TARGET_LINKS),
        "TUNED_SHIPPED_PROFILES": (TUNED_SHIPPED_PROFILES,),
        "TUNED_NEW_LAYOUT": (TUNED_NEW_LAYOUT,),
        "TUNED_VERSION_PARENT": (TUNED_VERSION_PARENT,), "TUNED_VERSION_DIRS": TUNED_VERSION_DIRS,
        "TUNED_PROFILES_SUBDIR": (TUNED_PROFILES_SUBDIR,),
        "TUNED_ROLE_PROFILES": tuple(f"{role}:{name}" for role, name in TUNED_ROLE_PROFILES.items()),
        "TUNED_STOCK_READAHEAD": tuple(f"{name}:{kib}" for name, kib in TUNED_STOCK_READAHEAD_KIB.items()),
        "SYSTEMD_WANTS_DIRS": SYSTEMD_WANTS_DIRS, "SYSTEMD_UNIT_DIRS": SYSTEMD_UNIT_DIRS,
        "TMPFILES_DIRS": TMPFILES_DIRS, "SYSCTL_DIRS": SYSCTL_DIRS,
        "SYSCTL_CONF": (SYSCTL_CONF,), "TUNED_MAIN_CONF": (TUNED_MAIN_CONF,),
        "KTUNE_SYSCONFIG": (KTUNE_SYSCONFIG,), "FSTAB": (FSTAB,),
        "TUNED_RECOMMEND_FILES": (TUNED_PROFILE_MODE_FILE, TUNED_RECOMMEND_CONF,
                                  SYSTEM_RELEASE_CPE, DMI_CHASSIS_TYPE, SYSPURPOSE_FILE),
        "TUNED_RECOMMEND_DIRS": TUNED_RECOMMEND_DIRS,
        "LVM_BACKUP": (LVM_BACKUP,),
        "KTUNE_SYSCTL": (KTUNE_SHIPPED_CONFIG["SYSCTL"],),
        "SYSV_RUNLEVEL_DIRS": SYSV_RUNLEVEL_DIRS, "LEGACY_SCHEDULERS": LEGACY_SCHEDULERS,
        "LEGACY_DEFAULT_SCHEDULERS": tuple(f"{prefix}:{name}"
                                           for prefix, name in LEGACY_DEFAULT_SCHEDULERS),
        "SATA_VENDOR": (SATA_VENDOR,),
        "PROC_CMDLINE": (PROC_CMDLINE,), "PROC_CPUINFO": (PROC_CPUINFO,),
        "CPUIDLE_STATES": (CPUIDLE_STATES,), "CPUIDLE_DRIVER": (CPUIDLE_DRIVER,),
        "CPU_FEATURE_FILES": CPU_FEATURE_FILES,
        "NETWORK_FS_TYPES": NETWORK_FS_TYPES, "BDI_CLASS": (BDI_CLASS,),
        "MOUNTINFO": (MOUNTINFO,), "MULTIPATH_CONF": (MULTIPATH_CONF,),
        "MULTIPATH_MANPAGES": MULTIPATH_MANPAGES,
        "VXVM_DEVICE_DIRS": VXVM_DEVICE_DIRS, "VXFS_TUNEFSTAB": (VXFS_TUNEFSTAB,),
        "MULTIPATH_CONF_DIR": (MULTIPATH_CONF_DIR,),
        "MULTIPATH_UUID_PREFIX": (MULTIPATH_UUID_PREFIX,),
        "DMSETUP_TABLE": (DMSETUP_TABLE,), "DMSETUP_STATUS": (DMSETUP_STATUS,),
        "MULTIPATH_CONFIG_DUMP": (MULTIPATH_CONFIG_DUMP,),
        "NUMA_NODES_ONLINE": (NUMA_NODES_ONLINE,),
        "SAS_HOMES": SAS_HOMES, "SAS_FOUNDATIONS": SAS_FOUNDATIONS,
        "SAS_CONFIG_DIRS": SAS_CONFIG_DIRS, "SAS_USERMODS": (SAS_USERMODS,),
        "SAS_VIYA_SPRE_CONFIG": (SAS_VIYA_SPRE_CONFIG,), "INIT_SCRIPTS": INIT_SCRIPTS,
        "SAS_INSTALL_DIRS": SAS_INSTALL_DIRS, "TUNED02_FUNCTIONS": (TUNED02_FUNCTIONS,),
        "SCSI_CACHE_TYPE": (SCSI_CACHE_TYPE,),
    }
    values = {name: " ".join(items) for name, items in words.items()}
    values.update(VM_VENDORS=vm_vendor_regex(),
                  LEGACY_KERNEL_RE=legacy_kernel_regex())
    return "".join(shell_assignment(f"LAYOUT_{name}", value) for name, value in values.items())


def shell_assignment(name: str, value: str, line_width: int = 96) -> str:
    """``name=value`` as POSIX shell, long values continued in pieces (``name="$name"'...'``)
    so that no line outgrows what linters of the embedding files (YAML, XML) accept."""
    width = max(16, line_width - len(f'{name}="${name}"\'\''))
    pieces = []
    while len(value) > width:  # break after a space or '|' where there is one
        cut = max(value.rfind(" ", 0, width), value.rfind("|", 0, width)) + 1 or width
        pieces.append(value[:cut])
        value = value[cut:]
    pieces.append(value)
    lines = [f"{name}={shlex.quote(pieces[0])}"]
    lines += [f'{name}="${name}"{shlex.quote(piece)}' for piece in pieces[1:]]
    return "\n".join(lines) + "\n"
