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

OS_RELEASE = "/etc/os-release"
REDHAT_RELEASE = "/etc/redhat-release"

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
