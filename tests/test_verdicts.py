"""Every rule passes on the compliant baseline and fails (or is n/a) when one thing changes."""

from __future__ import annotations

from typing import Any

import pytest

from .boot_samples import (
    ENTERPRISE_STORAGE_KTUNE_SYSCONFIG,
    ENTERPRISE_STORAGE_SYSCTL_KTUNE,
    KTUNE_ENTERPRISE_STORAGE,
    KTUNE_SAS_XTREMIO,
    RHEL5_KTUNE_FILES,
    RHEL5_KTUNE_ON,
    RHEL6_ARGS,
    RHEL6_GRUB_CONF,
    RHEL7_GRUB_CFG,
    RHEL7_GRUBENV,
    SAS_MPATH_WWID,
    lvm_backup,
    multipath_conf,
    rhel6_ktune,
    rhel7_grub_cfg,
)
from .hosts import (
    NO_THP_ON_CMDLINE,
    RHEL6_RC_LOCAL,
    RHEL9_STOCK,
    SAS_PROFILE,
    THP_TMPFILES,
    THROUGHPUT_PERFORMANCE_2_21,
    THUNDERX2_CPUINFO,
    SasFs,
)

ALL_RULES_EXCEPT_KVM_HOST = {
    "thp_disabled", "thp_defrag_disabled", "io_scheduler", "read_ahead",
    "barrier_requires_protected_cache", "sas_fs_noatime", "sas_dirs_separate", "sas_fs_type",
    "tuned_profile", "cpu_governor_performance", "vm_dirty_ratio", "thp_disabled_at_boot",
    "io_tuning_at_boot", "dirty_ratio_at_boot", "mount_options_at_boot", "numa_enabled",
    "multipath_all_paths_active", "sas_volume_striped", "sas_bufsize_matches_stripe",
    "xtremio_paths_per_lun",
}


def test_baseline_passes_every_rule(host, scan):
    result = scan(host())
    verdicts = {rule_id: rule["result"] for rule_id, rule in result["by_id"].items()}
    assert {r for r, v in verdicts.items() if v == "pass"} == ALL_RULES_EXCEPT_KVM_HOST
    assert verdicts["thp_enabled_on_kvm_host"] == "notapplicable"
    assert verdicts["kvm_guest_disks_direct"] == "notapplicable"
    assert verdicts["sas_fs_throughput"] == "notchecked"  # sascheck iotest measures it


# A RHEL 7 host: no BLS entries, GRUB 2 menu written by grub2-mkconfig, a balanced tuned.
RHEL7_NO_BLS: dict[str, Any] = {"kernel": "3.10.0-1160.el7.x86_64", "bls_options": None,
                                "grub_cmdline": "crashkernel=auto rhgb quiet",
                                "tuned_active": "balanced"}


KTUNE_FILES, KTUNE_LINKS = rhel6_ktune(KTUNE_ENTERPRISE_STORAGE)
# A RHEL 6 host booting with THP never (grub.conf's default title), ktune enabled.


# A site's own tuned 2 profile, written from scratch with the throughput settings.
SITE_PROFILE = """\
[main]
summary=SAS on flash (site profile)

[cpu]
governor=performance

[vm]
transparent_hugepages=never

[disk]
readahead=>4096

[sysctl]
vm.dirty_ratio = 40
"""


def udev_block(assignments: str) -> str:
    """A udev rule for block devices with ``assignments``, one line as udev reads it."""
    return f'ACTION=="add|change", SUBSYSTEM=="block", {assignments}\n'


def sas_cfg(bufsize: str | None) -> str:
    """The baseline's sasv9_local.cfg with another -BUFSIZE line (None: no such line)."""
    return "-WORK /saswork\n-UTILLOC /sasutil\n" + (f"-BUFSIZE {bufsize}\n" if bufsize else "")


def nfs_data(read_ahead_kb: int) -> SasFs:
    """SAS DATA on NFS v4.1, mounted as mount.nfs reports it in /proc/mounts."""
    return SasFs("sasdata", "/sasdata", fstype="nfs4", source="nas01:/export/sasdata",
                 options="rw,noatime,vers=4.1,rsize=1048576,wsize=1048576,namlen=255,hard,"
                         "proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=10.0.0.7,"
                         "local_lock=none,addr=10.0.0.20",
                 bdi_read_ahead_kb=read_ahead_kb)


def nfs_work(name: str = "saswork") -> SasFs:
    """SAS WORK (or another SAS file system) on NFS v4.1, as nfs_data mounts DATA."""
    data = nfs_data(16384)
    return SasFs(name, f"/{name}", fstype=data.fstype, source=f"nas01:/export/{name}",
                 options=data.options, bdi_read_ahead_kb=16384)


# Every SAS file system on NFS: no local block device below any of them.
ALL_NFS = {"filesystems": [nfs_data(16384), nfs_work(), nfs_work("sasutil")]}


# A RHEL 5 host: 2.6.18, no THP directory, no tuned, booting from GRUB 0.97.
RHEL5: dict[str, Any] = {"kernel": "2.6.18-419.el5", "thp_enabled": None, "tuned_installed": False,
                         "bls_options": None, "grub_cmdline": None, "defrag_tmpfiles": False}
RHEL6_KTUNE: dict[str, Any] = {"kernel": "2.6.32-754.35.1.el6.x86_64", "rhel6_thp": True,
                               "bls_options": None, "grub_cmdline": None, "tuned_active": None,
                               "extra_links": KTUNE_LINKS, "defrag_tmpfiles": False}
RHEL6_DEFRAG_RC = {"/etc/rc.d/rc.local": RHEL6_RC_LOCAL.splitlines(keepends=True)[1]}
# Legacy request queues as RHEL 7 shows them on SAN paths and their dm-multipath device.
RHEL7_QUEUES = {"path_scheduler": "noop [deadline] cfq", "mpath_scheduler": "noop [deadline] cfq"}
# An older kernel's BLS entry, as kernel-install left it before THP was turned off.
OLD_BLS_ID = "0123456789abcdef-4.18.0-477.10.1.el8_8.x86_64"
OLD_BLS = f"/boot/loader/entries/{OLD_BLS_ID}.conf"
OLD_BLS_TEXT = ("title Red Hat Enterprise Linux (4.18.0-477.10.1.el8_8.x86_64) 8.8 (Ootpa)\n"
                "version 4.18.0-477.10.1.el8_8.x86_64\nlinux /vmlinuz-4.18.0-477.10.1.el8_8.x86_64\n"
                "initrd /initramfs-4.18.0-477.10.1.el8_8.x86_64.img $tuned_initrd\n"
                "options root=/dev/mapper/rhel-root ro crashkernel=auto\nid rhel-20230505\n"
                "grub_users $grub_users\ngrub_arg --unrestricted\ngrub_class kernel\n")
# A unit as Red Hat's THP solution writes it, enabled into multi-user.target.
THP_UNIT = "/etc/systemd/system/disable-thp.service"
MULTI_USER_WANTS = "/etc/systemd/system/multi-user.target.wants"
THP_UNIT_TEXT = """\
[Unit]
Description=Disable Transparent Huge Pages (THP)
DefaultDependencies=no
After=sysinit.target local-fs.target
Before=basic.target

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'echo never > /sys/kernel/mm/transparent_hugepage/enabled && \\
echo never > /sys/kernel/mm/transparent_hugepage/defrag'

[Install]
WantedBy=basic.target
"""
RA_BY_UDEV_1024, RA_BY_UDEV_4096 = (
    {"/etc/udev/rules.d/60-sas.rules": 'ACTION=="add|change", SUBSYSTEM=="block", '
                                       f'KERNEL=="sd*", ATTR{{queue/read_ahead_kb}}="{kib}"\n'}
    for kib in (1024, 4096))
RA_IN_RC_LOCAL = {"/etc/rc.d/rc.local": "blockdev --setra 4096 /dev/sdb\n"}
RHEL6_NEVER = RHEL6_GRUB_CONF.replace(f"{RHEL6_ARGS}\n", f"{RHEL6_ARGS} transparent_hugepage=never\n")


