"""Applicability as CPE platforms with OVAL checks: the host's role (same signals as
scanner/system/role.py), THP support and cpufreq, so a rule is ``notapplicable`` where the
scanner says so."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..rules import HOST_ROLES, Rule
from ..rules.host_layout import (
    CONTAINER_MARKERS,
    CPU_FEATURE_FILES,
    DMI_FILES,
    INIT_ENVIRON,
    KERNEL_RELEASE,
    KVM_VENDOR_MODULES,
    LIBVIRT_DEFINED_DOMAINS,
    LIBVIRT_RUNNING_DOMAINS,
    LIBVIRT_SYSV,
    LIBVIRT_UNITS,
    MULTIPATH_UUID_PREFIX,
    OS_PLATFORMS,
    OS_RELEASE,
    OS_RELEASE_LEGACY,
    PROC_MODULES,
    QUEUE_IO_OPT,
    REDHAT_RELEASE,
    RHEL5_KERNEL_PREFIX,
    SYSTEMD_WANTS_DIRS,
    SYSV_RUNLEVEL_DIRS,
    THP_DIRS,
    VXVM_DEVICE_DIRS,
    XTREMIO_VENDOR,
    os_release_id,
    os_release_patterns,
    redhat_release_pattern,
    redhat_release_unnumbered,
    release_key,
    release_line,
    vm_vendor_regex,
)
from .oval import Element, OvalDocument, all_of, any_of, criterion, entity, none_of

CPE_PREFIX = "cpe:/a:sascheck:"
# The operating system's name is part "o": the Compliance Operator makes a benchmark whose
# platform is part "o" a node scan, anything else a platform (cluster API) scan
# (ComplianceAsCode/compliance-operator pkg/profileparser/profileparser.go,
# parseProductTypeAndName, at 456557cc3fb6759aed3c66aa0fa849023d63847a). The facts of a host's
# role stay sascheck's own part "a" names.
OS_CPE_PREFIX = "cpe:/o:sascheck:"


def cpe_name(fact: str) -> str:
    return (OS_CPE_PREFIX if fact == RHEL_FAMILY else CPE_PREFIX) + fact

# A defined guest's data disk on the host's storage: a block device, a pool volume, a SCSI
# LUN passed through (scanner.checks.guests.passed_through); cdroms and floppies are not data.
HOST_STORAGE_DISKS = ("//devices/disk[(@type='block' or @type='volume' or @device='lun') and "
                      "(not(@device) or @device='disk' or @device='lun')]")


@dataclass(frozen=True)
class Fact:
    name: str  # the CPE name's product part
    title: str
    definition: str  # OVAL definition id in the CPE OVAL document

    @property
    def cpe(self) -> str:
        return cpe_name(self.name)


RHEL_FAMILY = "rhel_family"


def os_platform_names() -> list[str]:
    """The benchmark's platform: RHEL or a rebuild, 5 to 10, or a root without release files.
    sascheck's own CPE name, not the published cpe:/o:redhat:enterprise_linux:N: oscap would
    also evaluate its built-in dictionary's checks for those, whose rpm probe writes an
    rpmdb.sqlite into the root it scans offline. Part "o", as an operating system's is."""
    return [cpe_name(RHEL_FAMILY)]


def _exists(oval: OvalDocument, comment: str, paths: tuple[str, ...]) -> Element:
    found = oval.obj("unix:file", comment,
                     entity("unix:filepath", var=oval.paths(comment, paths),
                            var_check="at least one"))
    return criterion(oval.test("unix:file", comment, found))


def _directory(oval: OvalDocument, comment: str, path: str, op: str = "equals") -> Element:
    found = oval.obj("unix:file", comment, entity("unix:path", path, op=op),
                     entity("unix:filename", nil=True))
    return criterion(oval.test("unix:file", comment, found))


def _entries(oval: OvalDocument, comment: str, directories: tuple[str, ...],
             pattern: str) -> Element:
    """Some directory among ``directories`` holds an entry whose name matches ``pattern``."""
    found = oval.obj("unix:file", comment,
                     entity("unix:path", var=oval.paths(comment, directories),
                            var_check="at least one"),
                     entity("unix:filename", pattern, op="pattern match"))
    return criterion(oval.test("unix:file", comment, found))


def _contains(oval: OvalDocument, comment: str, paths: tuple[str, ...], pattern: str) -> Element:
    found = oval.obj("ind:textfilecontent54", comment,
                     entity("ind:filepath", var=oval.paths(comment, paths),
                            var_check="at least one"),
                     entity("ind:pattern", pattern, op="pattern match"),
                     entity("ind:instance", "1", datatype="int"))
    return criterion(oval.test("ind:textfilecontent54", comment, found))


