#!/bin/sh
# shellcheck disable=SC2034  # the host layout block lists more than this script uses
# sascheck collect, standalone: gathers the files `sascheck scan` reads into a snapshot
# archive, with nothing but a POSIX shell, coreutils and tar. Send the archive to whoever
# runs `sascheck scan --snapshot FILE` (or scan-snapshots, tailor, fix). sh collect.sh --help
# says how to run it. Nothing is written on the host except the archive; no secrets are
# read: /proc/1/environ is reduced to its container= entry, and only the configuration files
# listed below are copied.
set -eu

usage() {
    cat <<'USAGE'
usage: sh collect.sh [-o FILE.tar.gz | -o -] [--base64] [--set NAME=VALUE]...
                     [SAS_CONFIG_FILE_OR_DIRECTORY ...]

Archive the files `sascheck scan` reads, to scan them on another machine with
`sascheck scan --snapshot FILE` or `sascheck scan-snapshots`.

  -o FILE       where to write the archive (default sascheck-HOSTNAME-TIME.tar.gz);
                -o - writes it to standard output
  --base64      encode the archive as base64 text (for transports that carry text, as
                Ansible's script module does)
  --set N=V     a site value for the scan (e.g. sas_data_dirs=/sasdata), kept in the
                archive; the SAS directories and configuration files it names are followed
  -h, --help    this help; nothing is collected

Other arguments name extra SAS configuration files (copied) and SAS directories (their
symbolic links recorded). SASCHECK_ROOT=DIR collects from a directory holding another
system instead of this host.
USAGE
}

# ---- host layout: generated from rules/host_layout/ (scripts/update-generated) ----
LAYOUT_THP_DIRS='/sys/kernel/mm/transparent_hugepage '
LAYOUT_THP_DIRS="$LAYOUT_THP_DIRS"/sys/kernel/mm/redhat_transparent_hugepage
LAYOUT_CONTAINER_MARKERS='/.dockerenv /run/.containerenv'
LAYOUT_DMI_FILES='/sys/class/dmi/id/sys_vendor '
LAYOUT_DMI_FILES="$LAYOUT_DMI_FILES"/sys/class/dmi/id/product_name
LAYOUT_PROC_MODULES=/proc/modules
LAYOUT_GRUB_DEFAULTS=/etc/default/grub
LAYOUT_KERNEL_CMDLINE=/etc/kernel/cmdline
LAYOUT_BLS_ENTRIES=/boot/loader/entries
LAYOUT_GRUBENV=/boot/grub2/grubenv
LAYOUT_GRUB2_CFG=/boot/grub2/grub.cfg
LAYOUT_EFI_FIRMWARE=/sys/firmware/efi
LAYOUT_EFI_VENDOR_DIRS='/boot/efi/EFI/redhat /boot/efi/EFI/centos '
LAYOUT_EFI_VENDOR_DIRS="$LAYOUT_EFI_VENDOR_DIRS"'/boot/efi/EFI/rocky /boot/efi/EFI/almalinux'
LAYOUT_LEGACY_GRUB_CONFS='/boot/grub/grub.conf /etc/grub.conf'
LAYOUT_UDEV_RULES_DIRS='/etc/udev/rules.d /run/udev/rules.d '
LAYOUT_UDEV_RULES_DIRS="$LAYOUT_UDEV_RULES_DIRS"'/usr/lib/udev/rules.d /lib/udev/rules.d'
LAYOUT_KVM_VENDOR_MODULES='kvm_intel kvm_amd'
LAYOUT_LIBVIRT_RUNNING_DOMAINS='/run/libvirt/qemu '
LAYOUT_LIBVIRT_RUNNING_DOMAINS="$LAYOUT_LIBVIRT_RUNNING_DOMAINS"/var/run/libvirt/qemu
LAYOUT_LIBVIRT_DEFINED_DOMAINS=/etc/libvirt/qemu
LAYOUT_LIBVIRT_UNITS='libvirtd.service libvirtd.socket '
LAYOUT_LIBVIRT_UNITS="$LAYOUT_LIBVIRT_UNITS"'virtqemud.service virtqemud.socket'
LAYOUT_LIBVIRT_SYSV=libvirtd
LAYOUT_KTUNE_SCRIPTS=/etc/ktune.d
LAYOUT_KTUNE_SYSV=ktune
LAYOUT_TUNED02_PROFILES=/etc/tune-profiles
LAYOUT_TUNED02_ACTIVE=/etc/tune-profiles/active-profile
LAYOUT_TUNED02_LINKS='ktune.sh:/etc/ktune.d/tunedadm.sh '
LAYOUT_TUNED02_LINKS="$LAYOUT_TUNED02_LINKS"'sysctl.ktune:/etc/ktune.d/tunedadm.conf '
LAYOUT_TUNED02_LINKS="$LAYOUT_TUNED02_LINKS"'ktune.sysconfig:/etc/sysconfig/ktune '
LAYOUT_TUNED02_LINKS="$LAYOUT_TUNED02_LINKS"tuned.conf:/etc/tuned.conf
LAYOUT_RHEL5_KERNEL_PREFIX=2.6.18
LAYOUT_SAS_PATH_VALUES='sas_data_dirs sas_work_dirs sas_utilloc_dirs '
LAYOUT_SAS_PATH_VALUES="$LAYOUT_SAS_PATH_VALUES"'cas_disk_cache_dirs scratch_dirs '
LAYOUT_SAS_PATH_VALUES="$LAYOUT_SAS_PATH_VALUES"sas_config_files
LAYOUT_KTUNE_ENABLES_THP='^[[:space:]]*enable_transparent_hugepages('
LAYOUT_KTUNE_ENABLES_THP="$LAYOUT_KTUNE_ENABLES_THP"'[^[:alnum:]_]|$)'
LAYOUT_KTUNE_NOBARRIER='^[[:space:]]*remount_partitions[[:space:]]+nob'
LAYOUT_KTUNE_NOBARRIER="$LAYOUT_KTUNE_NOBARRIER"'arrier([^[:alnum:]_]|$)'
LAYOUT_KTUNE_DISABLES_BARRIERS='^[[:space:]]*disable_disk_barr'
LAYOUT_KTUNE_DISABLES_BARRIERS="$LAYOUT_KTUNE_DISABLES_BARRIERS"'iers([^[:alnum:]_]|$)'
LAYOUT_TUNED_PROFILE_DIRS='/etc/tuned/profiles /etc/tuned '
LAYOUT_TUNED_PROFILE_DIRS="$LAYOUT_TUNED_PROFILE_DIRS"'/usr/lib/tuned/profiles /usr/lib/tuned'
LAYOUT_TUNED_ACTIVE_FILES='/etc/tuned/active_profile '
LAYOUT_TUNED_ACTIVE_FILES="$LAYOUT_TUNED_ACTIVE_FILES"/etc/tune-profiles/active-profile
LAYOUT_TUNED_BINARIES='/usr/sbin/tuned /usr/bin/tuned-adm'
LAYOUT_TUNED_PPD_FILES='/usr/sbin/tuned-ppd /etc/tuned/ppd.conf '
LAYOUT_TUNED_PPD_FILES="$LAYOUT_TUNED_PPD_FILES"'/etc/tuned/ppd_base_profile '
LAYOUT_TUNED_PPD_FILES="$LAYOUT_TUNED_PPD_FILES"/etc/systemd/system/graphical.target.wants/tun
LAYOUT_TUNED_PPD_FILES="$LAYOUT_TUNED_PPD_FILES"'ed-ppd.service '
LAYOUT_TUNED_PPD_FILES="$LAYOUT_TUNED_PPD_FILES"'/etc/systemd/system/default.target '
LAYOUT_TUNED_PPD_FILES="$LAYOUT_TUNED_PPD_FILES"'/usr/lib/systemd/system/default.target '
LAYOUT_TUNED_PPD_FILES="$LAYOUT_TUNED_PPD_FILES"/lib/systemd/system/default.target
LAYOUT_TUNED_SHIPPED_PROFILES=/usr/lib/tuned
LAYOUT_TUNED_NEW_LAYOUT=/usr/lib/tuned/profiles
LAYOUT_TUNED_VERSION_PARENT=/usr/lib
LAYOUT_TUNED_VERSION_DIRS='site-packages dist-packages'
LAYOUT_TUNED_PROFILES_SUBDIR=profiles
LAYOUT_TUNED_ROLE_PROFILES='kvm_guest:virtual-guest '
LAYOUT_TUNED_ROLE_PROFILES="$LAYOUT_TUNED_ROLE_PROFILES"kvm_host:virtual-host
LAYOUT_TUNED_STOCK_READAHEAD='throughput-performance:4096 '
LAYOUT_TUNED_STOCK_READAHEAD="$LAYOUT_TUNED_STOCK_READAHEAD"'enterprise-storage:4096 '
LAYOUT_TUNED_STOCK_READAHEAD="$LAYOUT_TUNED_STOCK_READAHEAD"'virtual-guest:4096 '
LAYOUT_TUNED_STOCK_READAHEAD="$LAYOUT_TUNED_STOCK_READAHEAD"'virtual-host:4096 openshift:4096 '
LAYOUT_TUNED_STOCK_READAHEAD="$LAYOUT_TUNED_STOCK_READAHEAD"'openshift-node:4096 '
LAYOUT_TUNED_STOCK_READAHEAD="$LAYOUT_TUNED_STOCK_READAHEAD"openshift-control-plane:4096
LAYOUT_SYSTEMD_WANTS_DIRS=/etc/systemd/system/multi-user.target.wa
LAYOUT_SYSTEMD_WANTS_DIRS="$LAYOUT_SYSTEMD_WANTS_DIRS"'nts '
LAYOUT_SYSTEMD_WANTS_DIRS="$LAYOUT_SYSTEMD_WANTS_DIRS"/etc/systemd/system/graphical.target.wan
LAYOUT_SYSTEMD_WANTS_DIRS="$LAYOUT_SYSTEMD_WANTS_DIRS"'ts '
LAYOUT_SYSTEMD_WANTS_DIRS="$LAYOUT_SYSTEMD_WANTS_DIRS"/etc/systemd/system/sockets.target.wants
LAYOUT_SYSTEMD_WANTS_DIRS="$LAYOUT_SYSTEMD_WANTS_DIRS"' /etc/systemd/system/basic.target.wants '
LAYOUT_SYSTEMD_WANTS_DIRS="$LAYOUT_SYSTEMD_WANTS_DIRS"/etc/systemd/system/sysinit.target.wants
LAYOUT_SYSTEMD_UNIT_DIRS='/etc/systemd/system /run/systemd/system '
LAYOUT_SYSTEMD_UNIT_DIRS="$LAYOUT_SYSTEMD_UNIT_DIRS"'/usr/lib/systemd/system '
LAYOUT_SYSTEMD_UNIT_DIRS="$LAYOUT_SYSTEMD_UNIT_DIRS"/lib/systemd/system
LAYOUT_TMPFILES_DIRS='/etc/tmpfiles.d /run/tmpfiles.d '
LAYOUT_TMPFILES_DIRS="$LAYOUT_TMPFILES_DIRS"/usr/lib/tmpfiles.d
LAYOUT_SYSCTL_DIRS='/etc/sysctl.d /run/sysctl.d /usr/local/lib/sysctl.d '
LAYOUT_SYSCTL_DIRS="$LAYOUT_SYSCTL_DIRS"'/usr/lib/sysctl.d /lib/sysctl.d'
LAYOUT_SYSCTL_CONF=/etc/sysctl.conf
LAYOUT_TUNED_MAIN_CONF=/etc/tuned/tuned-main.conf
LAYOUT_LIMITS_CONF=/etc/security/limits.conf
LAYOUT_LIMITS_D=/etc/security/limits.d
LAYOUT_PASSWD=/etc/passwd
LAYOUT_PAM_LIMITS_MODULES='/usr/lib64/security/pam_limits.so '
LAYOUT_PAM_LIMITS_MODULES="$LAYOUT_PAM_LIMITS_MODULES"'/lib64/security/pam_limits.so '
LAYOUT_PAM_LIMITS_MODULES="$LAYOUT_PAM_LIMITS_MODULES"'/usr/lib/security/pam_limits.so '
LAYOUT_PAM_LIMITS_MODULES="$LAYOUT_PAM_LIMITS_MODULES"/lib/security/pam_limits.so
LAYOUT_NR_OPEN=/proc/sys/fs/nr_open
LAYOUT_NR_OPEN_DEFAULT=1048576
LAYOUT_KERNEL_SYSCTL_DEFAULTS='vm.dirty_ratio@2.6.18@40 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'vm.dirty_ratio@@20 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'vm.swappiness@@60 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'vm.dirty_background_ratio@@10 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'vm.max_map_count@@65530 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'vm.overcommit_memory@@0 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'net.core.somaxconn@2.@128 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'net.core.somaxconn@3.@128 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'net.core.somaxconn@4.@128 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'net.core.somaxconn@5.0.@128 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'net.core.somaxconn@5.1.@128 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'net.core.somaxconn@5.2.@128 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'net.core.somaxconn@5.3.@128 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'net.core.somaxconn@@4096 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'kernel.sem@2.@250,32000,32,128 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.0.@250,32000,32,128
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"' '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.1.@250,32000,32,128
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"' '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.2.@250,32000,32,128
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"' '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.3.@250,32000,32,128
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"' '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.4.@250,32000,32,128
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"' '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.5.@250,32000,32,128
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"' '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.6.@250,32000,32,128
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"' '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.7.@250,32000,32,128
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"' '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.8.@250,32000,32,128
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"' '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.9.@250,32000,32,128
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"' '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.10.@250,32000,32,12
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'8 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.11.@250,32000,32,12
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'8 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.12.@250,32000,32,12
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'8 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.13.@250,32000,32,12
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'8 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.14.@250,32000,32,12
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'8 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.15.@250,32000,32,12
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'8 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.16.@250,32000,32,12
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'8 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.17.@250,32000,32,12
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'8 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@3.18.@250,32000,32,12
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"'8 '
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS"kernel.sem@@32000,1024000000,500
LAYOUT_KERNEL_SYSCTL_DEFAULTS="$LAYOUT_KERNEL_SYSCTL_DEFAULTS",32000
LAYOUT_GROUP=/etc/group
LAYOUT_SYSTEMD_SYSTEM_CONF=/etc/systemd/system.conf
LAYOUT_SYSTEMD_SYSTEM_CONF_DIRS='/etc/systemd/system.conf.d '
LAYOUT_SYSTEMD_SYSTEM_CONF_DIRS="$LAYOUT_SYSTEMD_SYSTEM_CONF_DIRS"'/run/systemd/system.conf.d '
LAYOUT_SYSTEMD_SYSTEM_CONF_DIRS="$LAYOUT_SYSTEMD_SYSTEM_CONF_DIRS"/usr/lib/systemd/system.conf
LAYOUT_SYSTEMD_SYSTEM_CONF_DIRS="$LAYOUT_SYSTEMD_SYSTEM_CONF_DIRS".d
LAYOUT_SELINUX_CONFIG=/etc/selinux/config
LAYOUT_SELINUX_ENFORCE=/sys/fs/selinux/enforce
LAYOUT_KTUNE_SYSCONFIG=/etc/sysconfig/ktune
LAYOUT_FSTAB=/etc/fstab
LAYOUT_TUNED_RECOMMEND_FILES='/etc/tuned/profile_mode '
LAYOUT_TUNED_RECOMMEND_FILES="$LAYOUT_TUNED_RECOMMEND_FILES"'/etc/tuned/recommend.conf '
LAYOUT_TUNED_RECOMMEND_FILES="$LAYOUT_TUNED_RECOMMEND_FILES"'/etc/system-release-cpe '
LAYOUT_TUNED_RECOMMEND_FILES="$LAYOUT_TUNED_RECOMMEND_FILES"'/sys/class/dmi/id/chassis_type '
LAYOUT_TUNED_RECOMMEND_FILES="$LAYOUT_TUNED_RECOMMEND_FILES"/etc/rhsm/syspurpose/syspurpose.js
LAYOUT_TUNED_RECOMMEND_FILES="$LAYOUT_TUNED_RECOMMEND_FILES"on
LAYOUT_TUNED_RECOMMEND_DIRS='/usr/lib/tuned/recommend.d '
LAYOUT_TUNED_RECOMMEND_DIRS="$LAYOUT_TUNED_RECOMMEND_DIRS"/etc/tuned/recommend.d
LAYOUT_LVM_BACKUP=/etc/lvm/backup
LAYOUT_KTUNE_SYSCTL=/etc/sysctl.ktune
LAYOUT_SYSV_RUNLEVEL_DIRS='/etc/rc.d/rc3.d /etc/rc3.d '
LAYOUT_SYSV_RUNLEVEL_DIRS="$LAYOUT_SYSV_RUNLEVEL_DIRS"'/etc/rc.d/rc5.d /etc/rc5.d'
LAYOUT_LEGACY_SCHEDULERS='deadline noop cfq anticipatory'
LAYOUT_LEGACY_DEFAULT_SCHEDULERS='2.:cfq 3.:deadline'
LAYOUT_SATA_VENDOR=ATA
LAYOUT_PROC_CMDLINE=/proc/cmdline
LAYOUT_PROC_CPUINFO=/proc/cpuinfo
LAYOUT_CPUIDLE_STATES=/sys/devices/system/cpu/cpu0/cpuidle
LAYOUT_CPUIDLE_DRIVER=/sys/devices/system/cpu/cpuidle/current_driver
LAYOUT_CPU_FEATURE_FILES='/sys/devices/system/cpu/smt/active '
LAYOUT_CPU_FEATURE_FILES="$LAYOUT_CPU_FEATURE_FILES"'/sys/devices/system/cpu/smt/control '
LAYOUT_CPU_FEATURE_FILES="$LAYOUT_CPU_FEATURE_FILES"/sys/devices/system/cpu/intel_pstate/no_tu
LAYOUT_CPU_FEATURE_FILES="$LAYOUT_CPU_FEATURE_FILES"'rbo /sys/devices/system/cpu/cpufreq/boost'
LAYOUT_NETWORK_FS_TYPES='nfs nfs4'
LAYOUT_BDI_CLASS=/sys/class/bdi
LAYOUT_MOUNTINFO=/proc/self/mountinfo
LAYOUT_MULTIPATH_CONF=/etc/multipath.conf
LAYOUT_MULTIPATH_MANPAGES='/usr/share/man/man5/multipath.conf.5.gz '
LAYOUT_MULTIPATH_MANPAGES="$LAYOUT_MULTIPATH_MANPAGES"/usr/share/man/man5/multipath.conf.5
LAYOUT_VXVM_DEVICE_DIRS='/dev/vx/dsk/ /dev/vx/dmp/'
LAYOUT_VXFS_TUNEFSTAB=/etc/vx/tunefstab
LAYOUT_MULTIPATH_CONF_DIR=/etc/multipath/conf.d
LAYOUT_MULTIPATH_UUID_PREFIX=mpath-
LAYOUT_DMSETUP_TABLE=/run/sascheck/dmsetup-table
LAYOUT_DMSETUP_STATUS=/run/sascheck/dmsetup-status
LAYOUT_MULTIPATH_CONFIG_DUMP=/run/sascheck/multipath-t
LAYOUT_NUMA_NODES_ONLINE=/sys/devices/system/node/online
LAYOUT_SAS_HOMES='/opt/sas/SASHome /usr/local/SASHome /opt/SASHome '
LAYOUT_SAS_HOMES="$LAYOUT_SAS_HOMES"'/sas/SASHome /usr/local/SAS /opt/SAS'
LAYOUT_SAS_FOUNDATIONS='SASFoundation/9.4 SASFoundation/9.3 '
LAYOUT_SAS_FOUNDATIONS="$LAYOUT_SAS_FOUNDATIONS"SASFoundation/9.2
LAYOUT_SAS_CONFIG_DIRS='/opt/sas/config /sas/config '
LAYOUT_SAS_CONFIG_DIRS="$LAYOUT_SAS_CONFIG_DIRS"'/opt/sas/sasconfig /sasconfig'
LAYOUT_SAS_USERMODS=sasv9_usermods.cfg
LAYOUT_SAS_VIYA_SPRE_CONFIG=/opt/sas/viya/config/etc/spre/defaul
LAYOUT_SAS_VIYA_SPRE_CONFIG="$LAYOUT_SAS_VIYA_SPRE_CONFIG"t
LAYOUT_INIT_SCRIPTS='/etc/rc.d/rc.local /etc/rc.local '
LAYOUT_INIT_SCRIPTS="$LAYOUT_INIT_SCRIPTS"'/etc/rc.d/rc3.d/S99local /etc/rc3.d/S99local '
LAYOUT_INIT_SCRIPTS="$LAYOUT_INIT_SCRIPTS"'/etc/rc.d/rc5.d/S99local /etc/rc5.d/S99local'
LAYOUT_SAS_VIYA_CAS_CONFIG=/opt/sas/viya/config/etc/cas
LAYOUT_CAS_CONFIG_FILES='casconfig.lua casconfig_deployment.lua '
LAYOUT_CAS_CONFIG_FILES="$LAYOUT_CAS_CONFIG_FILES"'casconfig_usermods.lua cas.settings '
LAYOUT_CAS_CONFIG_FILES="$LAYOUT_CAS_CONFIG_FILES"cas_usermods.settings
LAYOUT_INITTAB=/etc/inittab
LAYOUT_SAS_INSTALL_DIRS='/opt/sas/SASHome /usr/local/SASHome '
LAYOUT_SAS_INSTALL_DIRS="$LAYOUT_SAS_INSTALL_DIRS"'/opt/SASHome /sas/SASHome /usr/local/SAS '
LAYOUT_SAS_INSTALL_DIRS="$LAYOUT_SAS_INSTALL_DIRS"'/opt/SAS /opt/sas/config /sas/config '
LAYOUT_SAS_INSTALL_DIRS="$LAYOUT_SAS_INSTALL_DIRS"'/opt/sas/sasconfig /sasconfig /opt/sas/viya '
LAYOUT_SAS_INSTALL_DIRS="$LAYOUT_SAS_INSTALL_DIRS"/opt/sas/spre
LAYOUT_TUNED02_FUNCTIONS=/etc/tune-profiles/functions
LAYOUT_SCSI_CACHE_TYPE=device/scsi_disk
LAYOUT_TUNED_TRUE_WORDS='1 y yes t true'
LAYOUT_DEFAULT_TARGET_LINKS='/etc/systemd/system/default.target '
LAYOUT_DEFAULT_TARGET_LINKS="$LAYOUT_DEFAULT_TARGET_LINKS"/usr/lib/systemd/system/default.targ
LAYOUT_DEFAULT_TARGET_LINKS="$LAYOUT_DEFAULT_TARGET_LINKS"'et '
LAYOUT_DEFAULT_TARGET_LINKS="$LAYOUT_DEFAULT_TARGET_LINKS"/lib/systemd/system/default.target
LAYOUT_TUNED_REAPPLY_SYSCTL_DIRS='/run/sysctl.d '
LAYOUT_TUNED_REAPPLY_SYSCTL_DIRS="$LAYOUT_TUNED_REAPPLY_SYSCTL_DIRS"/etc/sysctl.d
LAYOUT_TUNED_REAPPLY_SYSCTL_ALL_DIRS='/run/sysctl.d '
LAYOUT_TUNED_REAPPLY_SYSCTL_ALL_DIRS="$LAYOUT_TUNED_REAPPLY_SYSCTL_ALL_DIRS"'/etc/sysctl.d '
LAYOUT_TUNED_REAPPLY_SYSCTL_ALL_DIRS="$LAYOUT_TUNED_REAPPLY_SYSCTL_ALL_DIRS"/usr/local/lib/sys
LAYOUT_TUNED_REAPPLY_SYSCTL_ALL_DIRS="$LAYOUT_TUNED_REAPPLY_SYSCTL_ALL_DIRS"'ctl.d '
LAYOUT_TUNED_REAPPLY_SYSCTL_ALL_DIRS="$LAYOUT_TUNED_REAPPLY_SYSCTL_ALL_DIRS"'/usr/lib/sysctl.d '
LAYOUT_TUNED_REAPPLY_SYSCTL_ALL_DIRS="$LAYOUT_TUNED_REAPPLY_SYSCTL_ALL_DIRS"/lib/sysctl.d
LAYOUT_TUNED_REAPPLY_SYSCTL_SINCE=2.7
LAYOUT_TUNED_REAPPLY_SYSCTL_ETC_ONLY_SINCE=2.13
LAYOUT_TUNED_REAPPLY_EXCLUDE_SINCE=2.27
LAYOUT_TUNED_MODIFIERS_SINCE=2.4
LAYOUT_TUNED_SYSCTL_MODIFIERS_SINCE=2.10
LAYOUT_VM_VENDORS='(qemu|kvm|red hat|ovirt|rhev hypervisor|openstack|'
LAYOUT_VM_VENDORS="$LAYOUT_VM_VENDORS"'kubevirt|nutanix|alibaba cloud|google compute engine|'
LAYOUT_VM_VENDORS="$LAYOUT_VM_VENDORS"'amazon ec2|vmware|xen|virtual machine|innotek|'
LAYOUT_VM_VENDORS="$LAYOUT_VM_VENDORS"'virtualbox|bochs|parallels|bhyve|apple virtualization)'
LAYOUT_LEGACY_KERNEL_RE='^(2\.|3\.)'
CATALOGUE_PROC_SYS='sys/kernel/sem sys/net/core/somaxconn '
CATALOGUE_PROC_SYS="$CATALOGUE_PROC_SYS"'sys/vm/dirty_background_bytes '
CATALOGUE_PROC_SYS="$CATALOGUE_PROC_SYS"'sys/vm/dirty_background_ratio sys/vm/dirty_bytes '
CATALOGUE_PROC_SYS="$CATALOGUE_PROC_SYS"'sys/vm/dirty_ratio sys/vm/max_map_count '
CATALOGUE_PROC_SYS="$CATALOGUE_PROC_SYS"'sys/vm/overcommit_memory sys/vm/swappiness'
# ---- end of host layout
die() { echo "collect.sh: $*" >&2; exit 1; }
NEWLINE='
'
# Everything this script writes is the owner's alone: the private stage and the archive.
umask 077
ROOT="${SASCHECK_ROOT:-}"
if [ -n "$ROOT" ]; then
    [ -d "$ROOT" ] || die "SASCHECK_ROOT=$ROOT is not a directory"
    # Every path read is "$ROOT" and a canonical in-root path, so ROOT itself is physical.
    ROOT="$(cd -P "$ROOT" && pwd -P)" || die "SASCHECK_ROOT=$ROOT cannot be entered"
    [ "$ROOT" != / ] || ROOT=""
fi
# A read of a live /proc or /sys file that never ends (a hung driver) must not hold the play;
# RHEL 5's coreutils has no timeout, and there only the non-blocking opens below bound it.
TIMEOUT=""
if command -v timeout >/dev/null 2>&1; then TIMEOUT="timeout 30"; fi
OUT=""
BASE64=0
SETS=""  # NAME=VALUE lines
add_set() {
    case "$1" in
        *"$NEWLINE"*) die "--set $1: a value may not hold a line break" ;;
        [A-Za-z_]*=*) SETS="$SETS$1$NEWLINE" ;;
        *) die "--set $1: expected NAME=VALUE" ;;
    esac
}
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        -o) [ $# -ge 2 ] || die "-o needs a file name"; OUT="$2"; shift 2 ;;
        --base64) BASE64=1; shift ;;
        --set) [ $# -ge 2 ] || die "--set needs NAME=VALUE"; add_set "$2"; shift 2 ;;
        --set=*) add_set "${1#--set=}"; shift ;;
        --) shift; break ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) break ;;
    esac
