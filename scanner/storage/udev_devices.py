"""What udev knows of the SAS devices when it runs its rules at boot: the properties a
rule's matches test, for UdevRule.may_reach. Only what the scan can tell is given; any
other key is unknown and may match either way."""

from __future__ import annotations

from ...rules.host_layout import MULTIPATH_UUID_PREFIX
from ..facts import Facts
from .blockdev import BlockDevice

# blkid's signature of a device that another layer holds (udev's 60-persistent-storage
# rules import it as ID_FS_TYPE; multipath's rules set mpath_member on its paths).
HOLDER_SIGNATURES = (("md", "linux_raid_member"), ("LVM-", "LVM2_member"),
                     (MULTIPATH_UUID_PREFIX, "mpath_member"))


def _signature(device: BlockDevice, holders: list[BlockDevice], fstype: str) -> str | None:
    for holder in holders:
        for prefix, signature in HOLDER_SIGNATURES:
            if (prefix == "md" and holder.kind == "md") or (
                    holder.dm_uuid or "").startswith(prefix):
                return signature
    return fstype or None


def sas_udev_devices(facts: Facts) -> list[dict[str, str]]:
    """udev's view of each whole device under the SAS file systems, at boot (the "add"
    events systemd-udev-trigger replays); [] where the SAS devices are not known."""
    if not isinstance(facts.sas_filesystems, list):
        return []
    devices = facts.block.devices
    holders: dict[str, list[BlockDevice]] = {}
    for holder in devices.values():
        for slave in holder.slaves:
            holders.setdefault(slave, []).append(holder)
    seen: dict[str, dict[str, str]] = {}
    for filesystem in facts.sas_filesystems:
        top = filesystem.stack[0].device if filesystem.stack else ""
        for layer in filesystem.stack:
            device = devices.get(layer.device)
            if device is None or device.kind == "partition" or device.name in seen:
                continue
            properties = {"ACTION": "add", "SUBSYSTEM": "block", "KERNEL": device.name,
                          "ENV{DEVTYPE}": "disk", "ENV{DM_NAME}": device.dm_name or "",
                          "ENV{DM_UUID}": device.dm_uuid or ""}
            if layer.relation == "disk of partition":  # a partition table, no signature
                properties["ENV{ID_FS_TYPE}"] = ""
            elif signature := _signature(device, holders.get(device.name, []),
                                         filesystem.mount.fstype if device.name == top else ""):
                properties["ENV{ID_FS_TYPE}"] = signature
            seen[device.name] = properties
    return list(seen.values())
