"""Which kind of system this is: bare metal, KVM guest, KVM host or container.

The seeds give different advice per role (THP off on bare metal and in guests,
on in a KVM host: seed 000 §6.8), so the report says which role was used and why.
"""

from __future__ import annotations

from dataclasses import dataclass

from .hostroot import FactError, HostRoot
from .parsers.simple import cpuinfo_flags

AUTO = "auto"
_VM_VENDORS = ("qemu", "kvm", "red hat", "vmware", "xen", "microsoft corporation",
               "innotek", "virtualbox", "bochs", "amazon ec2", "google", "nutanix", "openstack")
_CONTAINER_MARKERS = ("/.dockerenv", "/run/.containerenv")
_QEMU_OR_LIBVIRT = ("/usr/libexec/qemu-kvm", "/usr/bin/qemu-kvm", "/usr/bin/qemu-system-x86_64",
                    "/usr/sbin/libvirtd", "/etc/libvirt/qemu.conf")


@dataclass(frozen=True)
class RoleDecision:
    name: str
    source: str  # "auto" or "--role"
    reasons: tuple[str, ...]


def _read(root: HostRoot, path: str) -> str:
    try:
        return root.read_optional(path, 1024 * 1024) or ""
    except FactError:
        return ""


def detect_role(root: HostRoot) -> RoleDecision:
    for marker in _CONTAINER_MARKERS:
        if root.exists(marker):
            return RoleDecision("container", AUTO, (f"{marker} exists",))
    environ = _read(root, "/proc/1/environ")
    if "container=" in environ:
        return RoleDecision("container", AUTO, ("/proc/1/environ sets container=",))

    guest_reasons: list[str] = []
    if "hypervisor" in cpuinfo_flags(_read(root, "/proc/cpuinfo")):
        guest_reasons.append("/proc/cpuinfo has the 'hypervisor' flag")
    for field in ("sys_vendor", "product_name"):
        value = _read(root, f"/sys/class/dmi/id/{field}").strip()
        if value and any(vendor in value.lower() for vendor in _VM_VENDORS):
            guest_reasons.append(f"DMI {field} is {value!r}")
    if guest_reasons:
        return RoleDecision("kvm_guest", AUTO, tuple(guest_reasons))

    modules = {line.split()[0] for line in _read(root, "/proc/modules").splitlines() if line}
    kvm = sorted(modules & {"kvm", "kvm_intel", "kvm_amd"})
    virt_tools = [path for path in _QEMU_OR_LIBVIRT if root.exists(path)]
    if kvm and virt_tools:
        return RoleDecision("kvm_host", AUTO, (f"KVM modules loaded ({', '.join(kvm)})",
                                               f"{virt_tools[0]} present"))
    reasons = ["no hypervisor flag, no virtual-machine DMI vendor, no container marker"]
    if kvm:
        reasons.append("KVM modules are loaded but neither libvirt nor qemu is installed")
    return RoleDecision("bare_metal", AUTO, tuple(reasons))


def forced_role(name: str) -> RoleDecision:
    return RoleDecision(name, "--role", (f"set on the command line (--role {name})",))