done
if [ "$BASE64" = 1 ]; then
    # coreutils' base64 from RHEL 6 on; RHEL 5's coreutils 5.97 has none, its openssl does.
    if command -v base64 >/dev/null 2>&1; then ENCODE="base64"
    elif command -v openssl >/dev/null 2>&1; then ENCODE="openssl base64"
    else die "--base64 needs base64 or openssl"; fi
fi

# The stage: a private directory (mktemp -d, mode 0700) that only this script writes.
STAGE="$(mktemp -d "${TMPDIR:-/tmp}/sascheck-collect.XXXXXX")" \
    || die "cannot make a private directory in ${TMPDIR:-/tmp}"
OUT_TEMP=""
trap 'rm -rf "$STAGE"; [ -z "$OUT_TEMP" ] || rm -f "$OUT_TEMP"' EXIT
trap 'exit 1' INT TERM HUP
R="$STAGE/root"
mkdir "$R"
UNREADABLE="$STAGE/unreadable"  # the manifest's {"path", "reason"} entries, one a line
: > "$UNREADABLE"
BLOCKS=1024  # reads stop at 1024 blocks of 4 KiB (4 MiB), as the scanner's do
SAS_ALLOWED=""  # canonical in-root places SAS configuration may be copied from, one a line

json() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr -d '\000-\037')"; }
note_unreadable() {
    printf '{"path": %s, "reason": %s}\n' "$(json "$1")" "$(json "$2")" >> "$UNREADABLE"
}

