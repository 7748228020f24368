"""What the host is: THP, the role markers (container, VM, KVM host), the release files,
CPU features, idle states and NUMA."""

from __future__ import annotations

import re

# -- Transparent Huge Pages ---------------------------------------------------------------
# RHEL 7+ and upstream; RHEL 6 backported THP under its own name.
THP_DIRS = ("/sys/kernel/mm/transparent_hugepage", "/sys/kernel/mm/redhat_transparent_hugepage")

# -- what the host is -------------------------------------------------------------------
CONTAINER_MARKERS = ("/.dockerenv", "/run/.containerenv")  # docker, podman
INIT_ENVIRON = "/proc/1/environ"  # NUL-separated; container engines set container=
# DMI sys_vendor / product_name substrings (lower case) of virtual machines, after virt-what
# and systemd-detect-virt: KVM/QEMU (also as Red Hat, oVirt, RHEV, OpenStack, KubeVirt,
# Nutanix AHV, Alibaba, Google and Amazon clouds), VMware, Xen, Hyper-V (product "Virtual
# Machine"; a bare Microsoft vendor is also their laptops), VirtualBox, Bochs, Parallels,
# bhyve, Apple's Virtualization framework.
VM_VENDORS = ("qemu", "kvm", "red hat", "ovirt", "rhev hypervisor", "openstack", "kubevirt",
              "nutanix", "alibaba cloud", "google compute engine", "amazon ec2", "vmware",
              "xen", "virtual machine", "innotek", "virtualbox", "bochs", "parallels", "bhyve",
              "apple virtualization")
DMI_FILES = ("/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name")
PROC_MODULES = "/proc/modules"  # name size use-count dependencies state address
KERNEL_RELEASE = "/proc/sys/kernel/osrelease"  # uname -r
# A KVM host is one that runs guests, not one that merely could (seed 000 §6: the host
# tuning is for hosts running SAS guests). Evidence, any of: the vendor module in use (each
# open /dev/kvm and each guest holds a reference), a running libvirt guest (its status
# file), or a defined guest with a libvirt daemon enabled at boot.
KVM_VENDOR_MODULES = ("kvm_intel", "kvm_amd")
LIBVIRT_RUNNING_DOMAINS = ("/run/libvirt/qemu", "/var/run/libvirt/qemu")  # NAME.xml
LIBVIRT_DEFINED_DOMAINS = "/etc/libvirt/qemu"  # NAME.xml
LIBVIRT_UNITS = ("libvirtd.service", "libvirtd.socket", "virtqemud.service",
                 "virtqemud.socket")  # monolithic daemon (RHEL 7, 8), modular (RHEL 9)
LIBVIRT_SYSV = "libvirtd"  # RHEL 6: /etc/rc.d/rc3.d/S97libvirtd

# A host's name as systemd sets it at boot from /etc/hostname (hostname-setup.c,
# read_etc_hostname_stream: the first line that, stripped, is neither empty nor a "#"
# comment, passed through hostname_cleanup, which keeps letters, digits, '-' and '.', at
# most HOST_NAME_MAX of them), else the kernel's. The scan and the fix's target check
# (remediations/templates/bash/lib/core.sh target_hostname) both read it so.
ETC_HOSTNAME = "/etc/hostname"
KERNEL_HOSTNAME = "/proc/sys/kernel/hostname"
HOST_NAME_MAX = 64


def host_name(etc_hostname: str, kernel_hostname: str) -> str:
    """The name a host goes by, from its /etc/hostname and its kernel's (either may be '')."""
    for text in (etc_hostname, kernel_hostname):
        line = next((line.strip() for line in text.split("\n")
                     if line.strip() and not line.strip().startswith("#")), "")
        name = re.sub(r"[^A-Za-z0-9.-]", "", line)[:HOST_NAME_MAX]
        if name:  # systemd refuses an empty one, and the kernel's name stays
            return name
    return ""


OS_RELEASE = "/etc/os-release"
REDHAT_RELEASE = "/etc/redhat-release"
# The systems the guidance is for (README): RHEL and the rebuilds, as (os-release ID, the
# CPE vendor:product it publishes, its major releases, how /etc/redhat-release names it on
# releases without os-release, RHEL 5 and 6). A host whose release files name anything
# else is notapplicable in both engines; a root with neither file is judged (a partial root).
OS_PLATFORMS = (
    ("rhel", "redhat:enterprise_linux", tuple(range(5, 11)), "Red Hat Enterprise Linux"),
    ("centos", "centos:centos", tuple(range(5, 11)), "CentOS"),
    ("rocky", "rocky:rocky", (8, 9, 10), None),
    ("almalinux", "almalinux:almalinux", (8, 9, 10), None),
    ("ol", "oracle:linux", tuple(range(5, 11)), "Oracle Linux"),
    # RHEL CoreOS (OpenShift's nodes) is RHEL: its VERSION_ID is OpenShift's release, the
    # RHEL release is RHEL_VERSION (openshift/os, rhel-9.4-os-release.yaml at c91cde58,
    # which also makes /etc/redhat-release "Red Hat Enterprise Linux CoreOS release 4.16").
    ("rhcos", "redhat:enterprise_linux", (8, 9, 10), None),
)
OS_NAMES = {"rhel": "Red Hat Enterprise Linux", "centos": "CentOS", "rocky": "Rocky Linux",
            "almalinux": "AlmaLinux", "ol": "Oracle Linux",
            # RHEL, as its CPE_NAME says (cpe:/o:redhat:enterprise_linux:9::coreos)
            "rhcos": "Red Hat Enterprise Linux"}