def _release_is(oval: OvalDocument, comment: str, pattern: str) -> Element:
    """The running kernel's release (collected whole) matches ``pattern``."""
    release = oval.obj("ind:textfilecontent54", "the kernel release",
                       entity("ind:filepath", KERNEL_RELEASE),
                       entity("ind:pattern", r"^\S+", op="pattern match"),
                       entity("ind:instance", "1", datatype="int"))
    state = oval.state("ind:textfilecontent54", comment,
                       entity("ind:text", pattern, op="pattern match"))
    return criterion(oval.test("ind:textfilecontent54", comment, release, state))


def _container(oval: OvalDocument) -> Element:
    return any_of(
        _exists(oval, "container marker files", CONTAINER_MARKERS),
        _contains(oval, "init runs in a container", (INIT_ENVIRON,), "container="))


def _guest_signals(oval: OvalDocument) -> Element:
    vendors = "(?i)" + vm_vendor_regex(r"\s")
    return any_of(
        _contains(oval, "the hypervisor CPU flag", ("/proc/cpuinfo",),
                  r"^(?:flags|Features)\s*:.*\shypervisor(?:\s|$)"),
        _contains(oval, "a virtual machine vendor in DMI",
                  DMI_FILES, vendors))


def kvm_guest(oval: OvalDocument) -> Element:
    """The role_kvm_guest platform's criteria, for checks that judge a guest differently."""
    return all_of(none_of(_container(oval)), _guest_signals(oval))


def _contains_in(oval: OvalDocument, comment: str, path_pattern: str, filename: str,
                 pattern: str) -> Element:
    """A file ``filename`` in a directory matching ``path_pattern`` holds ``pattern``."""
    found = oval.obj("ind:textfilecontent54", comment,
                     entity("ind:path", path_pattern, op="pattern match"),
                     entity("ind:filename", filename),
                     entity("ind:pattern", pattern, op="pattern match"),
                     entity("ind:instance", "1", datatype="int"))
    return criterion(oval.test("ind:textfilecontent54", comment, found))


def _xml_has(oval: OvalDocument, comment: str, path: str, filename: str,
             xpath: str) -> Element:
    found = oval.obj("ind:xmlfilecontent", comment, entity("ind:path", path),
                     entity("ind:filename", filename, op="pattern match"),
                     entity("ind:xpath", xpath))
    return criterion(oval.test("ind:xmlfilecontent", comment, found))


def _rhel_family(oval: OvalDocument) -> Element:
    """RHEL or a rebuild as the release files name them, or neither file (os_platform's
    OVAL twin, in rules/host_layout/system.py)."""
    has_os_release = _exists(oval, "an os-release file", (OS_RELEASE,))
    has_redhat_release = _exists(oval, "a redhat-release file", (REDHAT_RELEASE,))
    systems = []
    for os_id, _, majors, legacy in OS_PLATFORMS:
        # the system named with no release: os-release without its release line, a
        # redhat-release line without " release N" (os_platform, issue 64)
        systems.append(all_of(
            _contains(oval, f"os-release says {os_id}", (OS_RELEASE,),
                      os_release_id(os_id)),
            none_of(_contains(oval, f"os-release has a {release_key(os_id)}", (OS_RELEASE,),
                              release_line(os_id)))))
        if legacy:
            systems.append(all_of(none_of(has_os_release), _contains(
                oval, f"redhat-release names {legacy} with no release", (REDHAT_RELEASE,),
                redhat_release_unnumbered(legacy))))
        # Every release at once: a test per release was most of the platform's OVAL and of
        # its results in each ARF (#66).
        named = all_of(*(_contains(oval, f"os-release says {os_id}, a release of the guidance: "
                                         f"{part}", (OS_RELEASE,), pattern)
                         for part, pattern in zip(("ID", release_key(os_id)),
                                                  os_release_patterns(os_id, *majors))))
        legacy_majors = tuple(major for major in majors if major in OS_RELEASE_LEGACY)
        if legacy and legacy_majors:
            named = any_of(named, all_of(none_of(has_os_release), _contains(
                oval, f"redhat-release says {legacy} {' or '.join(map(str, legacy_majors))}",
                (REDHAT_RELEASE,), redhat_release_pattern(legacy, *legacy_majors))))
        systems.append(named)
    return any_of(*systems, all_of(none_of(has_os_release), none_of(has_redhat_release)),
                  comment="RHEL or a rebuild, or a root without release files")


