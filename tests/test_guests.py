"""kvm_guest_disks_direct on KVM hosts whose guests are defined as libvirt writes them, in
both engines (scanner and oscap) on the same roots."""

from __future__ import annotations

import pytest

from .support.hosts import BASELINE_SETS, sas_host
from .support.oscap import oscap_available
from .test_parity import _compare

# What /etc/libvirt/qemu/<name>.xml looks like (libvirt's virDomainSaveConfig writes this
# warning, then the inactive definition).
DOMAIN = """<!--
WARNING: THIS IS AN AUTO-GENERATED FILE. CHANGES TO IT ARE LIKELY TO BE
OVERWRITTEN AND LOST. Changes to this xml configuration should be made using:
  virsh edit {name}
or other application using the libvirt API.
-->

<domain type='kvm'>
  <name>{name}</name>
  <memory unit='KiB'>46137344</memory>
  <vcpu placement='static'>8</vcpu>
  <os>
    <type arch='x86_64' machine='pc-q35-rhel8.6.0'>hvm</type>
  </os>
  <devices>
    <emulator>/usr/libexec/qemu-kvm</emulator>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source file='/var/lib/libvirt/images/{name}.qcow2'/>
      <target dev='vda' bus='virtio'/>
    </disk>
    <disk type='file' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <target dev='sda' bus='sata'/>
      <readonly/>
    </disk>
{disks}  </devices>
</domain>
"""
BLOCK_DISK = """    <disk type='block' device='disk'>
      <driver name='qemu' type='raw'{driver}/>
      <source dev='/dev/sasvg/{name}_saswork'/>
      <target dev='{target}' bus='{bus}'/>
    </disk>
"""
VIRTIO_SCSI = "    <controller type='scsi' index='0' model='virtio-scsi'/>\n"
# libvirt's formatdomain: a SCSI LUN passed through (device='lun' needs bus='scsi') and a
# volume of a storage pool (an LV of a logical pool).
LUN_DISK = """    <disk type='block' device='lun'>
      <driver name='qemu' type='raw'{driver}/>
      <source dev='/dev/mapper/3514f0c5a51600001'/>
      <target dev='sdc' bus='scsi'/>
    </disk>
"""
VOLUME_DISK = """    <disk type='volume' device='disk'>
      <driver name='qemu' type='raw'{driver}/>
      <source pool='sasvg' volume='sasguest01_sasdata'/>
      <target dev='vdc' bus='{bus}'/>
    </disk>
"""
GOOD_DRIVER = " cache='none' io='native'"
# kvm_intel in use by two running guests: a KVM host (rules/host_layout/system.py).
MODULES = ("kvm_intel 344064 2 - Live 0xffffffffc0b6e000\n"
           "kvm 1028096 1 kvm_intel, Live 0xffffffffc0a3b000\n")


def domain(name: str, bus: str = "virtio", driver: str = " cache='none' io='native'",
           extra: str = "") -> str:
    target = "vdb" if bus == "virtio" else "sdb" if bus == "scsi" else "hdb"
    return DOMAIN.format(name=name, disks=BLOCK_DISK.format(name=name, driver=driver,
                                                           target=target, bus=bus) + extra)


