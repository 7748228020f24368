"""libvirt domain XML (``/etc/libvirt/qemu/<name>.xml``, what ``virsh define`` keeps).

Sample (libvirt's formatdomain documentation; a SAS guest as seed 000 §6.2 built it, an LV
passed through on virtio with the host page cache off)::

    <domain type='kvm'>
      <name>sasguest01</name>
      <devices>
        <disk type='block' device='disk'>
          <driver name='qemu' type='raw' cache='none' io='native'/>
          <source dev='/dev/sasvg/guest01_saswork'/>
          <target dev='vdb' bus='virtio'/>
        </disk>
        <controller type='scsi' index='0' model='virtio-scsi'/>
      </devices>
    </domain>

Parsed with entity expansion, DTDs and network access off: the file comes from the host.
"""

from __future__ import annotations

from dataclasses import dataclass


class DomainXmlError(ValueError):
    """Not a libvirt domain document."""


@dataclass(frozen=True)
class GuestDisk:
    type: str  # block | file | network | volume | ...
    device: str  # disk | lun (SCSI commands passed through to the LUN)
    bus: str  # virtio | scsi | sata | ide | ...
    cache: str  # '' when the driver does not say (the hypervisor default)
    io: str
    source: str  # dev=, file=, or the network/volume name
    target: str  # the guest's device name


@dataclass(frozen=True)
class Domain:
    name: str
    disks: tuple[GuestDisk, ...]
    virtio_scsi: bool  # a SCSI controller of model virtio-scsi exists


def parse_domain(data: bytes) -> Domain:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             huge_tree=False, remove_comments=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise DomainXmlError(f"not XML: {exc}") from exc
    if root.tag != "domain":
        raise DomainXmlError(f"root element is <{root.tag}>, not <domain>")
    disks = []
    for disk in root.iterfind("devices/disk"):
        device = disk.get("device", "disk")
        if device not in ("disk", "lun"):
            continue  # cdrom, floppy: not a data disk
        driver, source, target = disk.find("driver"), disk.find("source"), disk.find("target")
        source_name = ""
        if source is not None:  # a storage pool's volume is named POOL/VOLUME
            source_name = (source.get("dev") or source.get("file") or source.get("name")
                           or "/".join(filter(None, (source.get("pool"), source.get("volume"))))
                           or "")
        disks.append(GuestDisk(
            disk.get("type", ""), device, target.get("bus", "") if target is not None else "",
            driver.get("cache", "") if driver is not None else "",
            driver.get("io", "") if driver is not None else "", source_name,
            target.get("dev", "") if target is not None else ""))
    virtio_scsi = any(c.get("type") == "scsi" and c.get("model") == "virtio-scsi"
                      for c in root.iterfind("devices/controller"))
    return Domain(root.findtext("name", "").strip(), tuple(disks), virtio_scsi)