def data_fs(fstype: str = "xfs", options: str = "rw,noatime,attr2,inode64,noquota",
            fstab: str | None = "") -> list[SasFs]:
    """The baseline's three SAS file systems with DATA's type, options or fstab changed."""
    return [SasFs("sasdata", "/sasdata", fstype, options, fstab), SasFs("saswork", "/saswork"),
            SasFs("sasutil", "/sasutil")]


BY_UUID = "/dev/disk/by-uuid/3f1c2a9e-7d4b-4c6e-9a51-2b8e0f6d1c47"


def fstab_data(options: str | None) -> dict[str, Any]:
    """Host changes: DATA's /etc/fstab options (None: no line mounts it)."""
    return {"filesystems": data_fs(fstab=options)}


# A site's mount unit (systemd.mount(5)), named after its mount point.
SASDATA_UNIT = """\
[Unit]
Description=SAS permanent data

[Mount]
What=/dev/mapper/sasvg-sasdata
Where=/sasdata
Type=xfs
Options=defaults,noatime

[Install]
WantedBy=local-fs.target
"""


CASES: list[tuple[str, str, dict[str, Any], list[str], str]] = [
    # (case name, rule, host changes, extra --set, expected result)
    ("thp always", "thp_disabled", {"thp_enabled": "[always] madvise never"}, [], "fail"),
    ("thp madvise", "thp_disabled", {"thp_enabled": "always [madvise] never"}, [], "fail"),
    ("thp rhel6 never", "thp_disabled",
     {"thp_enabled": "always madvise [never]", "rhel6_thp": True}, [], "pass"),
    ("thp rhel6 always", "thp_disabled",
     {"thp_enabled": "[always] madvise never", "rhel6_thp": True}, [], "fail"),
    ("no thp support", "thp_disabled", {"thp_enabled": None}, [], "notapplicable"),
    ("thp no brackets", "thp_disabled", {"thp_enabled": "always madvise never"}, [], "error"),
    ("defrag madvise, THP on", "thp_defrag_disabled",
     {"thp_enabled": "always [madvise] never",
      "thp_defrag": "always defer defer+madvise [madvise] never"}, [], "fail"),
    ("defrag madvise, moot with THP never", "thp_defrag_disabled",
     {"thp_enabled": "always madvise [never]",
      "thp_defrag": "always defer defer+madvise [madvise] never"}, [], "pass"),
    # Request-based dm-multipath inserts cloned requests below the paths' schedulers
    # (drivers/md/dm-rq.c, blk_insert_cloned_request): the map's scheduler decides.
    ("bfq on the paths of a multipath map", "io_scheduler",
     {"path_scheduler": "mq-deadline kyber [bfq] none"}, [], "pass"),
    ("bfq on the multipath map", "io_scheduler",
     {"mpath_scheduler": "mq-deadline kyber [bfq] none"}, [], "fail"),
    ("rhel6 cfq", "io_scheduler", {"path_scheduler": "noop anticipatory deadline [cfq]",
                                   "mpath_scheduler": "noop anticipatory deadline [cfq]"}, [],
     "fail"),
    ("rhel6 deadline", "io_scheduler", {"path_scheduler": "noop anticipatory [deadline] cfq",
                                        "mpath_scheduler": "noop anticipatory [deadline] cfq"},
     [], "pass"),
    ("none allowed", "io_scheduler", {"path_scheduler": "[none] mq-deadline kyber bfq"}, [],
     "pass"),
    ("none not allowed by site", "io_scheduler", {"mpath_scheduler": "[none] mq-deadline"},
     ["allowed_schedulers=mq-deadline"], "fail"),
    ("read-ahead 128", "read_ahead", {"read_ahead_kb": 128}, [], "fail"),
    ("read-ahead exactly 2048", "read_ahead", {"read_ahead_kb": 2048}, [], "pass"),
    ("read-ahead site minimum", "read_ahead", {}, ["read_ahead_min_kb=8192"], "fail"),
    ("barrier=0", "barrier_requires_protected_cache",
     {"filesystems": data_fs("ext4", "rw,noatime,barrier=0")}, [],
     "fail"),
    ("nobarrier", "barrier_requires_protected_cache",
     {"filesystems": data_fs("xfs", "rw,noatime,nobarrier")}, [],
     "fail"),
    ("nobarrier with protected cache", "barrier_requires_protected_cache",
     {"filesystems": data_fs("xfs", "rw,noatime,nobarrier")},
     ["storage_cache_protected=true"], "pass"),
    ("barrier=1 is a different token", "barrier_requires_protected_cache",
     {"filesystems": data_fs("ext4", "rw,noatime,barrier=1")}, [],
     "pass"),
    ("relatime", "sas_fs_noatime",
     {"filesystems": data_fs(options="rw,relatime")}, [], "fail"),
    ("nodiratime alone", "sas_fs_noatime",
     {"filesystems": data_fs(options="rw,nodiratime,relatime")}, [],
     "fail"),
    # A token that merely contains the option (here an SELinux context) is not the option.
    ("noatime only inside another token", "sas_fs_noatime",
     {"filesystems": data_fs(
         options="rw,relatime,context=system_u:object_r:noatime_t:s0")},
     [], "fail"),
    ("ext3", "sas_fs_type", {"filesystems": data_fs("ext3")}, [], "fail"),
    # DATA alone may be shared (seed 001 "RHEL Filesystems": NFS, GFS2; seed 003: VxCFS);
    # WORK and UTILLOC want local storage.
    ("fs type: DATA on NFS", "sas_fs_type", {"filesystems": [
        nfs_data(16384), SasFs("saswork", "/saswork"), SasFs("sasutil", "/sasutil")]}, [],
     "pass"),
    # Nothing judged is never a pass (#24 item 4): no device below NFS has a scheduler.
    ("scheduler: every SAS file system on NFS", "io_scheduler", ALL_NFS, [], "notapplicable"),
    ("striping: every SAS file system on NFS", "sas_volume_striped", ALL_NFS, [],
     "notapplicable"),
    ("fs type: DATA on gfs2", "sas_fs_type", {"filesystems": data_fs("gfs2")}, [], "pass"),
    ("fs type: WORK on NFS", "sas_fs_type", {"filesystems": [
        SasFs("sasdata", "/sasdata"), nfs_work(), SasFs("sasutil", "/sasutil")]}, [], "fail"),
    ("fs type: DATA on NFS, no shared type allowed", "sas_fs_type", {"filesystems": [
        nfs_data(16384), SasFs("saswork", "/saswork"), SasFs("sasutil", "/sasutil")]},
     ["allowed_shared_data_fs_types="], "fail"),
    ("ext4", "sas_fs_type", {"filesystems": data_fs("ext4")}, [], "pass"),
    ("ext4 not allowed by site", "sas_fs_type",
     {"filesystems": data_fs("ext4")}, ["allowed_fs_types=xfs"], "fail"),
    ("work with data", "sas_dirs_separate", {"sas_local_cfg": "-WORK /sasdata/work\n"}, [],
     "fail"),
    # One LV mounted twice, or a bind mount: the same file system under two names.
    ("work bind-mounted from the data LV", "sas_dirs_separate",
     {"filesystems": [SasFs("sasdata", "/sasdata"), SasFs("sasdata", "/saswork"),
                      SasFs("sasutil", "/sasutil")]}, [], "fail"),
    ("work on root fs", "sas_dirs_separate", {"sas_local_cfg": None}, [], "fail"),
    # Nested mounts: WORK lies on /sas/work, not on /sas that also holds DATA.
    ("nested mounts", "sas_dirs_separate",
     {"filesystems": [SasFs("sas", "/sas"), SasFs("saswork", "/sas/work"),
                      SasFs("sasutil", "/sasutil")],
      "sas_dirs": ("/sas/data",), "sas_local_cfg": "-WORK /sas/work/x\n-UTILLOC /sasutil\n"},
     ["sas_data_dirs=/sas/data"],
     "pass"),
    ("nested mounts, WORK beside DATA", "sas_dirs_separate",
     {"filesystems": [SasFs("sas", "/sas"), SasFs("saswork", "/sas/work"),
                      SasFs("sasutil", "/sasutil")],
      "sas_dirs": ("/sas/data",), "sas_local_cfg": "-WORK /sas/workx\n-UTILLOC /sasutil\n"},
     ["sas_data_dirs=/sas/data"],
     "fail"),
    ("mount point with a space", "sas_fs_noatime",
     {"filesystems": [SasFs("sasdata", "/sasdata"), SasFs("saswork", "/sas work", "xfs",
                                                           "rw,relatime")],
      "sas_local_cfg": "-WORK '/sas work'\n"}, [], "fail"),
    # A device node the root has no link for: found by the major:minor of mountinfo.
    ("mounted by a /dev/disk/by-uuid name the root lacks", "read_ahead",
     {"filesystems": [SasFs("sasdata", "/sasdata", source=BY_UUID), SasFs("saswork", "/saswork"),
                      SasFs("sasutil", "/sasutil")], "read_ahead_kb": 128}, [], "fail"),
    ("mount point with a space, read-ahead", "read_ahead",
     {"filesystems": [SasFs("sasdata", "/sasdata"), SasFs("saswork", "/sas work")],
      "sas_local_cfg": "-WORK '/sas work'\n"}, [], "pass"),
    ("tuned missing", "tuned_profile", {"tuned_installed": False}, [], "fail"),
    ("tuned disabled", "tuned_profile", {"tuned_enabled": False}, [], "fail"),
    ("tuned balanced", "tuned_profile", {"tuned_active": "balanced"}, [], "fail"),
    ("tuned two profiles", "tuned_profile", {"tuned_active": "balanced sas-performance"}, [],
     "pass"),
    ("tuned enterprise-storage", "tuned_profile", {"tuned_active": "enterprise-storage"}, [],
     "pass"),
    ("tuned no active profile", "tuned_profile", {"tuned_active": None}, [], "fail"),
    ("tuned include cycle", "tuned_profile",
     {"tuned_custom": {"a": "[main]\ninclude=b\n", "b": "[main]\ninclude=a\n"},
      "tuned_active": "a"}, [], "fail"),
    ("governor ondemand", "cpu_governor_performance", {"governor": "ondemand"}, [], "fail"),
    ("no cpufreq", "cpu_governor_performance", {"governor": None}, [], "notapplicable"),
    ("dirty ratio 20", "vm_dirty_ratio", {"dirty_ratio": 20}, [], "fail"),
    ("dirty ratio site value", "vm_dirty_ratio", {"dirty_ratio": 20}, ["dirty_ratio=20"],
     "pass"),
    ("dirty ratio missing", "vm_dirty_ratio", {"dirty_ratio": None}, [], "error"),
    # The kernel keeps one of dirty_ratio and dirty_bytes (mm/page-writeback.c): a site's
    # byte limit reads dirty_ratio 0 and is reported, not failed.
    ("dirty ratio 0 under a site's dirty_bytes", "vm_dirty_ratio",
     {"dirty_ratio": 0, "extra_files": {"/proc/sys/vm/dirty_bytes": "4294967296\n"}}, [], "pass"),
    ("dirty ratio 0, dirty_bytes 0", "vm_dirty_ratio",
     {"dirty_ratio": 0, "extra_files": {"/proc/sys/vm/dirty_bytes": "0\n"}}, [], "fail"),
    ("thp boot: tuned only", "thp_disabled_at_boot",
     {"bls_options": "root=/dev/sda ro", "grub_cmdline": ""}, [], "pass"),
    ("thp boot: nothing", "thp_disabled_at_boot",
     {"bls_options": "root=/dev/sda ro", "grub_cmdline": "", "tuned_active": "balanced"}, [],
     "fail"),
    ("thp boot: tuned turns it on", "thp_disabled_at_boot",
     {"bls_options": "root=/dev/sda ro", "tuned_active": "throughput-performance"}, [], "fail"),
    ("thp boot: cmdline wins over tuned", "thp_disabled_at_boot",
     {"tuned_active": "throughput-performance"}, [], "pass"),
    ("thp boot: grub defaults only (no BLS)", "thp_disabled_at_boot",
     {"bls_options": None, "tuned_active": "balanced"}, [], "pass"),
    ("thp boot: BLS entry lacks it though grub defaults have it", "thp_disabled_at_boot",
     {"bls_options": "root=/dev/sda ro", "tuned_active": "balanced"}, [], "fail"),
    ("thp boot: BLS via grubenv kernelopts", "thp_disabled_at_boot",
     {"bls_options": "$kernelopts", "tuned_active": "balanced", "grub_cmdline": "",
      "extra_files": {"/boot/grub2/grubenv": "# GRUB Environment Block\nkernelopts=root=/dev/sda"
                                             " ro transparent_hugepage=never\n" + "#" * 900}},
     [], "pass"),
    ("thp boot: rc.local", "thp_disabled_at_boot",
     {"bls_options": "ro", "tuned_active": "balanced",
      "extra_files": {"/etc/rc.d/rc.local": "#!/bin/sh\necho never > "
                                            "/sys/kernel/mm/transparent_hugepage/enabled\n"}},
     [], "pass"),
    ("thp boot: rc.local not executable (as RHEL 7 ships it)", "thp_disabled_at_boot",
     {"bls_options": "ro", "tuned_active": "balanced", "executables": (),
      "extra_links": {"/etc/rc.local": "rc.d/rc.local"},  # as RHEL ships the pair
      "extra_files": {"/etc/rc.d/rc.local": "#!/bin/bash\ntouch /var/lock/subsys/local\n"
                                            "echo never > "
                                            "/sys/kernel/mm/transparent_hugepage/enabled\n"}},
     [], "fail"),
    ("io boot: blockdev in an rc.local that does not run", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": "[main]\nsummary=scheduler only\n\n[disk]\n"
                                          "elevator=mq-deadline\n"},
      "executables": (),
      "extra_files": {"/etc/rc.d/rc.local": "blockdev --setra 8192 /dev/sdb\n"}}, [], "fail"),
    ("thp boot: executable rc.local reached through /etc/rc.local", "thp_disabled_at_boot",
     {"bls_options": "ro", "tuned_active": "balanced",
      "extra_links": {"/etc/rc.local": "rc.d/rc.local"},
      "extra_files": {"/etc/rc.d/rc.local": "#!/bin/bash\necho never > "
                                            "/sys/kernel/mm/transparent_hugepage/enabled\n"}},
     [], "pass"),
    ("thp boot: commented rc.local", "thp_disabled_at_boot",
     {"bls_options": "ro", "tuned_active": "balanced",
      "extra_files": {"/etc/rc.d/rc.local": "#echo never > "
                                            "/sys/kernel/mm/transparent_hugepage/enabled\n"}},
     [], "fail"),
    ("io boot: balanced profile", "io_tuning_at_boot", {"tuned_active": "balanced"}, [], "fail"),
    ("io boot: tuned readahead too small", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace(">4096", ">1024")}}, [], "fail"),
    ("io boot: readahead in sectors", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace(">4096", "4096 s")}}, [], "pass"),
    ("io boot: sectors below site minimum", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace(">4096", "4096 s")}},
     ["read_ahead_min_kb=4096"], "fail"),
    ("io boot: udev rule instead of tuned", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {
         "/etc/udev/rules.d/99-sas.rules":
             'ACTION=="add|change", SUBSYSTEM=="block", ENV{ID_VENDOR}=="XtremIO", '
             'ATTR{queue/scheduler}="noop", ATTR{bdi/read_ahead_kb}="16384"\n'}}, [], "pass"),
    # blk-mq (block/elevator.c elevator_change) has no noop: the write fails with EINVAL and
    # the device keeps its default (mq-deadline here); deadline is mq-deadline's alias.
    ("io boot: udev noop on a blk-mq kernel sets nothing", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {"/etc/udev/rules.d/99-sas.rules": udev_block(
         'ATTR{queue/scheduler}="noop", ATTR{bdi/read_ahead_kb}="16384"')}},
     ["allowed_schedulers=noop,none"], "fail"),
    ("io boot: udev noop on a RHEL 7 kernel", "io_tuning_at_boot",
     {"tuned_active": "balanced", "kernel": "3.10.0-1160.el7.x86_64", **RHEL7_QUEUES,
      "extra_files": {"/etc/udev/rules.d/99-sas.rules": udev_block(
          'ATTR{queue/scheduler}="noop", ATTR{bdi/read_ahead_kb}="16384"')}},
     ["allowed_schedulers=noop,none"], "pass"),
    ("io boot: tuned elevator=deadline on blk-mq is mq-deadline", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace("[disk]", "[disk]\nelevator=deadline")}},
     ["allowed_schedulers=mq-deadline"], "pass"),
    ("io boot: udev deadline on blk-mq is mq-deadline", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {"/etc/udev/rules.d/99-sas.rules": udev_block(
         'ATTR{queue/scheduler}="deadline", ATTR{bdi/read_ahead_kb}="16384"')}},
     ["allowed_schedulers=mq-deadline"], "pass"),
    # Read-ahead LVM keeps in its metadata (lvchange -r) is set at every activation.
    ("io boot: LVM metadata keeps read_ahead for every SAS LV", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {"/etc/lvm/backup/sasvg": lvm_backup(
         "sasvg", {"sasdata": 8192, "saswork": 8192, "sasutil": 4096})}}, [], "pass"),
    ("io boot: LVM read_ahead of one LV below the minimum, over udev", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {
         "/etc/lvm/backup/sasvg": lvm_backup("sasvg", {"sasdata": 256, "saswork": None,
                                                       "sasutil": None}),
         "/etc/udev/rules.d/99-sas.rules": 'ACTION=="add|change", SUBSYSTEM=="block", '
                                           'ATTR{bdi/read_ahead_kb}="16384"\n'}}, [], "fail"),
    # udev rules as udev runs them: a GOTO guard makes the block match, a KERNEL glob of
    # disks needs no SUBSYSTEM, a glob of partitions reaches no queue/.
    ("io boot: udev rules behind GOTO guards", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {"/etc/udev/rules.d/60-sas.rules": (
         'ACTION!="add|change", GOTO="sas_end"\nSUBSYSTEM!="block", GOTO="sas_end"\n'
         'KERNEL!="sd*|dm-*", GOTO="sas_end"\n'
         'ATTR{queue/scheduler}="mq-deadline", ATTR{queue/read_ahead_kb}="4096"\n'
         'LABEL="sas_end"\n')}}, [], "pass"),
    ("io boot: udev KERNEL glob of disks, no SUBSYSTEM", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {"/etc/udev/rules.d/60-sas.rules":
         'ACTION=="add|change", KERNEL=="sd[a-z]", ATTR{queue/read_ahead_kb}="4096"\n'}},
     [], "pass"),
    ("io boot: udev KERNEL glob of partitions only", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {"/etc/udev/rules.d/60-sas.rules":
         'ACTION=="add|change", KERNEL=="sd*[0-9]", ATTR{queue/read_ahead_kb}="4096"\n'}},
     [], "fail"),
    ("io boot: udev rule for another subsystem", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {
         "/etc/udev/rules.d/99-x.rules":
             'SUBSYSTEM=="net", ATTR{queue/scheduler}="noop", ATTR{bdi/read_ahead_kb}="16384"'
             '\n# block\n'}}, [], "fail"),
    ("io boot: rhel6 elevator= and blockdev in rc.local", "io_tuning_at_boot",
     {"kernel": "2.6.32-754.el6.x86_64", "tuned_active": "balanced", "bls_options": None,
      "grub_cmdline": None, "extra_files": {
          "/boot/grub/grub.conf": "title RHEL\n\tkernel /vmlinuz ro root=/dev/sda2 "
                                  "elevator=deadline\n",
          "/etc/rc.d/rc.local": "blockdev --setra 4096 /dev/mapper/sasvg-saswork\n"}}, [],
     "pass"),
    # The kernel command line that boots (scanner.bootloader): on RHEL 7 the GRUB 2 menu,
    # not /etc/default/grub; on RHEL 6 grub.conf's default title.
    ("thp boot: RHEL 7 grubby added it to the menu", "thp_disabled_at_boot",
     {**RHEL7_NO_BLS, "extra_files": {"/boot/grub2/grub.cfg": rhel7_grub_cfg(
         "crashkernel=auto rhgb quiet transparent_hugepage=never"),
         "/boot/grub2/grubenv": RHEL7_GRUBENV}}, [], "pass"),
    ("thp boot: RHEL 7 /etc/default/grub edited, grub2-mkconfig not run",
     "thp_disabled_at_boot",
     {**RHEL7_NO_BLS, "grub_cmdline": "crashkernel=auto rhgb quiet transparent_hugepage=never",
      "extra_files": {"/boot/grub2/grub.cfg": RHEL7_GRUB_CFG,
                      "/boot/grub2/grubenv": RHEL7_GRUBENV}}, [], "fail"),
    ("thp boot: RHEL 7 default entry 1 lacks it", "thp_disabled_at_boot",
     {**RHEL7_NO_BLS, "extra_files": {"/boot/grub2/grub.cfg": rhel7_grub_cfg(
         "rhgb quiet transparent_hugepage=never", rescue_args="rhgb quiet").replace(
         'set default="${saved_entry}"', 'set default="1"')}}, [], "fail"),
    ("thp boot: RHEL 6 default=1 boots the kernel without it", "thp_disabled_at_boot",
     {**RHEL7_NO_BLS, "kernel": "2.6.32-754.35.1.el6.x86_64",
      "extra_files": {"/boot/grub/grub.conf": RHEL6_GRUB_CONF}}, [], "fail"),
    ("thp boot: RHEL 6 default=0 boots the kernel with it", "thp_disabled_at_boot",
     {**RHEL7_NO_BLS, "kernel": "2.6.32-754.35.1.el6.x86_64",
      "extra_files": {"/boot/grub/grub.conf": RHEL6_GRUB_CONF.replace("default=1",
                                                                       "default=0")}}, [],
     "pass"),
    ("io boot: RHEL 7 elevator= only in /etc/default/grub", "io_tuning_at_boot",
     {**RHEL7_NO_BLS, "grub_cmdline": "rhgb quiet elevator=noop", "tuned_active": "balanced",
      "extra_files": {"/boot/grub2/grub.cfg": RHEL7_GRUB_CFG, **RA_IN_RC_LOCAL}},
     ["allowed_schedulers=noop"], "fail"),
    ("io boot: RHEL 7 elevator= in the menu", "io_tuning_at_boot",
     {**RHEL7_NO_BLS, "tuned_active": "balanced",
      "extra_files": {"/boot/grub2/grub.cfg": rhel7_grub_cfg("rhgb quiet elevator=noop"),
                      **RA_IN_RC_LOCAL}}, ["allowed_schedulers=noop"], "pass"),
    # With nothing configuring it, the kernel's default scheduler is what every boot gets
    # (scanner.blockdev.default_scheduler).
    ("io boot: RHEL 7 SAN LUNs get deadline by default", "io_tuning_at_boot",
     {**RHEL7_NO_BLS, **RHEL7_QUEUES,
      "extra_files": {"/boot/grub2/grub.cfg": RHEL7_GRUB_CFG, **RA_IN_RC_LOCAL}}, [], "pass"),
    # Bio-based maps (queue_mode bio, no scheduler) leave scheduling to their SATA paths.
    ("io boot: RHEL 7 SATA disks keep cfq", "io_tuning_at_boot",
     {**RHEL7_NO_BLS, "mpath_scheduler": "none", "path_scheduler": "noop deadline [cfq]",
      "path_vendor": "ATA",
      "extra_files": {"/boot/grub2/grub.cfg": RHEL7_GRUB_CFG, **RA_IN_RC_LOCAL}}, [], "fail"),
    ("io boot: RHEL 6 default cfq", "io_tuning_at_boot",
     {**RHEL7_NO_BLS, "kernel": "2.6.32-754.35.1.el6.x86_64",
      "path_scheduler": "noop anticipatory deadline [cfq]",
      "mpath_scheduler": "noop anticipatory deadline [cfq]",
      "extra_files": {"/boot/grub/grub.conf": RHEL6_GRUB_CONF, **RA_IN_RC_LOCAL}}, [], "fail"),
    ("io boot: RHEL 8 stock: mq-deadline by default", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": RA_IN_RC_LOCAL}, [], "pass"),
    ("io boot: RHEL 8 default mq-deadline, site allows none only", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": RA_IN_RC_LOCAL},
     ["allowed_schedulers=none"], "fail"),
    ("io boot: several hardware queues default to none", "io_tuning_at_boot",
     {"tuned_active": "balanced", "path_hw_queues": 4, "mpath_scheduler": "none",
      "extra_files": RA_IN_RC_LOCAL}, ["allowed_schedulers=none"], "pass"),
    ("io boot: several hardware queues, site allows mq-deadline only", "io_tuning_at_boot",
     {"tuned_active": "balanced", "path_hw_queues": 4, "mpath_scheduler": "none",
      "extra_files": RA_IN_RC_LOCAL}, ["allowed_schedulers=mq-deadline"], "fail"),
    # RHEL 6: ktune turns THP back on at every boot, whatever the command line says.
    ("thp boot: RHEL 6 enterprise-storage ktune over the command line", "thp_disabled_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES, "/boot/grub/grub.conf": RHEL6_NEVER}},
     [], "fail"),
    ("thp boot: RHEL 6 ktune, then rc.local writes never", "thp_disabled_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES, "/boot/grub/grub.conf": RHEL6_NEVER,
                                     "/etc/rc.d/rc.local": RHEL6_RC_LOCAL}}, [], "pass"),
    ("thp boot: RHEL 6 ktune that leaves THP alone", "thp_disabled_at_boot",
     {**RHEL6_KTUNE, "extra_files": {
         **rhel6_ktune(KTUNE_ENTERPRISE_STORAGE.replace("\tenable_transparent_hugepages\n",
                                                        ""))[0],
         "/boot/grub/grub.conf": RHEL6_NEVER, **RHEL6_DEFRAG_RC}}, [], "pass"),
    # A site's ktune.sh start() (seed 003's custom profile) runs line by line after the
    # command line: its echo never counts, and a later enable_transparent_hugepages undoes it.
    ("thp boot: RHEL 6 ktune start() echoes never (seed 003)", "thp_disabled_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**rhel6_ktune(KTUNE_SAS_XTREMIO)[0]}}, [], "pass"),
    ("thp boot: RHEL 6 ktune echoes never, then enables THP", "thp_disabled_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**rhel6_ktune(KTUNE_SAS_XTREMIO.replace(
         "\treturn 0\n}\n\nstop", "\tenable_transparent_hugepages\n\treturn 0\n}\n\nstop"))[0]}},
     [], "fail"),
    # tuned 0.2's functions (v0.2.5 to v0.2.22) define no set_transparent_hugepages.
    ("thp boot: RHEL 6 ktune calls an undefined set_transparent_hugepages",
     "thp_disabled_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**rhel6_ktune(KTUNE_SAS_XTREMIO.replace(
         "echo never > /sys/kernel/mm/redhat_transparent_hugepage/enabled",
         "set_transparent_hugepages never"))[0]}}, [], "fail"),
    # tuned applies a unit only where its uname_regex and cpuinfo_regex match (tuned 2.x
    # units/manager.py): RHEL 9's stock profile sets THP never on ThunderX alone.
    ("thp boot: RHEL 9 throughput-performance on x86_64", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "kernel": "5.14.0-362.8.1.el9_3.x86_64",
      "extra_files": {RHEL9_STOCK: THROUGHPUT_PERFORMANCE_2_21}}, [], "fail"),
    ("thp boot: RHEL 9 throughput-performance on ThunderX2", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "kernel": "5.14.0-362.8.1.el9_3.aarch64",
      "extra_files": {RHEL9_STOCK: THROUGHPUT_PERFORMANCE_2_21,
                      "/proc/cpuinfo": THUNDERX2_CPUINFO}}, [], "pass"),
    ("thp boot: a unit disabled with enabled=false", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "tuned_active": "sas-performance", "tuned_custom": {
         "sas-performance": SAS_PROFILE.replace("[vm]", "[vm]\nenabled=false")}}, [], "fail"),
    # BLS: the entry that boots is grubenv's saved_entry, else the newest (rpmvercmp).
    ("thp boot: BLS newest entry has it, an older kernel's lacks it", "thp_disabled_at_boot",
     {"tuned_active": "balanced", "extra_files": {OLD_BLS: OLD_BLS_TEXT}}, [], "pass"),
    ("thp boot: BLS saved_entry boots the older kernel that lacks it", "thp_disabled_at_boot",
     {"tuned_active": "balanced", "extra_files": {OLD_BLS: OLD_BLS_TEXT, "/boot/grub2/grubenv":
                      f"# GRUB Environment Block\nsaved_entry={OLD_BLS_ID}\n" + "#" * 900}},
     [], "fail"),
    # What THP holds after boot (scanner.checks.boot.thp_after_boot): the command line,
    # then systemd-tmpfiles, then tuned (silent on enabled when the command line sets it),
    # then init scripts and systemd units; defrag must end at never too.
    ("thp boot: command line always, tuned never ignored", "thp_disabled_at_boot",
     {"bls_options": "root=/dev/sda ro transparent_hugepage=always"}, [], "fail"),
    ("thp boot: tmpfiles.d writes enabled never", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "tuned_active": "balanced",
      "extra_files": {"/etc/tmpfiles.d/thp.conf": THP_TMPFILES.format(file="enabled")}},
     [], "pass"),
    ("thp boot: tuned after tmpfiles.d turns it on", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE,
      "extra_files": {"/etc/tmpfiles.d/thp.conf": THP_TMPFILES.format(file="enabled")}},
     [], "fail"),
    ("thp boot: an enabled systemd unit writes never", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "defrag_tmpfiles": False, "extra_files": {THP_UNIT: THP_UNIT_TEXT},
      "extra_links": {f"{MULTI_USER_WANTS}/disable-thp.service": THP_UNIT}}, [], "pass"),
    ("thp boot: a systemd unit that is not enabled", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "extra_files": {THP_UNIT: THP_UNIT_TEXT}}, [], "fail"),
    # With enabled never no huge page is allocated: defrag is reported, not judged (seed
    # 000 and Red Hat's transparent_hugepage=never set enabled alone).
    ("thp boot: defrag not kept at never, moot with enabled never", "thp_disabled_at_boot",
     {"defrag_tmpfiles": False, "tuned_custom": {"sas-performance": SAS_PROFILE.replace(
         "transparent_hugepage.defrag=never\n", "")}}, [], "pass"),
    ("thp boot: defrag from the tuned profile (tuned 2.11+)", "thp_disabled_at_boot",
     {"defrag_tmpfiles": False}, [], "pass"),
    ("thp boot: tuned sets defrag madvise after tmpfiles.d, moot", "thp_disabled_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace(
         "transparent_hugepage.defrag=never", "transparent_hugepage.defrag=madvise")}},
     [], "pass"),
    # What mounts each SAS file system at boot (scanner.boot_mounts): fstab, or a mount unit.
    ("boot mounts: fstab lacks noatime (remounted by hand)", "mount_options_at_boot",
     {**fstab_data("defaults")}, [], "fail"),
    ("boot mounts: fstab turns barriers off", "mount_options_at_boot",
     {**fstab_data("defaults,noatime,nobarrier")}, [], "fail"),
    ("boot mounts: barriers off with a protected cache", "mount_options_at_boot",
     {**fstab_data("defaults,noatime,nobarrier")},
     ["storage_cache_protected=true"], "pass"),
    ("boot mounts: no fstab line (a cluster resource)", "mount_options_at_boot",
     {**fstab_data(None)}, [], "notchecked"),
    ("boot mounts: noauto", "mount_options_at_boot",
     {**fstab_data("noauto,noatime")}, [], "notchecked"),
    ("boot mounts: a mount unit overrides fstab's line", "mount_options_at_boot",
     {**fstab_data("defaults"),
      "extra_files": {"/etc/systemd/system/sasdata.mount": SASDATA_UNIT}}, [], "pass"),
    ("boot mounts: an enabled mount unit without an fstab line", "mount_options_at_boot",
     {**fstab_data(None),
      "extra_files": {"/etc/systemd/system/sasdata.mount": SASDATA_UNIT},
      "extra_links": {"/etc/systemd/system/local-fs.target.wants/sasdata.mount":
                      "/etc/systemd/system/sasdata.mount"}}, [], "pass"),
    ("boot mounts: a mount unit no target wants", "mount_options_at_boot",
     {**fstab_data(None),
      "extra_files": {"/etc/systemd/system/sasdata.mount": SASDATA_UNIT}}, [], "notchecked"),
    # RHEL 6 enterprise-storage: ktune sets ELEVATOR on every disk and remounts nobarrier.
    ("io boot: RHEL 6 ktune ELEVATOR=deadline", "io_tuning_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES, **RA_IN_RC_LOCAL,
                                     "/etc/sysconfig/ktune": ENTERPRISE_STORAGE_KTUNE_SYSCONFIG}},
     [], "pass"),
    # ktune.init applies ELEVATOR only when the booting command line lacks "elevator=".
    ("io boot: RHEL 6 ktune ELEVATOR=cfq, the command line's elevator=deadline wins",
     "io_tuning_at_boot",
     {**RHEL6_KTUNE, "extra_files": {
         **KTUNE_FILES, **RA_IN_RC_LOCAL, "/boot/grub/grub.conf": RHEL6_NEVER.replace(
             "transparent_hugepage=never", "transparent_hugepage=never elevator=deadline"),
         "/etc/sysconfig/ktune":
             ENTERPRISE_STORAGE_KTUNE_SYSCONFIG.replace('"deadline"', '"cfq"')}}, [], "pass"),
    ("io boot: RHEL 6 ktune ELEVATOR=cfq", "io_tuning_at_boot",
     {**RHEL6_KTUNE, "extra_files": {
         **KTUNE_FILES, **RA_IN_RC_LOCAL, "/etc/sysconfig/ktune":
             ENTERPRISE_STORAGE_KTUNE_SYSCONFIG.replace('"deadline"', '"cfq"')}}, [], "fail"),
    # dm-multipath: the grouping multipathd gives the SAS map, by multipath.conf's precedence.
    ("multipath: XtremIO, mpathconf's file (the built-in table's multibus)",
     "multipath_all_paths_active",
     {"extra_files": {"/etc/multipath.conf": multipath_conf()}}, [], "pass"),
    ("multipath: defaults failover, XtremIO's table entry wins", "multipath_all_paths_active",
     {"extra_files": {"/etc/multipath.conf": multipath_conf(
         defaults="\tpath_grouping_policy failover\n")}}, [], "pass"),
    ("multipath: the SAS map's multipaths entry says failover", "multipath_all_paths_active",
     {"extra_files": {"/etc/multipath.conf": multipath_conf(
         f"multipaths {{\n\tmultipath {{\n\t\twwid {SAS_MPATH_WWID}\n\t\talias mpatha\n"
         "\t\tpath_grouping_policy failover\n\t}\n}\n")}}, [], "fail"),
    ("multipath: a devices entry for XtremIO says failover", "multipath_all_paths_active",
     {"extra_files": {"/etc/multipath.conf": multipath_conf(
         'devices {\n\tdevice {\n\t\tvendor "XtremIO"\n\t\tproduct "XtremApp"\n'
         "\t\tpath_grouping_policy failover\n\t}\n}\n")}}, [], "fail"),
    ("multipath: an array the built-in table may know", "multipath_all_paths_active",
     {"path_vendor": "NETAPP", "path_model": "LUN C-Mode",
      "extra_files": {"/etc/multipath.conf": multipath_conf()}}, [], "notchecked"),
    ("multipath: a conf.d entry gives that array group_by_prio", "multipath_all_paths_active",
     {"path_vendor": "NETAPP", "path_model": "LUN C-Mode", "extra_files": {
         "/etc/multipath.conf": multipath_conf(),
         "/etc/multipath/conf.d/netapp.conf":
             'devices {\n  device {\n    vendor "NETAPP"\n    product "LUN"\n'
             "    path_grouping_policy group_by_prio\n    prio alua\n  }\n}\n"}},
     [], "pass"),
    ("multipath: an unclosed section", "multipath_all_paths_active",
     {"extra_files": {"/etc/multipath.conf": multipath_conf("devices {\n\tdevice {\n")}},
     [], "error"),
    # NFS: read-ahead is the bdi's (found by the mount's major:minor), 128 KiB by default.
    ("read-ahead: NFS SAS DATA with the default 128 KiB", "read_ahead",
     {"filesystems": [nfs_data(128), SasFs("saswork", "/saswork"), SasFs("sasutil", "/sasutil")]},
     ["allowed_fs_types=xfs,ext4,nfs4"], "fail"),
    ("read-ahead: NFS SAS DATA raised to 16 MiB", "read_ahead",
     {"filesystems": [nfs_data(16384), SasFs("saswork", "/saswork"),
                      SasFs("sasutil", "/sasutil")]},
     ["allowed_fs_types=xfs,ext4,nfs4"], "pass"),
    # A site's own profile (seed 003) counts where its boot gives what the throughput
    # profiles give: governor performance, THP never, vm.dirty_ratio, read-ahead, scheduler.
    ("tuned: a site profile with the throughput settings", "tuned_profile",
     {"tuned_active": "sas-site", "tuned_custom": {"sas-site": SITE_PROFILE}}, [], "pass"),
    ("tuned: a site profile without the performance governor", "tuned_profile",
     {"tuned_active": "sas-site", "tuned_custom": {"sas-site": SITE_PROFILE.replace(
         "governor=performance", "governor=powersave")}}, [], "fail"),
    ("tuned: a site profile leaving dirty_ratio at 20", "tuned_profile",
     {"tuned_active": "sas-site", "dirty_ratio": 20, "tuned_custom": {
         "sas-site": SITE_PROFILE.replace("vm.dirty_ratio = 40\n", "")}}, [], "fail"),
    # RHEL 5: no tuned and no THP; ktune started at boot is its throughput tuning.
    ("tuned: RHEL 5 ktune started at boot", "tuned_profile",
     {**RHEL5, "extra_files": RHEL5_KTUNE_FILES, "extra_links": RHEL5_KTUNE_ON}, [], "pass"),
    ("tuned: RHEL 5 ktune installed, not started", "tuned_profile",
     {**RHEL5, "extra_files": RHEL5_KTUNE_FILES}, [], "fail"),
    ("tuned: RHEL 6 without tuned, ktune started", "tuned_profile",
     {**RHEL5, "kernel": "2.6.32-754.35.1.el6.x86_64", "extra_files": RHEL5_KTUNE_FILES,
      "extra_links": RHEL5_KTUNE_ON}, [], "fail"),
    ("thp: RHEL 5 has none", "thp_disabled",
     {**RHEL5, "extra_files": RHEL5_KTUNE_FILES, "extra_links": RHEL5_KTUNE_ON}, [],
     "notapplicable"),
    # ... nor anything at boot: 2.6.18 predates THP, whatever a boot file says.
    ("thp boot: RHEL 5 has none", "thp_disabled_at_boot",
     {**RHEL5, "extra_files": RHEL5_KTUNE_FILES, "extra_links": RHEL5_KTUNE_ON}, [],
     "notapplicable"),
    # NUMA: numa=off running or booting next, and one node for two sockets (interleaving).
    ("numa: two sockets, two nodes", "numa_enabled",
     {"cpus": 8, "sockets": 2, "numa_online": "0-1"}, [], "pass"),
    ("numa: two sockets, one node (BIOS interleaving)", "numa_enabled",
     {"cpus": 8, "sockets": 2, "numa_online": "0"}, [], "fail"),
    ("numa: one socket, one node", "numa_enabled",
     {"cpus": 8, "sockets": 1, "numa_online": "0"}, [], "pass"),
    ("numa: numa=off in the BLS entry that boots next", "numa_enabled",
     {"bls_options": "root=/dev/mapper/rhel-root ro transparent_hugepage=never numa=off",
      "proc_cmdline": "BOOT_IMAGE=(hd0,msdos1)/vmlinuz-4.18.0-513.el8.x86_64 ro"}, [], "fail"),
    ("numa: running with numa=off, removed for the next boot", "numa_enabled",
     {"proc_cmdline": "BOOT_IMAGE=(hd0,msdos1)/vmlinuz-4.18.0-513.el8.x86_64 ro numa=off"},
     [], "fail"),
    # arch/x86/mm/numa.c numa_setup: "off" sets numa_off and no later numa= clears it.
    ("numa: numa=off stays off whatever numa= follows", "numa_enabled",
     {"proc_cmdline": "ro numa=off numa=on",
      "bls_options": "root=/dev/mapper/rhel-root ro numa=off transparent_hugepage=never "
                     "numa=noacpi"}, [], "fail"),
    ("numa: numa=noacpi is not off", "numa_enabled",
     {"bls_options": "root=/dev/mapper/rhel-root ro transparent_hugepage=never numa=noacpi"},
     [], "pass"),
    # ktune's multiply_disk_readahead 4 (start(); stop() has 0.25) runs after udev, before
    # rc.local: the kernel's 128 KiB becomes 512, a udev rule's 1024 becomes 4096.
    ("io boot: RHEL 6 ktune multiplies the kernel's read-ahead", "io_tuning_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES,
                                     "/etc/sysconfig/ktune": ENTERPRISE_STORAGE_KTUNE_SYSCONFIG}},
     [], "fail"),
    ("io boot: RHEL 6 ktune multiplies udev's read-ahead", "io_tuning_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES, **RA_BY_UDEV_1024,
                                     "/etc/sysconfig/ktune": ENTERPRISE_STORAGE_KTUNE_SYSCONFIG}},
     [], "pass"),
    ("io boot: RHEL 6 ktune divides udev's read-ahead", "io_tuning_at_boot",
     {**RHEL6_KTUNE, "extra_files": {
         **rhel6_ktune(KTUNE_ENTERPRISE_STORAGE.replace("readahead 4\n", "readahead 0.25\n"))[0],
         **RA_BY_UDEV_4096, "/etc/sysconfig/ktune": ENTERPRISE_STORAGE_KTUNE_SYSCONFIG}},
     [], "fail"),
    ("boot mounts: RHEL 6 ktune remounts nobarrier", "mount_options_at_boot",
     {**RHEL6_KTUNE, "extra_files": KTUNE_FILES}, [], "fail"),
    ("boot mounts: RHEL 6 ktune nobarrier, protected cache", "mount_options_at_boot",
     {**RHEL6_KTUNE, "extra_files": KTUNE_FILES}, ["storage_cache_protected=true"], "pass"),
    # vm.dirty_ratio after boot (scanner.sysctl_boot): systemd-sysctl, ktune, tuned, then
    # tuned's reapply_sysctl putting /etc and /run back.
    ("dirty boot: sysctl.conf put back over tuned's 40", "dirty_ratio_at_boot",
     {"extra_files": {"/etc/sysctl.conf": "# System default settings\nvm.dirty_ratio = 20\n"}},
     [], "fail"),
    ("dirty boot: reapply_sysctl off, tuned's 40 wins", "dirty_ratio_at_boot",
     {"extra_files": {"/etc/sysctl.conf": "vm.dirty_ratio = 20\n",
                      "/etc/tuned/tuned-main.conf": "daemon = 1\nreapply_sysctl = 0\n"}},
     [], "pass"),
    ("dirty boot: a later sysctl.d file wins (tuned off)", "dirty_ratio_at_boot",
     {"tuned_enabled": False,
      "extra_files": {"/etc/sysctl.d/10-sas.conf": "vm.dirty_ratio = 40\n",
                      "/usr/lib/sysctl.d/50-vendor.conf": "vm/dirty_ratio=20\n"}}, [], "fail"),
    ("dirty boot: /etc hides its /usr/lib namesake (tuned off)", "dirty_ratio_at_boot",
     {"tuned_enabled": False,
      "extra_files": {"/etc/sysctl.d/50-vendor.conf": "vm.dirty_ratio = 40\n",
                      "/usr/lib/sysctl.d/50-vendor.conf": "vm.dirty_ratio = 20\n"}}, [],
     "pass"),
    ("dirty boot: nothing sets it", "dirty_ratio_at_boot", {"tuned_active": "balanced"}, [],
     "fail"),
    ("dirty boot: a sysctl.d file sets dirty_bytes (tuned off)", "dirty_ratio_at_boot",
     {"tuned_enabled": False,
      "extra_files": {"/etc/sysctl.d/90-sas.conf": "vm.dirty_bytes = 4294967296\n"}}, [],
     "pass"),
    ("dirty boot: dirty_bytes set, then sysctl.conf sets the ratio 20 (tuned off)",
     "dirty_ratio_at_boot",
     {"tuned_enabled": False,
      "extra_files": {"/etc/sysctl.d/90-sas.conf": "vm.dirty_bytes = 4294967296\n",
                      "/etc/sysctl.conf": "vm.dirty_ratio = 20\n"}}, [], "fail"),
    ("dirty boot: RHEL 6 ktune's sysctl.ktune", "dirty_ratio_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES,
                                     "/etc/sysctl.ktune": ENTERPRISE_STORAGE_SYSCTL_KTUNE,
                                     "/etc/sysconfig/ktune": ENTERPRISE_STORAGE_KTUNE_SYSCONFIG}},
     [], "pass"),
    ("dirty boot: RHEL 6 ktune, then SYSCTL_POST sysctl.conf", "dirty_ratio_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES,
                                     "/etc/sysctl.ktune": ENTERPRISE_STORAGE_SYSCTL_KTUNE,
                                     "/etc/sysconfig/ktune": ENTERPRISE_STORAGE_KTUNE_SYSCONFIG,
                                     "/etc/sysctl.conf": "vm.dirty_ratio = 20\n"}}, [], "fail"),
    # readahead as tuned's disk plugin parses it: ">N s" and "Ns" are rejected, set nothing.
    ("io boot: readahead >N s is rejected by tuned", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace(">4096", ">8192 s")}}, [], "fail"),
    ("io boot: readahead Ns is rejected by tuned", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace(">4096", "8192s")}}, [], "fail"),
    ("io boot: readahead N sectors", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace(">4096", "8192 sectors")}}, [],
     "pass"),
    ("io boot: elevator= ignored on blk-mq kernels", "io_tuning_at_boot",
     {"tuned_active": "balanced", "bls_options": "ro elevator=deadline",
      "extra_files": RA_IN_RC_LOCAL}, ["allowed_schedulers=deadline"], "fail"),
    # Striping: LVM stripes over the SAS LUNs (dm-stripe's queue limits), seeds 000 and 003.
    ("striping: linear volumes on one LUN", "sas_volume_striped", {"sas_luns": 1}, [], "fail"),
    ("striping: four LUNs, 256 KiB stripes", "sas_volume_striped",
     {"sas_luns": 4, "stripe_kib": 256, "sas_local_cfg": sas_cfg("256K")}, [], "pass"),
    ("striping: NFS SAS DATA is laid out by its server", "sas_volume_striped",
     {"filesystems": [nfs_data(16384), SasFs("saswork", "/saswork"),
                      SasFs("sasutil", "/sasutil")]}, ["allowed_fs_types=xfs,ext4,nfs4"], "pass"),
    ("bufsize: 256K over 64 KiB stripes", "sas_bufsize_matches_stripe",
     {"sas_local_cfg": sas_cfg("256K")}, [], "pass"),
    ("bufsize: 96K over 64 KiB stripes", "sas_bufsize_matches_stripe",
     {"sas_local_cfg": sas_cfg("96K")}, [], "fail"),
    # Seed 000's measured best: 64 KiB stripes, no BUFSIZE (SAS's pages, at most 64 KiB).
    ("bufsize: unset, SAS's own pages over 64 KiB stripes (seed 000)",
     "sas_bufsize_matches_stripe", {"sas_local_cfg": sas_cfg(None)}, [], "pass"),
    ("bufsize: unset, SAS's own pages over 96 KiB stripes", "sas_bufsize_matches_stripe",
     {"sas_local_cfg": sas_cfg(None), "stripe_kib": 96}, [], "fail"),
    ("bufsize: 16K inside 64 KiB stripe units", "sas_bufsize_matches_stripe",
     {"sas_local_cfg": sas_cfg("16K")}, [], "pass"),
    ("bufsize: 24K straddles 64 KiB stripe units", "sas_bufsize_matches_stripe",
     {"sas_local_cfg": sas_cfg("24K")}, [], "fail"),
    ("bufsize: unset, SAS's own pages over 8 KiB stripes", "sas_bufsize_matches_stripe",
     {"sas_local_cfg": sas_cfg(None), "stripe_kib": 8}, [], "pass"),
    ("bufsize: the site value wins over sasv9.cfg", "sas_bufsize_matches_stripe",
     {"sas_local_cfg": sas_cfg("96K")}, ["sas_bufsize_bytes=131072"], "pass"),
    ("bufsize: 64K inside the paper's 256 KiB stripe units", "sas_bufsize_matches_stripe",
     {"sas_luns": 4, "stripe_kib": 256}, [], "pass"),
    ("bufsize: 96K across the paper's 256 KiB stripe units", "sas_bufsize_matches_stripe",
     {"sas_luns": 4, "stripe_kib": 256, "sas_local_cfg": sas_cfg("96K")}, [], "fail"),
    # nothing judged is never a pass (#24 item 4)
    ("bufsize: nothing striped, nothing to match", "sas_bufsize_matches_stripe",
     {"sas_luns": 1, "sas_local_cfg": sas_cfg("96K")}, [], "notapplicable"),
]


