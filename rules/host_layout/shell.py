"""The layout as shell words, for the generated bash library and the standalone collector."""

from __future__ import annotations

import shlex

from .boot import (
    BLS_ENTRIES,
    EFI_FIRMWARE,
    EFI_VENDOR_DIRS,
    FSTAB,
    GRUB2_CFG,
    GRUB_DEFAULTS,
    GRUBENV,
    INIT_SCRIPTS,
    INITTAB,
    KERNEL_CMDLINE,
    KERNEL_SYSCTL_DEFAULTS,
    KTUNE_SHIPPED_CONFIG,
    KTUNE_SYSCONFIG,
    LEGACY_GRUB_CONFS,
    SYSCTL_CONF,
    SYSCTL_DIRS,
    SYSTEMD_UNIT_DIRS,
    SYSTEMD_WANTS_DIRS,
    SYSV_RUNLEVEL_DIRS,
    TMPFILES_DIRS,
    TUNED_MAIN_CONF,
    TUNED_REAPPLY_EXCLUDE_SINCE,
    TUNED_REAPPLY_SYSCTL_ALL_DIRS,
    TUNED_REAPPLY_SYSCTL_DIRS,
    TUNED_REAPPLY_SYSCTL_ETC_ONLY_SINCE,
    TUNED_REAPPLY_SYSCTL_SINCE,
    UDEV_RULES_DIRS,
)
from .limits import (
    GROUP,
    LIMITS_CONF,
    LIMITS_D,
    NR_OPEN,
    NR_OPEN_DEFAULT,
    PAM_LIMITS_MODULES,
    PASSWD,
    SYSTEMD_SYSTEM_CONF,
    SYSTEMD_SYSTEM_CONF_DIRS,
)
from .sas import (
    CAS_LUA_FILES,
    CAS_SHELL_FILES,
    SAS_CONFIG_DIRS,
    SAS_FOUNDATIONS,
    SAS_HOMES,
    SAS_INSTALL_DIRS,
    SAS_PATH_VALUES,
    SAS_USERMODS,
    SAS_VIYA_CAS_CONFIG,
    SAS_VIYA_SPRE_CONFIG,
)
from .storage import (
    BDI_CLASS,
    DMSETUP_STATUS,
    DMSETUP_TABLE,
    LEGACY_DEFAULT_SCHEDULERS,
    LEGACY_SCHEDULERS,
    LVM_BACKUP,
    MOUNTINFO,
    MULTIPATH_CONF,
    MULTIPATH_CONF_DIR,
    MULTIPATH_CONFIG_DUMP,
    MULTIPATH_MANPAGES,
    MULTIPATH_UUID_PREFIX,
    NETWORK_FS_TYPES,
    SATA_VENDOR,
    VXFS_TUNEFSTAB,
    VXVM_DEVICE_DIRS,
    legacy_kernel_regex,
)
from .system import (
    CONTAINER_MARKERS,
    CPU_FEATURE_FILES,
    CPUIDLE_DRIVER,
    CPUIDLE_STATES,
    DMI_FILES,
    KVM_VENDOR_MODULES,
    LIBVIRT_DEFINED_DOMAINS,
    LIBVIRT_RUNNING_DOMAINS,
    LIBVIRT_SYSV,
    LIBVIRT_UNITS,
    NUMA_NODES_ONLINE,
    PROC_CMDLINE,
    PROC_CPUINFO,
    PROC_MODULES,
    SELINUX_CONFIG,
    SELINUX_ENFORCE,
    THP_DIRS,
    vm_vendor_regex,
)
from .tuned import (
    DEFAULT_TARGET_LINKS,
    DMI_CHASSIS_TYPE,
    KTUNE_DISABLES_BARRIERS,
    KTUNE_ENABLES_THP,
    KTUNE_NOBARRIER,
    KTUNE_SCRIPTS,
    KTUNE_SYSV,
    RHEL5_KERNEL_PREFIX,
    SCSI_CACHE_TYPE,
    SYSPURPOSE_FILE,
    SYSTEM_RELEASE_CPE,
    TUNED02_ACTIVE,
    TUNED02_FUNCTIONS,
    TUNED02_LINKS,
    TUNED02_PROFILES,
    TUNED_ACTIVE_FILES,
    TUNED_BINARIES,
    TUNED_MODIFIERS_SINCE,
    TUNED_NEW_LAYOUT,
    TUNED_PPD_BASE,
    TUNED_PPD_BINARY,
    TUNED_PPD_CONF,
    TUNED_PPD_LINK,
    TUNED_PROFILE_DIRS,
    TUNED_PROFILE_MODE_FILE,
    TUNED_PROFILES_SUBDIR,
    TUNED_RECOMMEND_CONF,
    TUNED_RECOMMEND_DIRS,
    TUNED_ROLE_PROFILES,
    TUNED_SHIPPED_PROFILES,
    TUNED_STOCK_READAHEAD_KIB,
    TUNED_SYSCTL_MODIFIERS_SINCE,
    TUNED_TRUE_WORDS,
    TUNED_VERSION_DIRS,
    TUNED_VERSION_PARENT,
)