def build_facts(oval: OvalDocument) -> dict[str, Fact]:
    container = _container(oval)
    guest = _guest_signals(oval)
    # Runs guests (host_layout): a KVM vendor module in use, a running libvirt guest, or a
    # defined guest with libvirt enabled at boot.
    kvm = any_of(
        _contains(oval, "a KVM vendor module in use", (PROC_MODULES,),
                  "^(?:" + "|".join(KVM_VENDOR_MODULES) + r")\s+\d+\s+0*[1-9]"),
        _entries(oval, "running libvirt guests", LIBVIRT_RUNNING_DOMAINS, r"\.xml$"),
        all_of(_entries(oval, "defined libvirt guests", (LIBVIRT_DEFINED_DOMAINS,), r"\.xml$"),
               any_of(_exists(oval, "libvirt enabled at boot (systemd)", tuple(
                   f"{wants}/{unit}" for wants in SYSTEMD_WANTS_DIRS for unit in LIBVIRT_UNITS)),
                      _entries(oval, "libvirt enabled at boot (SysV)", SYSV_RUNLEVEL_DIRS,
                               rf"^S[0-9]{{2}}{LIBVIRT_SYSV}$"))))
    bodies = {
        "role_container": ("The host is a container", container),
        "role_kvm_guest": ("The host is a virtual machine", all_of(none_of(container), guest)),
        "role_kvm_host": ("The host is a KVM host",
                          all_of(none_of(container), none_of(guest), kvm)),
        "role_bare_metal": ("The host is bare metal",
                            all_of(none_of(container), none_of(guest), none_of(kvm))),
        "thp_supported": ("The kernel supports Transparent Huge Pages", any_of(
            _directory(oval, "THP directory", THP_DIRS[0]),
            _directory(oval, "RHEL 6 THP directory", THP_DIRS[1]))),
        # RHEL 5's 2.6.18 predates THP (RHEL 6 brought it): no boot setting can matter there.
        # The item holds the whole release, which reports read from an ARF.
        "thp_kernel": ("The kernel is one with Transparent Huge Pages", none_of(_release_is(
            oval, "a RHEL 5 kernel (2.6.18)", "^" + re.escape(RHEL5_KERNEL_PREFIX)))),
        "dm_multipath": ("A dm-multipath map exists", _contains_in(
            oval, "dm-multipath map uuids", r"^/sys/block/[^/]+/dm$", "uuid",
            "^" + re.escape(MULTIPATH_UUID_PREFIX))),
        "cpu_features": ("The kernel exposes SMT control or a turbo switch", _exists(
            oval, "SMT control, intel_pstate no_turbo or cpufreq boost", CPU_FEATURE_FILES)),
        # A stripe unit to hold BUFSIZE against: a queue publishing an optimal I/O size (a
        # superset of the scanner's striped volumes and RAID LUNs), or a VxVM volume, whose
        # stripe sits in VxVM's database.
        "published_stripe": ("A block device publishes a stripe, or a VxVM volume is mounted",
                             any_of(_contains_in(oval, "optimal I/O sizes",
                                                 r"^/sys/block/[^/]+/queue$", QUEUE_IO_OPT,
                                                 r"^\s*[1-9]"),
                                    _contains(oval, "a mounted VxVM volume", ("/proc/mounts",),
                                              "^" + re.escape(VXVM_DEVICE_DIRS[0])))),
        "xtremio_disks": ("An XtremIO disk is present", _contains_in(
            oval, "disks' SCSI vendors", r"^/sys/block/[^/]+/device$", "vendor",
            "^" + re.escape(XTREMIO_VENDOR) + r"\s*$")),
        # File-backed and network disks are listed by the rule, not judged: with none of
        # these, nothing is judged.
        "guest_host_storage": ("A defined KVM guest is given the host's storage", _xml_has(
            oval, "defined guests' disks on the host's storage", LIBVIRT_DEFINED_DOMAINS,
            r"\.xml$", HOST_STORAGE_DISKS + "/@type")),
        "cpufreq": ("A CPU exposes cpufreq", _directory(
            oval, "cpufreq directories", r"^/sys/devices/system/cpu/cpu[0-9]+/cpufreq$",
            op="pattern match")),
    }
    bodies[RHEL_FAMILY] = ("Red Hat Enterprise Linux or a rebuild (CentOS, Rocky Linux, "
                           "AlmaLinux, Oracle Linux), 5 to 10", _rhel_family(oval))
    facts = {}
    for name, (title, body) in bodies.items():
        # The XML bodies above were built once; definitions copy them.
        definition = oval.definition(title, f"sascheck applicability: {title.lower()}.", body,
                                     klass="inventory",
                                     references=[("CPE", cpe_name(name))])
        facts[name] = Fact(name, title, definition)
    return facts


def facts_for(rule: Rule) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(role facts any of which must hold, extra facts all of which must hold)."""
    assert set(rule.applies_to) <= set(HOST_ROLES)
    return tuple(f"role_{role}" for role in rule.applies_to), rule.needs