# Make the in-root directory $1 in the stage one component at a time, never through a
# link: the stage keeps the system's links as links, and writing through one would leave it.
stage_dir() {
    s_made="$R"
    s_rest="${1#/}"
    while [ -n "$s_rest" ]; do
        s_part="${s_rest%%/*}"
        if [ "$s_part" = "$s_rest" ]; then s_rest=""; else s_rest="${s_rest#*/}"; fi
        case "$s_part" in ""|.) continue ;; ..) return 1 ;; esac
        s_made="$s_made/$s_part"
        if [ -L "$s_made" ]; then return 1
        elif [ ! -d "$s_made" ]; then
            [ ! -e "$s_made" ] && mkdir "$s_made" 2>/dev/null || return 1
        fi
    done
}

# Record the link at canonical in-root $1 with its target $2 as written (never followed here).
put_link() {
    stage_dir "${1%/*}" || return 1
    [ ! -L "$R$1" ] || return 0
    [ ! -e "$R$1" ] || return 1
    ln -s -- "$2" "$R$1"
}

# Resolve in-root path $1 one component at a time inside ROOT, as the scanner does: each
# link on the way is recorded in the stage and followed within ROOT (an absolute target
# starts again at ROOT). A '..' that would climb above the root, a line break, or more than
# 40 links refuse the path. The result, with no link, '.' or '..' left in it, is CANON.
CANON=""
canon() {
    case "$1" in /*) ;; *) return 1 ;; esac
    case "$1" in *"$NEWLINE"*) return 1 ;; esac
    CANON=""
    c_rest="${1#/}"
    c_hops=0
    while [ -n "$c_rest" ]; do
        c_part="${c_rest%%/*}"
        if [ "$c_part" = "$c_rest" ]; then c_rest=""; else c_rest="${c_rest#*/}"; fi
        case "$c_part" in
            ""|.) continue ;;
            ..) [ -n "$CANON" ] || return 1; CANON="${CANON%/*}"; continue ;;
        esac
        c_next="$CANON/$c_part"
        if [ -L "$ROOT$c_next" ]; then
            c_hops=$((c_hops + 1))
            [ "$c_hops" -le 40 ] || return 1
            c_target="$(readlink -- "$ROOT$c_next")" || return 1
            case "$c_target" in ""|*"$NEWLINE"*) return 1 ;; esac
            put_link "$c_next" "$c_target" || return 1
            case "$c_target" in /*) CANON="" ;; esac
            c_rest="${c_target#/}${c_rest:+/$c_rest}"
        else
            CANON="$c_next"
        fi
    done
    [ -n "$CANON" ] || CANON=/
}

# Print the regular file at canonical in-root $1, at most 4 MiB: opened without following a
# final link (dd's nofollow), without blocking, under a time limit, and only from inside the
# directory the path names (cd -P, then its physical path compared, so a directory swapped
# for a link after canon is caught).
cat_safe() {
    r_host="$ROOT${1%/*}"
    [ -n "$r_host" ] || r_host=/
    [ -f "$ROOT$1" ] && [ ! -L "$ROOT$1" ] || return 1
    (
        cd -P "$r_host" 2>/dev/null && [ "$PWD" = "$r_host" ] || exit 1
        # shellcheck disable=SC2086  # TIMEOUT: a command and its argument, or nothing
        exec $TIMEOUT dd if="./${1##*/}" iflag=nofollow,nonblock bs=4096 count="$BLOCKS" \
            2>/dev/null
    )
}

