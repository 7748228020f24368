"""The hosts the verdict cases are built from: releases' boot and tuned layouts, SAS
configurations, NFS and VxVM file systems, units and scripts that tune at boot."""

from __future__ import annotations

from typing import Any

from .boot_samples import (
    KTUNE_ENTERPRISE_STORAGE,
    RHEL6_ARGS,
    RHEL6_GRUB_CONF,
    rhel6_ktune,
)
from .hosts import (
    RHEL6_RC_LOCAL,
    SasFs,
)

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