def shell_layout() -> str:
    """The layout as POSIX shell assignments (space-separated words; the vendor list as an
    ERE), for the generated bash library and the standalone collector."""
    words = {
        "THP_DIRS": THP_DIRS, "CONTAINER_MARKERS": CONTAINER_MARKERS, "DMI_FILES": DMI_FILES,
        "PROC_MODULES": (PROC_MODULES,), "GRUB_DEFAULTS": (GRUB_DEFAULTS,),
        "KERNEL_CMDLINE": (KERNEL_CMDLINE,), "BLS_ENTRIES": (BLS_ENTRIES,), "GRUBENV": (GRUBENV,),
        "GRUB2_CFG": (GRUB2_CFG,), "EFI_FIRMWARE": (EFI_FIRMWARE,), "EFI_VENDOR_DIRS": EFI_VENDOR_DIRS,
        "LEGACY_GRUB_CONFS": LEGACY_GRUB_CONFS, "UDEV_RULES_DIRS": UDEV_RULES_DIRS,
        "KVM_VENDOR_MODULES": KVM_VENDOR_MODULES,
        "LIBVIRT_RUNNING_DOMAINS": LIBVIRT_RUNNING_DOMAINS,
        "LIBVIRT_DEFINED_DOMAINS": (LIBVIRT_DEFINED_DOMAINS,), "LIBVIRT_UNITS": LIBVIRT_UNITS,
        "LIBVIRT_SYSV": (LIBVIRT_SYSV,), "KTUNE_SCRIPTS": (KTUNE_SCRIPTS,),
        "KTUNE_SYSV": (KTUNE_SYSV,), "TUNED02_PROFILES": (TUNED02_PROFILES,),
        "TUNED02_ACTIVE": (TUNED02_ACTIVE,),
        "TUNED02_LINKS": tuple(f"{name}:{link}" for name, link in TUNED02_LINKS),
        "RHEL5_KERNEL_PREFIX": (RHEL5_KERNEL_PREFIX,), "SAS_PATH_VALUES": SAS_PATH_VALUES,
        **{name: (pattern.replace(r"[ \t]", "[[:space:]]").replace(r"\b", "([^[:alnum:]_]|$)"),)
           for name, pattern in (("KTUNE_ENABLES_THP", KTUNE_ENABLES_THP),
                                 ("KTUNE_NOBARRIER", KTUNE_NOBARRIER),
                                 ("KTUNE_DISABLES_BARRIERS", KTUNE_DISABLES_BARRIERS))},
        "TUNED_PROFILE_DIRS": TUNED_PROFILE_DIRS, "TUNED_ACTIVE_FILES": TUNED_ACTIVE_FILES,
        "TUNED_BINARIES": TUNED_BINARIES,
        "TUNED_PPD_FILES": (TUNED_PPD_BINARY, TUNED_PPD_CONF, TUNED_PPD_BASE, TUNED_PPD_LINK,
                            *DEFAULT_TARGET_LINKS),
        "TUNED_SHIPPED_PROFILES": (TUNED_SHIPPED_PROFILES,),
        "TUNED_NEW_LAYOUT": (TUNED_NEW_LAYOUT,),
        "TUNED_VERSION_PARENT": (TUNED_VERSION_PARENT,), "TUNED_VERSION_DIRS": TUNED_VERSION_DIRS,
        "TUNED_PROFILES_SUBDIR": (TUNED_PROFILES_SUBDIR,),
        "TUNED_ROLE_PROFILES": tuple(f"{role}:{name}" for role, name in TUNED_ROLE_PROFILES.items()),
        "TUNED_STOCK_READAHEAD": tuple(f"{name}:{kib}" for name, kib in TUNED_STOCK_READAHEAD_KIB.items()),
        "SYSTEMD_WANTS_DIRS": SYSTEMD_WANTS_DIRS, "SYSTEMD_UNIT_DIRS": SYSTEMD_UNIT_DIRS,
        "TMPFILES_DIRS": TMPFILES_DIRS, "SYSCTL_DIRS": SYSCTL_DIRS,
        "SYSCTL_CONF": (SYSCTL_CONF,), "TUNED_MAIN_CONF": (TUNED_MAIN_CONF,),
        "LIMITS_CONF": (LIMITS_CONF,), "LIMITS_D": (LIMITS_D,), "PASSWD": (PASSWD,),
        "PAM_LIMITS_MODULES": PAM_LIMITS_MODULES, "NR_OPEN": (NR_OPEN,),
        "NR_OPEN_DEFAULT": (str(NR_OPEN_DEFAULT),),
        # KEY@RELEASE-PREFIX@VALUE, fields joined by ',' ("unknown" where it is not known)
        "KERNEL_SYSCTL_DEFAULTS": tuple(
            f"{key}@{prefix}@{(value or 'unknown').replace(' ', ',')}"
            for key, rows in KERNEL_SYSCTL_DEFAULTS.items() for prefix, value in rows),
        "GROUP": (GROUP,), "SYSTEMD_SYSTEM_CONF": (SYSTEMD_SYSTEM_CONF,),
        "SYSTEMD_SYSTEM_CONF_DIRS": SYSTEMD_SYSTEM_CONF_DIRS,
        "SELINUX_CONFIG": (SELINUX_CONFIG,), "SELINUX_ENFORCE": (SELINUX_ENFORCE,),
        "KTUNE_SYSCONFIG": (KTUNE_SYSCONFIG,), "FSTAB": (FSTAB,),
        "TUNED_RECOMMEND_FILES": (TUNED_PROFILE_MODE_FILE, TUNED_RECOMMEND_CONF,
                                  SYSTEM_RELEASE_CPE, DMI_CHASSIS_TYPE, SYSPURPOSE_FILE),
        "TUNED_RECOMMEND_DIRS": TUNED_RECOMMEND_DIRS,
        "LVM_BACKUP": (LVM_BACKUP,),
        "KTUNE_SYSCTL": (KTUNE_SHIPPED_CONFIG["SYSCTL"],),
        "SYSV_RUNLEVEL_DIRS": SYSV_RUNLEVEL_DIRS, "LEGACY_SCHEDULERS": LEGACY_SCHEDULERS,
        "LEGACY_DEFAULT_SCHEDULERS": tuple(f"{prefix}:{name}"
                                           for prefix, name in LEGACY_DEFAULT_SCHEDULERS),
        "SATA_VENDOR": (SATA_VENDOR,),
        "PROC_CMDLINE": (PROC_CMDLINE,), "PROC_CPUINFO": (PROC_CPUINFO,),
        "CPUIDLE_STATES": (CPUIDLE_STATES,), "CPUIDLE_DRIVER": (CPUIDLE_DRIVER,),
        "CPU_FEATURE_FILES": CPU_FEATURE_FILES,
        "NETWORK_FS_TYPES": NETWORK_FS_TYPES, "BDI_CLASS": (BDI_CLASS,),
        "MOUNTINFO": (MOUNTINFO,), "MULTIPATH_CONF": (MULTIPATH_CONF,),
        "MULTIPATH_MANPAGES": MULTIPATH_MANPAGES,
        "VXVM_DEVICE_DIRS": VXVM_DEVICE_DIRS, "VXFS_TUNEFSTAB": (VXFS_TUNEFSTAB,),
        "MULTIPATH_CONF_DIR": (MULTIPATH_CONF_DIR,),
        "MULTIPATH_UUID_PREFIX": (MULTIPATH_UUID_PREFIX,),
        "DMSETUP_TABLE": (DMSETUP_TABLE,), "DMSETUP_STATUS": (DMSETUP_STATUS,),
        "MULTIPATH_CONFIG_DUMP": (MULTIPATH_CONFIG_DUMP,),
        "NUMA_NODES_ONLINE": (NUMA_NODES_ONLINE,),
        "SAS_HOMES": SAS_HOMES, "SAS_FOUNDATIONS": SAS_FOUNDATIONS,
        "SAS_CONFIG_DIRS": SAS_CONFIG_DIRS, "SAS_USERMODS": (SAS_USERMODS,),
        "SAS_VIYA_SPRE_CONFIG": (SAS_VIYA_SPRE_CONFIG,), "INIT_SCRIPTS": INIT_SCRIPTS,
        "SAS_VIYA_CAS_CONFIG": (SAS_VIYA_CAS_CONFIG,),
        "CAS_CONFIG_FILES": (*CAS_LUA_FILES, *CAS_SHELL_FILES),
        "INITTAB": (INITTAB,),
        "SAS_INSTALL_DIRS": SAS_INSTALL_DIRS, "TUNED02_FUNCTIONS": (TUNED02_FUNCTIONS,),
        "SCSI_CACHE_TYPE": (SCSI_CACHE_TYPE,),
        # tuned's reapply_sysctl (scanner/boot/sysctl.py): where the fixes persist a sysctl
        "TUNED_TRUE_WORDS": TUNED_TRUE_WORDS, "DEFAULT_TARGET_LINKS": DEFAULT_TARGET_LINKS,
        "TUNED_REAPPLY_SYSCTL_DIRS": TUNED_REAPPLY_SYSCTL_DIRS,
        "TUNED_REAPPLY_SYSCTL_ALL_DIRS": TUNED_REAPPLY_SYSCTL_ALL_DIRS,
        **{name: (".".join(map(str, release)),) for name, release in (
            ("TUNED_REAPPLY_SYSCTL_SINCE", TUNED_REAPPLY_SYSCTL_SINCE),
            ("TUNED_REAPPLY_SYSCTL_ETC_ONLY_SINCE", TUNED_REAPPLY_SYSCTL_ETC_ONLY_SINCE),
            ("TUNED_REAPPLY_EXCLUDE_SINCE", TUNED_REAPPLY_EXCLUDE_SINCE),
            ("TUNED_MODIFIERS_SINCE", TUNED_MODIFIERS_SINCE),
            ("TUNED_SYSCTL_MODIFIERS_SINCE", TUNED_SYSCTL_MODIFIERS_SINCE))},
    }
    values = {name: " ".join(items) for name, items in words.items()}
    values.update(VM_VENDORS=vm_vendor_regex(),
                  LEGACY_KERNEL_RE=legacy_kernel_regex())
    return "".join(shell_assignment(f"LAYOUT_{name}", value) for name, value in values.items())


def shell_assignment(name: str, value: str, line_width: int = 96) -> str:
    """``name=value`` as POSIX shell, long values continued in pieces (``name="$name"'...'``)
    so that no line outgrows what linters of the embedding files (YAML, XML) accept."""
    width = max(16, line_width - len(f'{name}="${name}"\'\''))
    pieces = []
    while len(value) > width:  # break after a space or '|' where there is one
        cut = max(value.rfind(" ", 0, width), value.rfind("|", 0, width)) + 1 or width
        pieces.append(value[:cut])
        value = value[cut:]
    pieces.append(value)
    lines = [f"{name}={shlex.quote(pieces[0])}"]
    lines += [f'{name}="${name}"{shlex.quote(piece)}' for piece in pieces[1:]]
    return "\n".join(lines) + "\n"