# Copy the regular file at canonical in-root $1 into the stage, with its execute bit
# (init scripts run at boot only when executable).
put_file() {
    stage_dir "${1%/*}" || return 1
    [ ! -e "$R$1" ] && [ ! -L "$R$1" ] || return 0
    if cat_safe "$1" > "$R$1"; then
        if [ -x "$ROOT$1" ]; then chmod u+x "$R$1"; fi
    else
        rm -f "$R$1"
        note_unreadable "$1" "cannot read"
    fi
}

# Print the regular file at canonical in-root $1 of an account's tree (tree_file), at most
# 4 MiB. The file is opened under the time limit (a FIFO swapped in cannot hang the run),
# then judged on what was opened, not on its name: a regular file with one hard link (a
# root-only file hard-linked in, as RHEL 6 allows, has two) that is the very file the name
# holds after the open (lstat: a name swapped for a link meanwhile is caught); from inside
# the directory the path names (cd -P, its physical path compared). Exit 2: refused. The
# open is "command exec", so that a file it cannot open is status 1, not the end of sh.
cat_in_tree() {
    r_host="$ROOT${1%/*}"
    [ -n "$r_host" ] || r_host=/
    (
        cd -P "$r_host" 2>/dev/null && [ "$PWD" = "$r_host" ] || exit 1
        # shellcheck disable=SC2016,SC2086  # the inner script's own $1; TIMEOUT: a command and its argument
        exec $TIMEOUT sh -c '
            command exec 3<"./$1" || exit 1
            opened="$(stat -L -c "%d:%i:%h:%f" /proc/self/fd/3)" || exit 1
            named="$(stat -c "%d:%i" -- "./$1")" || exit 1
            case "$opened" in "$named":1:8???) ;; *) exit 2 ;; esac
            exec dd bs=4096 count="$2" <&3 2>/dev/null' sh "${1##*/}" "$BLOCKS" 2>/dev/null
    )
}