# The os-release line holding the RHEL-family release, where it is not VERSION_ID.
RELEASE_KEYS = {"rhcos": "RHEL_VERSION"}
OS_RELEASE_LEGACY = (5, 6)  # the releases named by /etc/redhat-release alone


def os_release_id(os_id: str) -> str:
    """os-release's ID line naming ``os_id`` (Python ``re`` and OVAL alike, multi-line)."""
    return rf"^ID=[\"']?{re.escape(os_id)}[\"']?[ \t]*$"


def _any_of(majors: tuple[int, ...]) -> str:
    return "(?:" + "|".join(map(str, majors)) + ")"


def release_key(os_id: str) -> str:
    return RELEASE_KEYS.get(os_id, "VERSION_ID")


def os_release_patterns(os_id: str, *majors: int) -> tuple[str, str]:
    """os-release lines (Python ``re`` and OVAL alike, multi-line) naming ``os_id`` and one
    of ``majors`` (the OVAL asks for them all at once: one test, not one per release)."""
    return (os_release_id(os_id),
            rf"^{release_key(os_id)}=[\"']?{_any_of(majors)}(?:\.[0-9]+)*[\"']?[ \t]*$")


def redhat_release_pattern(name: str, *majors: int) -> str:
    """/etc/redhat-release's line for ``name`` and one of ``majors`` (RHEL 5 and 6 have no
    os-release)."""
    return rf"^{re.escape(name)}\b.* release {_any_of(majors)}(?:\.|[ \t]|$)"


# os-release without its release line (VERSION_ID; RHEL_VERSION on RHEL CoreOS), and a
# redhat-release line naming the system with no release number (issue 64): the system is one
# the guidance is for, its release unknown, so it is judged, and what depends on the release
# says so (the kernel's release decides most).
def release_line(os_id: str) -> str:
    return rf"^{release_key(os_id)}="


def redhat_release_unnumbered(name: str) -> str:
    """/etc/redhat-release's line naming ``name`` with no " release N" on it."""
    return rf"^{re.escape(name)}\b(?![^\n]* release [0-9])"


def os_platform(os_release: str | None, redhat_release: str | None) -> str | None:
    """The CPE name of the system the release files name ("cpe:/o:VENDOR:PRODUCT" where they
    give no release); "" where neither file exists; None where they name another system,
    or a release the guidance is not for."""
    for os_id, product, majors, legacy in OS_PLATFORMS:
        if os_release is not None:
            if re.search(os_release_id(os_id), os_release, re.M) and not re.search(
                    release_line(os_id), os_release, re.M):
                return f"cpe:/o:{product}"
        elif redhat_release is not None and legacy and re.search(
                redhat_release_unnumbered(legacy), redhat_release, re.M):
            return f"cpe:/o:{product}"
        for major in majors:
            if os_release is not None:
                if all(re.search(p, os_release, re.M) for p in os_release_patterns(os_id, major)):
                    return f"cpe:/o:{product}:{major}"
            elif redhat_release is not None and legacy and major in OS_RELEASE_LEGACY and \
                    re.search(redhat_release_pattern(legacy, major), redhat_release, re.M):
                return f"cpe:/o:{product}:{major}"
    return "" if os_release is None and redhat_release is None else None

# -- CPU and NUMA ---------------------------------------------------------------------------------
PROC_CMDLINE = "/proc/cmdline"  # the arguments the running kernel booted with
PROC_CPUINFO = "/proc/cpuinfo"
# The idle states tuned's force_latency=cstate.* resolves through (plugin_cpu.py's
# cpuidle_states_path) and the driver offering them (intel_idle, acpi_idle, ...).
CPUIDLE_STATES = "/sys/devices/system/cpu/cpu0/cpuidle"
CPUIDLE_DRIVER = "/sys/devices/system/cpu/cpuidle/current_driver"
# Hyper-Threading (SMT) and Turbo Boost: the kernel's SMT control (kernel/cpu.c, 4.19 and
# RHEL 7.6+: active 1 while sibling threads run; control on, off, forceoff, notsupported),
# intel_pstate's no_turbo (1: turbo off) and the cpufreq boost switch of acpi-cpufreq and
# amd-pstate (0: boost off).
CPU_SMT_ACTIVE = "/sys/devices/system/cpu/smt/active"
CPU_SMT_CONTROL = "/sys/devices/system/cpu/smt/control"
INTEL_NO_TURBO = "/sys/devices/system/cpu/intel_pstate/no_turbo"
CPUFREQ_BOOST = "/sys/devices/system/cpu/cpufreq/boost"
CPU_FEATURE_FILES = (CPU_SMT_ACTIVE, CPU_SMT_CONTROL, INTEL_NO_TURBO, CPUFREQ_BOOST)
# The NUMA nodes the kernel brought online, a cpulist ("0-1"): Documentation/ABI/stable/
# sysfs-devices-node. Absent when the kernel has no NUMA support.
NUMA_NODES_ONLINE = "/sys/devices/system/node/online"


def vm_vendor_regex(whitespace: str = " ") -> str:
    """An alternation of VM_VENDORS (case-insensitive callers), with ``whitespace`` for the
    spaces inside vendor names (OVAL's regex wants ``\\s``)."""
    return "(" + "|".join(whitespace.join(re.escape(word) for word in vendor.split(" "))
                          for vendor in VM_VENDORS) + ")"

# -- SELinux ------------------------------------------------------------------------------
# The mode the next boot sets (SELINUX= in the config, libselinux's selinux_init_load_policy)
# unless the kernel line says otherwise (selinux=0, enforcing=0|1), and the running mode.
SELINUX_CONFIG = "/etc/selinux/config"
SELINUX_ENFORCE = "/sys/fs/selinux/enforce"