@pytest.mark.parametrize(("rule_id", "changes", "sets", "expected"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_rule_verdict(host, scan, rule_id, changes, sets, expected):
    result = scan(host(**changes), *sets)
    rule = result["by_id"][rule_id]
    assert rule["result"] == expected, rule


def test_failing_device_is_named_in_evidence(host, scan):
    result = scan(host(mpath_scheduler="mq-deadline kyber [bfq] none"))
    failing = [e for e in result["by_id"]["io_scheduler"]["evidence"] if e["result"] == "fail"]
    # the two multipath maps, each under three file systems; their paths are not judged
    assert {e["subject"].split(": ")[1] for e in failing} == {"dm-1 (mpatha)", "dm-5 (mpathb)"}
    assert all(e["source"].endswith("/queue/scheduler") for e in failing)
    lvm = [e for e in result["by_id"]["io_scheduler"]["evidence"] if "sasvg-sasdata" in e["subject"]]
    assert lvm and lvm[0]["result"] == "notapplicable"  # bio-based LV: no choice


def test_read_ahead_of_a_partition_is_its_disks(tmp_path, scan):
    from tests.rootbuilder import RootBuilder

    root = RootBuilder(tmp_path)
    root.disk("nvme0n1", scheduler="[none] mq-deadline", read_ahead_kb=4096)
    root.partition("nvme0n1", "nvme0n1p1", 1)
    root.mount("/dev/nvme0n1p1", "/sasdata", "xfs", "rw,noatime").write_mounts()
    rule = scan(tmp_path)["by_id"]["read_ahead"]
    assert rule["result"] == "pass"
    assert "nvme0n1" in rule["evidence"][0]["subject"]
    assert rule["evidence"][0]["actual"] == "4096 KiB"


def test_md_raid_members_are_followed(tmp_path, scan):
    from tests.rootbuilder import RootBuilder

    root = RootBuilder(tmp_path)
    root.disk("sdb", scheduler="[mq-deadline] none").disk("sdc", scheduler="[bfq] none")
    root.md("md0", ["sdb", "sdc"], read_ahead_kb=4096)
    root.mount("/dev/md0", "/sasdata", "xfs", "rw,noatime").write_mounts()
    rule = scan(tmp_path)["by_id"]["io_scheduler"]
    assert rule["result"] == "fail"
    verdicts = {e["subject"]: e["result"] for e in rule["evidence"]}
    assert verdicts == {"/sasdata: md0": "notapplicable", "/sasdata: sdb": "pass",
                        "/sasdata: sdc": "fail"}


def test_md_raid0_is_striped_and_a_partition_is_not(tmp_path, scan):
    from tests.rootbuilder import RootBuilder

    root = RootBuilder(tmp_path)
    root.disk("sdb").disk("sdc").disk("sdd").partition("sdd", "sdd1", 1)
    root.md("md0", ["sdb", "sdc"], chunk_kib=256)
    root.mount("/dev/md0", "/saswork", "xfs", "rw,noatime")
    root.mount("/dev/sdd1", "/sasdata", "xfs", "rw,noatime").write_mounts()
    result = scan(tmp_path, "sas_work_dirs=/saswork", "sas_bufsize_bytes=262144")
    striped = {e["subject"]: (e["result"], e["actual"])
               for e in result["by_id"]["sas_volume_striped"]["evidence"]}
    assert striped == {"/saswork (WORK) on md0": ("pass", "2 stripes of 256 KiB"),
                       "/sasdata (DATA) on sdd": ("fail", "not striped (1 device below)")}
    bufsize = result["by_id"]["sas_bufsize_matches_stripe"]
    assert bufsize["result"] == "pass"
    sources = {e["subject"]: (e["result"], e["source"]) for e in bufsize["evidence"]}
    assert sources["/saswork (WORK) on md0"] == ("pass", "site value sas_bufsize_bytes")
    assert sources["/sasdata (DATA) on sdd"][0] == "notapplicable"  # no stripe unit


def test_stripe_hints_a_lun_publishes_for_itself_are_not_a_stripe(tmp_path, scan):
    """A linear LV over one LUN inherits the array's hints (here 8 KiB and 1 MiB): 128
    "stripes" over one device are the LUN's own preference, not a volume's layout."""
    from tests.rootbuilder import RootBuilder

    root = RootBuilder(tmp_path)
    root.disk("sdb")
    root.dm("dm-0", "sasvg-sasdata", ["sdb"])
    root.file("/sys/devices/virtual/block/dm-0/queue/minimum_io_size", "8192\n")
    root.file("/sys/devices/virtual/block/dm-0/queue/optimal_io_size", "1048576\n")
    root.mount("/dev/mapper/sasvg-sasdata", "/sasdata", "xfs", "rw,noatime").write_mounts()
    rule = scan(tmp_path)["by_id"]["sas_volume_striped"]
    assert rule["result"] == "fail"
    assert rule["evidence"][0]["actual"] == "not striped (1 device below)"


def test_a_multipath_map_is_one_lun_whatever_its_paths(tmp_path, scan):
    """Four paths to one LUN publish no stripe: a file system on the map is not striped."""
    from tests.rootbuilder import RootBuilder

    root = RootBuilder(tmp_path)
    for path in ("sdb", "sdc", "sdd", "sde"):
        root.disk(path, vendor="XtremIO", model="XtremApp")
    root.dm("dm-0", "mpatha", ["sdb", "sdc", "sdd", "sde"], uuid="mpath-3600" + "0" * 28,
            scheduler="[mq-deadline] none")
    root.mount("/dev/mapper/mpatha", "/sasdata", "xfs", "rw,noatime").write_mounts()
    rule = scan(tmp_path)["by_id"]["sas_volume_striped"]
    assert rule["result"] == "fail"
    assert rule["evidence"][0]["actual"] == "not striped (1 device below)"


def test_xtremio_profile_is_stricter(host, scan):
    result = scan(host(path_scheduler="[none] mq-deadline", mpath_scheduler="[mq-deadline] none"),
                  profile="xtremio")
    assert result["values"]["read_ahead_min_kb"] == 16384
    assert result["by_id"]["read_ahead"]["result"] == "fail"
    assert result["by_id"]["io_scheduler"]["result"] == "fail"
    flash = scan(host(read_ahead_kb=16384, path_scheduler="[none] mq-deadline",
                      mpath_scheduler="[none] mq-deadline"), profile="xtremio")
    assert flash["by_id"]["read_ahead"]["result"] == "pass"
    assert flash["by_id"]["io_scheduler"]["result"] == "pass"


def test_kvm_host_wants_thp_on(host, scan):
    on = scan(host(thp_enabled="[always] madvise never"), role="kvm_host")
    assert on["by_id"]["thp_enabled_on_kvm_host"]["result"] == "pass"
    assert on["by_id"]["thp_disabled"]["result"] == "notapplicable"
    off = scan(host(), role="kvm_host")
    assert off["by_id"]["thp_enabled_on_kvm_host"]["result"] == "fail"