# tree_file TREE NAME PATH: in-root PATH of canonical TREE, a tree an account other than
# root writes (NAME: the CAS configuration), copied only where it resolves inside TREE to a
# regular file with one hard link (cat_in_tree); the links on its way are kept as links
# (canon records them, so the snapshot shows where they lead), and what is not copied is
# named with why. scanner/sources/hostroot.py's AccountTree is the same rule.
tree_file() {
    if ! canon "$3"; then
        note_unreadable "$3" "climbs above the root, holds a line break or loops; not followed"
        return 0
    fi
    case "$CANON" in
        "$1"|"$1"/*) ;;
        *) note_unreadable "$3" "a link out of $2 ($1) to $CANON; kept as a link, not read"
           return 0 ;;
    esac
    if [ ! -e "$ROOT$CANON" ] && [ ! -L "$ROOT$CANON" ]; then return 0; fi
    if [ -L "$ROOT$CANON" ] || [ ! -f "$ROOT$CANON" ]; then
        note_unreadable "$3" "not a regular file; not copied"
        return 0
    fi
    stage_dir "${CANON%/*}" || return 0
    [ ! -e "$R$CANON" ] && [ ! -L "$R$CANON" ] || return 0
    t_status=0
    cat_in_tree "$CANON" > "$R$CANON" || t_status=$?
    if [ "$t_status" = 0 ]; then return 0; fi
    rm -f "$R$CANON"
    if [ "$t_status" = 2 ]; then
        note_unreadable "$3" "a file with more than one hard link in $2, or changed while read; not read"
    else
        note_unreadable "$3" "cannot read"
    fi
}

# follow PATH [dir]: record the links on PATH's way, then what it ends at: a directory is
# made, a regular file copied (with "dir", a directory only), anything else named.
follow() {
    if ! canon "$1"; then
        note_unreadable "$1" "climbs above the root, holds a line break or loops; not followed"
        return 0
    fi
    if [ -L "$ROOT$CANON" ]; then note_unreadable "$1" "changed while read; not copied"
    elif [ -d "$ROOT$CANON" ]; then stage_dir "$CANON" || true
    elif [ ! -e "$ROOT$CANON" ]; then :
    elif [ "${2:-}" = dir ]; then note_unreadable "$1" "not a directory; not copied"
    elif [ -f "$ROOT$CANON" ]; then put_file "$CANON" || true
    else note_unreadable "$1" "not a regular file; not copied"
    fi
    return 0
}

# Keep the link at in-root $1 as a link (SysV start links, a map's slaves), not followed.
keep_link() {
    canon "${1%/*}/" || return 0
    k_path="${CANON%/}/${1##*/}"
    if [ -L "$ROOT$k_path" ]; then
        k_target="$(readlink -- "$ROOT$k_path")" || return 0
        case "$k_target" in ""|*"$NEWLINE"*) return 0 ;; esac
        put_link "$k_path" "$k_target" || true
    fi
    return 0
}

# Record that a path exists (programs, unit links): an empty placeholder, never content.
mark() {
    canon "$1" || return 0
    if [ -d "$ROOT$CANON" ]; then stage_dir "$CANON" || true
    elif [ -e "$ROOT$CANON" ] && stage_dir "${CANON%/*}" \
            && [ ! -e "$R$CANON" ] && [ ! -L "$R$CANON" ]; then
        : > "$R$CANON"
    fi
    return 0
}

# CANON set to the canonical in-root directory $1 to list, or false.
listable() { canon "$1" && [ -d "$ROOT$CANON" ] && [ ! -L "$ROOT$CANON" ]; }

# Whether canonical in-root $1 lies in one of SAS_ALLOWED.
sas_allowed() {
    a_list="$SAS_ALLOWED"
    while [ -n "$a_list" ]; do
        a_prefix="${a_list%%"$NEWLINE"*}"
        a_list="${a_list#*"$NEWLINE"}"
        SAS_PLACE="${a_prefix%/}"  # the place it lies in ('' for /), for tree_file
        case "$1" in "$a_prefix"|"$a_prefix"/*) return 0 ;; esac
        [ "$a_prefix" != / ] || return 0
    done
    return 1
}
allow_sas() {
    if canon "$1"; then SAS_ALLOWED="$SAS_ALLOWED$CANON$NEWLINE"; fi
    return 0
}

# ==== the kernel's files in /proc, which every subsystem reads: scanner/facts.py ==============
# /proc: on this host the kernel's own files (/proc/self is the reader itself, so it is not
# resolved as a link here); in a directory root, files like any other.
# The /proc/sys keys come from the catalogue's rules (CATALOGUE_PROC_SYS, in the layout block).
# shellcheck disable=SC2086  # a list of words without blanks or globs
for file in mounts self/mountinfo cpuinfo meminfo modules cmdline sys/kernel/osrelease sys/kernel/hostname sys/kernel/version \
        $CATALOGUE_PROC_SYS; do
    if [ -n "$ROOT" ]; then follow "/proc/$file"; continue; fi
    [ -r "/proc/$file" ] || continue
    case "$file" in */*) stage_dir "/proc/${file%/*}" || continue ;; *) stage_dir /proc || continue ;; esac
    # shellcheck disable=SC2086  # TIMEOUT: a command and its argument, or nothing
    $TIMEOUT dd if="/proc/$file" iflag=nonblock bs=4096 count="$BLOCKS" > "$R/proc/$file" 2>/dev/null \
        || { rm -f "$R/proc/$file"; note_unreadable "/proc/$file" "cannot read"; }
done

