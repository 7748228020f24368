"""Which kind of system this is: bare metal, KVM guest, KVM host or container.

The seeds give different advice per role (THP off on bare metal and in guests,
on in a KVM host: seed 000 §6.8), so the report says which role was used and why.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ..rules.host_layout import (
    CONTAINER_MARKERS,
    DMI_FILES,
    INIT_ENVIRON,
    KVM_MODULES,
    PROC_MODULES,
    QEMU_OR_LIBVIRT,
    VM_VENDORS,
)
from .hostroot import FactError, HostRoot
from .parsers.simple import cpuinfo_flags

AUTO = "auto"


@dataclass(frozen=True)
class RoleDecision:
    name: str
    source: str  # "auto" or "--role"
    reasons: tuple[str, ...]
    # Roles the host may still be because evidence could not be read (the decision's own
    # name first); a rule whose applicability differs between them cannot be judged.
    candidates: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def uncertain(self) -> bool:
        return len(self.candidates) > 1


class _Evidence:
    """Reads role evidence, remembering what exists but could not be read."""

    def __init__(self, root: HostRoot) -> None:
        self.root = root
        self.problems: list[str] = []

    def text(self, path: str) -> str | None:
        """The file's text; None when missing or unreadable (the latter noted)."""
        try:
            return self.root.read_optional(path, 1024 * 1024)
        except FactError as exc:
            self.problems.append(str(exc))
            return None

    def environ(self) -> tuple[list[bytes], str]:
        """/proc/1/environ's NUL-separated NAME=value entries, and why they could not be
        read ("" when they could, or the file is missing). Not a problem of the decision:
        an unprivileged scan cannot read it, and the container markers are checked too."""
        try:
            return self.root.read_bytes(INIT_ENVIRON, 1024 * 1024).split(b"\0"), ""
        except FactError as exc:
            return [], "" if str(exc).endswith(": missing") else str(exc)


def detect_role(root: HostRoot) -> RoleDecision:
    evidence = _Evidence(root)
    for marker in CONTAINER_MARKERS:
        if root.exists(marker):
            return RoleDecision("container", AUTO, (f"{marker} exists",), ("container",))
    environ, environ_problem = evidence.environ()
    kinds = [entry.split(b"=", 1)[1].decode("utf-8", "replace")[:40]
             for entry in environ if entry.startswith(b"container=")]
    if kinds:
        return RoleDecision("container", AUTO, (f"/proc/1/environ sets container={kinds[0]}",),
                            ("container",))
    environ_note = [f"{environ_problem}; container markers checked instead"
                    ] if environ_problem else []

    before = len(evidence.problems)
    guest_reasons: list[str] = []
    if "hypervisor" in cpuinfo_flags(evidence.text("/proc/cpuinfo") or ""):
        guest_reasons.append("/proc/cpuinfo has the 'hypervisor' flag")
    for path in DMI_FILES:
        value = (evidence.text(path) or "").strip()
        if value and any(vendor in value.lower() for vendor in VM_VENDORS):
            guest_reasons.append(f"DMI {posixpath.basename(path)} is {value!r}")
    if guest_reasons:
        return RoleDecision("kvm_guest", AUTO, tuple(guest_reasons), ("kvm_guest",))
    unsure = ["kvm_guest"] if len(evidence.problems) > before else []

    before = len(evidence.problems)
    modules_text = evidence.text(PROC_MODULES)
    modules = {line.split()[0] for line in (modules_text or "").splitlines() if line.split()}
    kvm = sorted(modules & set(KVM_MODULES))
    virt_tools = [path for path in QEMU_OR_LIBVIRT if root.exists(path)]
    if kvm and virt_tools:
        return _decided("kvm_host", [f"KVM modules loaded ({', '.join(kvm)})",
                                     f"{virt_tools[0]} present", *environ_note], unsure,
                        evidence.problems)
    if len(evidence.problems) > before:
        unsure.append("kvm_host")
    reasons = ["no hypervisor flag, no virtual-machine DMI vendor, no container marker"]
    if kvm:
        reasons.append("KVM modules are loaded but neither libvirt nor qemu is installed")
    return _decided("bare_metal", [*reasons, *environ_note], unsure, evidence.problems)


def _decided(name: str, reasons: list[str], unsure: list[str], problems: list[str]
             ) -> RoleDecision:
    return RoleDecision(name, AUTO, tuple(reasons), (name, *unsure), tuple(problems))


def forced_role(name: str) -> RoleDecision:
    return RoleDecision(name, "--role", (f"set on the command line (--role {name})",), (name,))