CASES = {
    "LV on virtio, cache none": ({"sasguest01": domain("sasguest01")}, "pass"),
    "LV on virtio, host cache (default)": (
        {"sasguest01": domain("sasguest01", driver="")}, "fail"),
    "LV on virtio, writeback cache, io=threads": (
        {"sasguest01": domain("sasguest01", driver=" cache='writeback' io='threads'")}, "fail"),
    "LV on emulated IDE": ({"sasguest01": domain("sasguest01", bus="ide")}, "fail"),
    "LV on a virtio-scsi controller": (
        {"sasguest01": domain("sasguest01", bus="scsi", extra=VIRTIO_SCSI)}, "pass"),
    "LV on an emulated SCSI controller": (
        {"sasguest01": domain("sasguest01", bus="scsi")}, "fail"),
    # Nothing judged is no pass (#24 item 4); oscap says so too (its guest_host_storage CPE).
    "only file-backed disks": (
        {"sasguest02": DOMAIN.format(name="sasguest02", disks="")}, "notapplicable"),
    "SCSI LUN passed through on virtio-scsi": ({"sasguest01": domain(
        "sasguest01", extra=LUN_DISK.format(driver=GOOD_DRIVER) + VIRTIO_SCSI)}, "pass"),
    "SCSI LUN passed through, host cache on": ({"sasguest01": domain(
        "sasguest01", extra=LUN_DISK.format(driver=" cache='writeback'") + VIRTIO_SCSI)},
        "fail"),
    "pool volume on virtio": ({"sasguest01": domain(
        "sasguest01", extra=VOLUME_DISK.format(driver=GOOD_DRIVER, bus="virtio"))}, "pass"),
    "pool volume on emulated SATA": ({"sasguest01": domain(
        "sasguest01", extra=VOLUME_DISK.format(driver=GOOD_DRIVER, bus="sata"))}, "fail"),
    "one good guest, one bad": ({"sasguest01": domain("sasguest01"),
                                 "sasguest02": domain("sasguest02", bus="ide")}, "fail"),
}


def _kvm_host(tmp_path, guests: dict[str, str]):
    files = {"/proc/modules": MODULES,
             **{f"/etc/libvirt/qemu/{name}.xml": text for name, text in guests.items()}}
    return sas_host(tmp_path / "root", extra_files=files)


@pytest.mark.parametrize("name", sorted(CASES))
def test_guest_disks(tmp_path, scan, name):
    guests, expected = CASES[name]
    result = scan(_kvm_host(tmp_path, guests), role="auto")
    assert result["role"]["name"] == "kvm_host"
    rule = result["by_id"]["kvm_guest_disks_direct"]
    assert rule["result"] == expected, rule
    if expected == "notapplicable":
        assert "no defined KVM guest is given the host's storage" in rule["message"]
        return
    # The guests' OS images are listed, not judged.
    assert any(e["result"] == "informational" and e["actual"] == "file-backed"
               for e in rule["evidence"])


def test_a_pool_volume_and_a_lun_are_named_and_judged(tmp_path, scan):
    guests = {"sasguest01": domain("sasguest01", extra=LUN_DISK.format(driver="")
                                   + VOLUME_DISK.format(driver="", bus="sata"))}
    rule = scan(_kvm_host(tmp_path, guests), role="auto")["by_id"]["kvm_guest_disks_direct"]
    judged = {e["subject"]: e["result"] for e in rule["evidence"]}
    assert judged["sasguest01: sdc (/dev/mapper/3514f0c5a51600001)"] == "fail"
    assert judged["sasguest01: vdc (sasvg/sasguest01_sasdata)"] == "fail"


def test_unparsable_definition_is_an_error_naming_the_file(tmp_path, scan):
    root = _kvm_host(tmp_path, {"broken": "<domain><name>x</name>", "entity": (
        '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/shadow">]>'
        "<domain><name>&x;</name></domain>")})
    rule = scan(root, role="auto")["by_id"]["kvm_guest_disks_direct"]
    assert rule["result"] == "error"
    assert any("broken.xml" in e["note"] for e in rule["evidence"])
    assert "root:" not in str(rule)  # the external entity was not read


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_oscap_agrees(tmp_path, name):
    _compare(name, _kvm_host(tmp_path, CASES[name][0]), BASELINE_SETS, tmp_path / "work")


def test_snapshots_keep_the_guest_definitions(tmp_path, scan):
    from .test_snapshots import _python_collect, _script_collect

    root = _kvm_host(tmp_path, CASES["one good guest, one bad"][0])
    direct = scan(root, role="auto")["by_id"]["kvm_guest_disks_direct"]
    for archive in (_python_collect(root, BASELINE_SETS, tmp_path / "py.tar.gz"),
                    _script_collect(root, tmp_path / "sh.tar.gz", tmp_path)):
        from sascheck.scanner.sources.snapshot import opened
        with opened(str(archive)) as extracted:
            rule = scan(extracted, role="auto")["by_id"]["kvm_guest_disks_direct"]
        assert (rule["result"], rule["evidence"]) == (direct["result"], direct["evidence"])