# ==== what the host is, its CPUs and guests: scanner/system/ ==================================
# Who the host is and what it runs.
for file in /etc/hostname /etc/machine-id /etc/os-release /etc/redhat-release; do
    follow "$file"
done
# init's environment may hold secrets: only its container= entry is kept.
if canon /proc/1/environ; then
    environ="$CANON"
    [ -z "$ROOT" ] && environ=/proc/1/environ
    if [ -f "$ROOT$environ" ] && stage_dir "${environ%/*}"; then
        if [ -z "$ROOT" ]; then
            # shellcheck disable=SC2086  # TIMEOUT: a command and its argument, or nothing
            $TIMEOUT dd if=/proc/1/environ iflag=nonblock bs=4096 count="$BLOCKS" 2>/dev/null
        else
            cat_safe "$environ"
        fi | tr '\000' '\n' | grep '^container=' | tr '\n' '\000' > "$R$environ" || true
    fi
fi

for file in $LAYOUT_CONTAINER_MARKERS; do
    mark "$file"
done
# THP, DMI and each CPU's governor.
for dir in $LAYOUT_THP_DIRS; do
    follow "$dir/enabled"
    follow "$dir/defrag"
done
for file in $LAYOUT_DMI_FILES; do
    follow "$file"
done
if listable /sys/devices/system/cpu; then
    cpus="$CANON"
    for cpu in "$ROOT$cpus"/cpu[0-9]*; do
        [ -d "$cpu" ] || continue
        follow "$cpus/${cpu##*/}" dir
        if [ -e "$cpu/cpufreq" ]; then follow "$cpus/${cpu##*/}/cpufreq/scaling_governor"; fi
    done
fi
# The C-states tuned's force_latency=cstate.* and the command line's limits resolve through.
follow "$LAYOUT_CPUIDLE_DRIVER"
for file in $LAYOUT_CPU_FEATURE_FILES; do follow "$file"; done
if listable "$LAYOUT_CPUIDLE_STATES"; then
    for state in "$ROOT$CANON"/state[0-9]*; do
        [ -d "$state" ] || continue
        for file in name latency; do follow "$LAYOUT_CPUIDLE_STATES/${state##*/}/$file"; done
    done
fi

# NUMA nodes online (the kernel's cpulist).
follow "$LAYOUT_NUMA_NODES_ONLINE"
# KVM guests: running ones by name (status files); defined ones whole (their disks).
for dir in $LAYOUT_LIBVIRT_RUNNING_DOMAINS; do
    listable "$dir" || continue
    domains="$CANON"
    for entry in "$ROOT$domains"/*.xml; do
        [ -e "$entry" ] && mark "$domains/${entry##*/}"
    done
done
if listable "$LAYOUT_LIBVIRT_DEFINED_DOMAINS"; then
    domains="$CANON"
    for entry in "$ROOT$domains"/*.xml; do
        [ -e "$entry" ] && follow "$domains/${entry##*/}"
    done
fi

# ==== tuned and ktune: scanner/tuned/ =========================================================
# The active profile, tuned's own settings, tuned-ppd's switch, and RHEL 5/6's ktune.
for file in $LAYOUT_TUNED_RECOMMEND_FILES $LAYOUT_TUNED_ACTIVE_FILES $LAYOUT_TUNED_MAIN_CONF \
        $LAYOUT_KTUNE_SYSCONFIG $LAYOUT_KTUNE_SYSCTL $LAYOUT_TUNED_PPD_FILES $LAYOUT_TUNED02_FUNCTIONS; do
    follow "$file"
done
# The installed tuned's version decides which options count (tuned/version.py), and its
# build where the profiles live (tuned/consts.py).
if listable "$LAYOUT_TUNED_VERSION_PARENT"; then
    parent="$CANON"
    for dir in "$ROOT$parent"/python[23]*; do
        for packages in $LAYOUT_TUNED_VERSION_DIRS; do
            for name in version.py consts.py; do
                file="$parent/${dir##*/}/$packages/tuned/$name"
                [ -e "$ROOT$file" ] && follow "$file"
            done
        done
    done
fi
# profile_mode auto: tuned boots its recommended profile, chosen by these files.
for dir in $LAYOUT_TUNED_RECOMMEND_DIRS; do
    listable "$dir" || continue
    for entry in "$ROOT$CANON"/*; do
        [ -f "$entry" ] && follow "${entry#"$ROOT"}"
    done
done
for dir in $LAYOUT_TUNED_PROFILE_DIRS; do
    listable "$dir" || continue
    for entry in "$ROOT$CANON"/*/tuned.conf; do
        [ -e "$entry" ] && follow "${entry#"$ROOT"}"
    done
done
follow "$LAYOUT_TUNED_SHIPPED_PROFILES" dir

for file in $LAYOUT_TUNED_BINARIES; do
    mark "$file"
done
# ktune runs /etc/ktune.d/*.sh and reads its *.conf (tuned-adm links a profile's there).
if listable "$LAYOUT_KTUNE_SCRIPTS"; then
    for entry in "$ROOT$CANON"/*.conf "$ROOT$CANON"/*.rules "$ROOT$CANON"/*.sh; do
        [ -e "$entry" ] && follow "${entry#"$ROOT"}"
    done
fi

# ==== the SAS accounts' limits and SELinux: scanner/system/limits.py, selinux.py ==============
# pam_limits' files, the accounts and groups they name, systemd's defaults, init's limits
# (what services inherit), and the services that run as some account, with their drop-ins.
for file in $LAYOUT_LIMITS_CONF $LAYOUT_PASSWD $LAYOUT_GROUP $LAYOUT_SYSTEMD_SYSTEM_CONF \
        $LAYOUT_PAM_LIMITS_MODULES; do
    follow "$file"
done
follow "$LAYOUT_NR_OPEN"
for dir in $LAYOUT_LIMITS_D $LAYOUT_SYSTEMD_SYSTEM_CONF_DIRS; do
    listable "$dir" || continue
    for entry in "$ROOT$CANON"/*.conf; do
        [ -e "$entry" ] && follow "${entry#"$ROOT"}"
    done
done
[ -z "$ROOT" ] && follow /proc/1/limits
# SELinux: the mode the next boot sets, and (live) the one it runs in.
follow "$LAYOUT_SELINUX_CONFIG"
[ -z "$ROOT" ] && follow "$LAYOUT_SELINUX_ENFORCE"
for dir in $LAYOUT_SYSTEMD_UNIT_DIRS; do
    listable "$dir" || continue
    unit_dir="$CANON"
    for entry in "$ROOT$unit_dir"/*.service; do
        [ -f "$entry" ] || continue
        grep -qs '^[[:space:]]*User[[:space:]]*=' "$entry" || continue
        follow "${entry#"$ROOT"}"
        listable "$unit_dir/${entry##*/}.d" || continue
        for dropin in "$ROOT$CANON"/*.conf; do
            [ -e "$dropin" ] && follow "${dropin#"$ROOT"}"
        done
    done
done

# ==== what the next boot runs: scanner/boot/ ==================================================
# The boot loader's files, fstab, sysctl.conf and the rc scripts.
for file in /etc/fstab $LAYOUT_GRUB_DEFAULTS $LAYOUT_KERNEL_CMDLINE $LAYOUT_GRUBENV \
        $LAYOUT_LEGACY_GRUB_CONFS $LAYOUT_GRUB2_CFG $LAYOUT_INIT_SCRIPTS $LAYOUT_SYSCTL_CONF \
        $LAYOUT_INITTAB; do
    follow "$file"
done
# An EFI boot reads the loader's files from the EFI system partition.
if listable "$LAYOUT_EFI_FIRMWARE"; then
    stage_dir "$CANON" || true
    for dir in $LAYOUT_EFI_VENDOR_DIRS; do
        for file in grub.cfg grubenv grub.conf; do follow "$dir/$file"; done
    done
fi
# BLS entries, udev rules, tmpfiles and sysctl.d: each directory's configuration files.
for dir in $LAYOUT_BLS_ENTRIES $LAYOUT_UDEV_RULES_DIRS $LAYOUT_TMPFILES_DIRS $LAYOUT_SYSCTL_DIRS; do
    listable "$dir" || continue
    for entry in "$ROOT$CANON"/*.conf "$ROOT$CANON"/*.rules "$ROOT$CANON"/*.sh; do
        [ -e "$entry" ] && follow "${entry#"$ROOT"}"
    done
done
# SysV start links (RHEL 5, 6) of the services whose start at boot the rules judge.
for dir in $LAYOUT_SYSV_RUNLEVEL_DIRS; do
    listable "$dir" || continue
    runlevel="$CANON"
    for service in tuned "$LAYOUT_KTUNE_SYSV" "$LAYOUT_LIBVIRT_SYSV"; do
        for link in "$ROOT$runlevel"/S[0-9][0-9]"$service"; do
            [ -e "$link" ] || [ -L "$link" ] || continue
            follow "$dir" dir
            keep_link "$runlevel/${link##*/}"
        done
    done
