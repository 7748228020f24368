"""Which kind of system this is: bare metal, KVM guest, KVM host or container.

The seeds give different advice per role (THP off on bare metal and in guests,
on in a KVM host: seed 000 §6.8), so the report says which role was used and why.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ...rules.host_layout import (
    CONTAINER_MARKERS,
    DMI_FILES,
    INIT_ENVIRON,
    KVM_VENDOR_MODULES,
    LIBVIRT_DEFINED_DOMAINS,
    LIBVIRT_RUNNING_DOMAINS,
    LIBVIRT_SYSV,
    LIBVIRT_UNITS,
    PROC_MODULES,
    SYSTEMD_WANTS_DIRS,
    VM_VENDORS,
)
from ..boot.services import sysv_start_links
from ..parsers.simple import ascii_int, cpuinfo_flags
from ..sources.hostroot import FactError, HostRoot

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

    def names(self, directory: str, suffix: str) -> list[str]:
        """Entry names of ``directory`` ending in ``suffix`` (a missing directory has none;
        one that cannot be listed is noted)."""
        try:
            return self.root.entry_names(directory, suffix)
        except FactError as exc:
            self.problems.append(str(exc))
            return []

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
    guests, loaded = _guest_evidence(root, evidence)
    if guests:
        return _decided("kvm_host", [*guests, *environ_note], unsure, evidence.problems)
    if len(evidence.problems) > before:
        unsure.append("kvm_host")
    reasons = ["no hypervisor flag, no virtual-machine DMI vendor, no container marker"]
    if loaded:
        reasons.append(f"{', '.join(loaded)} loaded but no guest runs, and none is defined "
                       "with libvirt enabled at boot: not a KVM host")
    return _decided("bare_metal", [*reasons, *environ_note], unsure, evidence.problems)


def _guest_evidence(root: HostRoot, evidence: _Evidence) -> tuple[list[str], list[str]]:
    """(why this host runs KVM guests, the KVM vendor modules loaded)."""
    reasons: list[str] = []
    loaded: list[str] = []
    for line in (evidence.text(PROC_MODULES) or "").splitlines():
        fields = line.split()
        if len(fields) > 2 and fields[0] in KVM_VENDOR_MODULES:
            loaded.append(fields[0])
            users = ascii_int(fields[2])
            if users:
                reasons.append(f"{fields[0]} is in use by {users} (guests hold /dev/kvm)")
    running = sorted({name.removesuffix(".xml") for directory in LIBVIRT_RUNNING_DOMAINS
                      for name in evidence.names(directory, ".xml")})
    if running:
        reasons.append(f"libvirt guests running: {', '.join(running[:5])}")
    defined = [name.removesuffix(".xml")
               for name in evidence.names(LIBVIRT_DEFINED_DOMAINS, ".xml")]
    if defined:
        enabled = [f"{wants}/{unit}" for wants in SYSTEMD_WANTS_DIRS for unit in LIBVIRT_UNITS
                   if root.exists(f"{wants}/{unit}") or root.is_symlink(f"{wants}/{unit}")]
        enabled += sysv_start_links(lambda directory: evidence.names(directory, LIBVIRT_SYSV),
                                    LIBVIRT_SYSV)
        if enabled:
            reasons.append(f"libvirt guests defined ({', '.join(defined[:5])}) and "
                           f"{enabled[0]} starts libvirt at boot")
    return reasons, loaded


def _decided(name: str, reasons: list[str], unsure: list[str], problems: list[str]
             ) -> RoleDecision:
    return RoleDecision(name, AUTO, tuple(reasons), (name, *unsure), tuple(problems))


def forced_role(name: str) -> RoleDecision:
    return RoleDecision(name, "--role", (f"set on the command line (--role {name})",), (name,))
