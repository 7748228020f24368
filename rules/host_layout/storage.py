"""The storage below the SAS file systems: LVM, I/O schedulers by kernel, Veritas, network
file systems, dm-multipath and striping (scanner/storage/)."""

from __future__ import annotations

import re

# -- LVM ----------------------------------------------------------------------------------
# Metadata backups, one file per VG: an LV's read_ahead there is set at every activation.
LVM_BACKUP = "/etc/lvm/backup"

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
# OVAL has no division, so it pairs a page and a stripe unit by listing the ratios k
# (larger = k x smaller) it recognises: every k up to 64, and above that up to 1024 each k
# whose odd part is at most 15 (a power of two times a stripe of at most 15 units' worth:
# 96, 128, 192, ... 960, 1024). Every value a test uses is listed again in oscap's results
# for each SAS volume, so all 1024 ratios made the check 1.8 MB of an ARF (#66).
PAGE_UNIT_RATIO_SMALL = 64
PAGE_UNIT_RATIO_MAX = 1024
PAGE_UNIT_ODD_MAX = 15


def _odd_part(number: int) -> int:
    while number % 2 == 0:
        number //= 2
    return number


PAGE_UNIT_RATIOS = tuple(k for k in range(1, PAGE_UNIT_RATIO_MAX + 1)
                         if k <= PAGE_UNIT_RATIO_SMALL or _odd_part(k) <= PAGE_UNIT_ODD_MAX)


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