done
for dir in $LAYOUT_SYSTEMD_UNIT_DIRS; do  # their presence says the host boots with systemd
    follow "$dir" dir
done
# Mount units of the site, and which targets want them; the site's targets, their drop-ins
# and the targets and services they pull in (what the next boot starts: boot/target.py).
units="${LAYOUT_SYSTEMD_UNIT_DIRS%% *}"
if listable "$units"; then
    units="$CANON"
    for entry in "$ROOT$units"/*.mount "$ROOT$units"/*.wants/*.mount "$ROOT$units"/*.requires/*.mount \
            "$ROOT$units"/*.target "$ROOT$units"/*.target.d/*.conf \
            "$ROOT$units"/*.target.wants/*.target "$ROOT$units"/*.target.requires/*.target \
            "$ROOT$units"/*.target.wants/*.service "$ROOT$units"/*.target.requires/*.service; do
        if [ -e "$entry" ] || [ -L "$entry" ]; then follow "${entry#"$ROOT"}"; fi
    done
fi
for dir in $LAYOUT_SYSTEMD_WANTS_DIRS; do
    for unit in tuned.service $LAYOUT_LIBVIRT_UNITS; do mark "$dir/$unit"; done
    listable "$dir" || continue
    # Services started at boot: their Exec lines may write sysfs (THP, queues).
    for entry in "$ROOT$CANON"/*.service; do
        [ -e "$entry" ] || [ -L "$entry" ] || continue
        unit="${entry##*/}"
        follow "$dir/$unit"
        for unit_dir in $LAYOUT_SYSTEMD_UNIT_DIRS; do
            if canon "$unit_dir/$unit" && [ -e "$ROOT$CANON" ]; then
                follow "$unit_dir/$unit"
                break
            fi
        done
    done
done

# ==== the storage below the SAS file systems: scanner/storage/ ================================
# Block devices: each /sys/block entry, its queue, device-mapper names, slaves, partitions.
if listable /sys/block; then
    block="$CANON"
    for link in "$ROOT$block"/*; do
        [ -e "$link" ] || [ -L "$link" ] || continue
        name="${link##*/}"
        if ! canon "$block/$name" || [ ! -d "$ROOT$CANON" ]; then continue; fi
        dir="$CANON"
        stage_dir "$dir" || continue
        for file in dev queue/scheduler queue/read_ahead_kb queue/minimum_io_size \
            queue/optimal_io_size queue/rotational dm/name dm/uuid serial; do
            follow "$dir/$file"
        done
        # inquiry: SCSI INQUIRY data (ALUA's TPGS); access_state: the path's ALUA state
        for file in wwid vendor model inquiry access_state; do
            follow "$dir/device/$file"
        done
        for scsi in "$ROOT$dir/$LAYOUT_SCSI_CACHE_TYPE"/*; do  # RHEL 6 ktune skips write-back
            [ -d "$scsi" ] && follow "$dir/$LAYOUT_SCSI_CACHE_TYPE/${scsi##*/}/cache_type"
        done
        for queue in "$ROOT$dir"/mq/*; do  # blk-mq hardware queues decide the default scheduler
            [ -d "$queue" ] && follow "$dir/mq/${queue##*/}" dir
        done
        if [ -d "$ROOT$dir/slaves" ] && [ ! -L "$ROOT$dir/slaves" ]; then
            stage_dir "$dir/slaves" || true
            for slave in "$ROOT$dir"/slaves/*; do
                [ -L "$slave" ] && keep_link "$dir/slaves/${slave##*/}"
            done
        fi
        for part in "$ROOT$dir"/"$name"*; do
            [ -f "$part/partition" ] || continue
            follow "$dir/${part##*/}/partition"
            follow "$dir/${part##*/}/dev"
        done
    done
fi

if listable "$LAYOUT_LVM_BACKUP"; then  # LVM metadata: each LV's read_ahead
    for entry in "$ROOT$CANON"/*; do
        if [ -f "$entry" ]; then follow "${entry#"$ROOT"}"; fi
    done
fi
# NFS mounts' read-ahead: the bdi named by each mount's major:minor (two numbers, nothing else).
if [ -f "$R$LAYOUT_MOUNTINFO" ]; then
    while read -r _ _ number _ _ rest; do
        case "$number" in [0-9]*:[0-9]*) ;; *) continue ;; esac
        case "$number" in *[!0-9:]*|*:*:*) continue ;; esac
        for type in $LAYOUT_NETWORK_FS_TYPES; do
            case "$rest" in *" - $type "*) follow "$LAYOUT_BDI_CLASS/$number/read_ahead_kb" ;; esac
        done
    done < "$R$LAYOUT_MOUNTINFO"
fi
# VxFS tunables applied at mount time.
follow "$LAYOUT_VXFS_TUNEFSTAB"
# dm-multipath's configuration, with its config_dir files, and its manual page (which
# options the installed multipath-tools knows).
follow "$LAYOUT_MULTIPATH_CONF"
for file in $LAYOUT_MULTIPATH_MANPAGES; do follow "$file"; done
if listable "$LAYOUT_MULTIPATH_CONF_DIR"; then
    for file in "$ROOT$CANON"/*.conf; do
        [ -f "$file" ] && follow "${file#"$ROOT"}"
    done
fi
# What the kernel says of each multipath map, on the running host as root: read-only
# (dmsetup's table and status ioctls), and only of this host, never of a --root directory.
if [ -z "$ROOT" ] && [ "$(id -u)" = 0 ] && command -v dmsetup >/dev/null 2>&1 \
        && stage_dir "${LAYOUT_DMSETUP_TABLE%/*}"; then
    dmsetup table --target multipath 2>/dev/null | head -c 4194304 > "$R$LAYOUT_DMSETUP_TABLE" \
        || rm -f "$R$LAYOUT_DMSETUP_TABLE"
    dmsetup status --target multipath 2>/dev/null | head -c 4194304 > "$R$LAYOUT_DMSETUP_STATUS" \
        || rm -f "$R$LAYOUT_DMSETUP_STATUS"
fi
# The installed multipath-tools' configuration with its built-in hardware table (read-only:
# multipath -t prints it and exits), which decides for arrays multipath.conf does not name.
if [ -z "$ROOT" ] && [ "$(id -u)" = 0 ] && command -v multipath >/dev/null 2>&1 \
        && stage_dir "${LAYOUT_MULTIPATH_CONFIG_DUMP%/*}"; then
    multipath -t 2>/dev/null | head -c 4194304 > "$R$LAYOUT_MULTIPATH_CONFIG_DUMP" \
        || rm -f "$R$LAYOUT_MULTIPATH_CONFIG_DUMP"
    [ -s "$R$LAYOUT_MULTIPATH_CONFIG_DUMP" ] || rm -f "$R$LAYOUT_MULTIPATH_CONFIG_DUMP"
fi

# Mount points must exist in the snapshot (oscap's partition probe stats them); one with a
# '..' or on the way through a recorded link is left out.
if [ -f "$R/proc/mounts" ]; then
    while read -r _ point _; do
        point="$(printf '%b' "$(printf '%s' "$point" | sed 's/\\/\\0/g')")"
        case "$point" in /*) stage_dir "$point" || true ;; esac
    done < "$R/proc/mounts"
fi


# ==== SAS: scanner/storage/sasdirs.py =========================================================
# SAS: the standard configuration files, what they include, and what the arguments name.
# The SAS account writes sasv9.cfg and owns the SAS directories, so nothing there may steer
# this script (run as root) to another file: an include is copied only from inside the
# SAS installation, the SAS directories and the files named here, and never a file with a
# second hard link; the SAS directories are recorded as directories, never read.
for dir in $LAYOUT_SAS_INSTALL_DIRS; do allow_sas "$dir"; done
for argument in "$@"; do
    case "$argument" in /*) allow_sas "$argument" ;; esac
done
SAS_PATHS="$STAGE/sas-paths"  # NAME<TAB>PATH lines from the site values
printf '%s' "$SETS" | while IFS= read -r assignment; do
    case " $LAYOUT_SAS_PATH_VALUES " in
        *" ${assignment%%=*} "*)
            printf '%s\n' "${assignment#*=}" | tr ',' '\n' | while IFS= read -r path; do
                path="$(printf '%s' "$path" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')"
                case "$path" in /*) printf '%s\t%s\n' "${assignment%%=*}" "$path" ;; esac
            done ;;
    esac
done > "$SAS_PATHS"
tab="$(printf '\t')"
while IFS="$tab" read -r name path; do allow_sas "$path"; done < "$SAS_PATHS"

# The SAS installer account owns these trees: their files are copied by tree_file's rule.
in_tree() {
    if [ -e "$ROOT$2" ] || [ -L "$ROOT$2" ]; then tree_file "$1" "the SAS installation" "$2"; fi
}
for home in $LAYOUT_SAS_HOMES; do
    for foundation in $LAYOUT_SAS_FOUNDATIONS; do
        base="$home/$foundation"
        listable "$base" || continue
        base="$CANON"
        for file in "$ROOT$base"/sasv9.cfg "$ROOT$base"/sasv9_local.cfg "$ROOT$base"/nls/*/sasv9.cfg; do
            in_tree "$base" "${file#"$ROOT"}"
        done
    done
