"""KVM guests' disks (scanner/checks/guests.py)."""

from __future__ import annotations

from ...rules import Rule
from ...rules.host_layout import (
    LIBVIRT_DEFINED_DOMAINS,
)
from ..oval import (
    Element,
    criterion,
    entity,
    none_of,
)
from ..oval_facts import OvalFacts
from ..platforms import HOST_STORAGE_DISKS

# A guest's disk on the host's storage (platforms.HOST_STORAGE_DISKS) off the direct path.
UNDIRECT_DISKS = (HOST_STORAGE_DISKS + "[not(driver/@cache='none') or not(target/@bus='virtio' or "
                  "(target/@bus='scsi' and ../controller[@type='scsi' and "
                  "@model='virtio-scsi']))]/@type")


def kvm_guest_disks_direct(facts: OvalFacts, rule: Rule) -> Element:
    oval = facts.oval
    undirect = oval.obj("ind:xmlfilecontent", "guest block disks without virtio or cache=none",
                        entity("ind:path", LIBVIRT_DEFINED_DOMAINS),
                        entity("ind:filename", r"\.xml$", op="pattern match"),
                        entity("ind:xpath", UNDIRECT_DISKS))
    return none_of(criterion(oval.test("ind:xmlfilecontent", "a guest block disk is not direct",
                                       undirect)), comment="guests' block disks are direct")
