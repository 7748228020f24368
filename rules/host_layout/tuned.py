"""tuned and ktune: where each release keeps its profiles, which of its options are on, and
what RHEL 5/6's ktune scripts do (scanner/tuned/)."""

from __future__ import annotations

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
# The same modifiers in [sysctl] (plugin_sysctl.py _instance_apply_static, commit 90c371f,
# first in v2.10.0): ">N" writes N only above the value the key has when tuned starts, "<N"
# only below it. Before, ">N" was written as it is, which the kernel refuses.
TUNED_SYSCTL_MODIFIERS_SINCE = (2, 10)
# tuned's openshift profiles include throughput-performance or virtual-guest (profiles/
# openshift/tuned.conf: include=${f:virt_check:virtual-guest:throughput-performance}).
TUNED_STOCK_READAHEAD_KIB = {"throughput-performance": 4096, "enterprise-storage": 4096,
                             "virtual-guest": 4096, "virtual-host": 4096, "openshift": 4096,
                             "openshift-node": 4096, "openshift-control-plane": 4096}
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