done
# SAS 9.4 server contexts (<config>/Lev<N>/<context>) and SAS Viya's SPRE configuration.
for config in $LAYOUT_SAS_CONFIG_DIRS; do
    listable "$config" || continue
    config="$CANON"
    for level in "$ROOT$config"/Lev*; do
        [ -d "$level" ] || continue
        follow "${level#"$ROOT"}" dir
        for file in "$level"/*/sasv9.cfg "$level"/*/"$LAYOUT_SAS_USERMODS"; do
            in_tree "$config" "${file#"$ROOT"}"
        done
    done
done
if listable "$LAYOUT_SAS_VIYA_SPRE_CONFIG"; then
    spre="$CANON"
    for file in "$ROOT$spre"/sasv9*.cfg; do
        in_tree "$spre" "${file#"$ROOT"}"
    done
fi
# SAS Viya's CAS instances (<cas config>/<instance>): where each keeps its disk cache.
# The CAS account writes these: tree_file's rule, never follow's.
if listable "$LAYOUT_SAS_VIYA_CAS_CONFIG"; then
    cas_tree="$CANON"
    for instance in "$ROOT$cas_tree"/*; do
        if [ ! -d "$instance" ] || [ -L "$instance" ]; then continue; fi
        for name in $LAYOUT_CAS_CONFIG_FILES; do
            if [ -e "$instance/$name" ] || [ -L "$instance/$name" ]; then
                tree_file "$cas_tree" "the CAS configuration" "${instance#"$ROOT"}/$name"
            fi
        done
    done
fi
for argument in "$@"; do
    case "$argument" in /*) follow "$argument" ;; *) echo "collect.sh: ignoring relative $argument" >&2 ;; esac
done
while IFS="$tab" read -r name path; do
    if [ "$name" = sas_config_files ]; then follow "$path"; else follow "$path" dir; fi
done < "$SAS_PATHS"
find "$R" -name 'sasv9*.cfg' -type f -exec \
    sed -n 's/^[[:space:]]*-[Cc][Oo][Nn][Ff][Ii][Gg][[:space:]=]*["'\'']*\([^"'\'' ]*\).*/\1/p' {} + \
    | while IFS= read -r include; do
    case "$include" in /*) ;; *) continue ;; esac
    if ! canon "$include" || ! sas_allowed "$CANON"; then
        note_unreadable "$include" "a -CONFIG include outside the SAS installation and the SAS directories; not copied"
    else
        tree_file "$SAS_PLACE" "the SAS installation and the SAS directories" "$include"
    fi
done

# Who owns each SAS configuration file copied (the archive's copies are this script's): the
# SAS account, which the account rules take where the site names none.
OWNERS="$STAGE/owners"
find "$R" -name 'sasv9*.cfg' -type f | while IFS= read -r copy; do
    path="${copy#"$R"}"
    uid="$(stat -c %u -- "$ROOT$path" 2>/dev/null)" || continue
    case "$uid" in ''|*[!0-9]*) continue ;; esac
    printf '{"path": %s, "uid": %s}\n' "$(json "$path")" "$uid"
done > "$OWNERS"

# Each line of file $1 as a JSON string, between $2 and $3, the items separated by commas.
json_items() {
    first=1
    while IFS= read -r line; do
        [ "$first" = 1 ] || printf ', '
        first=0
        printf '%s%s%s' "$2" "$(json "$line")" "$3"
    done < "$1"
}
# The JSON objects of file $1, one a line, separated by commas.
json_lines() {
    first=1
    while IFS= read -r entry; do
        [ "$first" = 1 ] || printf ', '
        first=0
        printf '%s' "$entry"
    done < "$1"
}
hostname_file="$R/proc/sys/kernel/hostname"
{
    printf '{"schema": "sascheck-snapshot/1", "sascheck": "collect.sh",\n'
    printf ' "collected_at": "%s",\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf ' "host": {"hostname": %s, "kernel": %s, "root": %s},\n' \
        "$(json "$(head -c 256 "$hostname_file" 2>/dev/null || true)")" \
        "$(json "$(head -c 256 "$R/proc/sys/kernel/osrelease" 2>/dev/null || true)")" \
        "$(json "${ROOT:-/}")"
    printf '%s' "$SETS" > "$STAGE/sets"
    printf ' "sets": ['
    json_items "$STAGE/sets" '' ''
    printf '],\n "unreadable": ['
    json_lines "$UNREADABLE"
    printf '],\n "owners": ['
    json_lines "$OWNERS"
    printf ']}\n'
} > "$STAGE/manifest.json"

# Encoded from a file, not through a pipe: sh has no pipefail to report a failed tar.
tar -C "$STAGE" -czf "$STAGE/snapshot.tar.gz" manifest.json root
if [ "$OUT" = "-" ]; then
    if [ "$BASE64" = 1 ]; then $ENCODE < "$STAGE/snapshot.tar.gz"; else cat "$STAGE/snapshot.tar.gz"; fi
    exit 0
fi
if [ -z "$OUT" ]; then  # the host's name as a file name: letters, digits, '.', '_' and '-'
    OUT="sascheck-$(head -c 64 "$hostname_file" 2>/dev/null | tr -d '\n' | tr -c 'A-Za-z0-9._-' '_')"
    OUT="${OUT%-}-$(date +%Y%m%d%H%M%S).tar.gz"
fi
# A new file beside OUT (mktemp: created exclusively, mode 0600), renamed over OUT: a link
# or file planted at a predictable name is replaced, never written through.
case "$OUT" in */*) out_dir="${OUT%/*}" ;; *) out_dir=. ;; esac
[ -n "$out_dir" ] || out_dir=/
OUT_TEMP="$(mktemp "$out_dir/.sascheck-collect.XXXXXX")" || die "cannot write in $out_dir"
if [ "$BASE64" = 1 ]; then $ENCODE < "$STAGE/snapshot.tar.gz" > "$OUT_TEMP"
else cat "$STAGE/snapshot.tar.gz" > "$OUT_TEMP"; fi
mv -f -T -- "$OUT_TEMP" "$OUT" || die "cannot write $OUT"
OUT_TEMP=""
echo "wrote $OUT" >&2
