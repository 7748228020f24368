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

# ---- host layout: generated from rules/host_layout.py (scripts/update-generated) ----
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
LAYOUT_SAS_PATH_VALUES="$LAYOUT_SAS_PATH_VALUES"sas_config_files
LAYOUT_KTUNE_ENABLES_THP='^[[:space:]]*enable_transparent_hugepages('
LAYOUT_KTUNE_ENABLES_THP="$LAYOUT_KTUNE_ENABLES_THP"'[^[:alnum:]_]|$)'
LAYOUT_KTUNE_NOBARRIER='^[[:space:]]*remount_partitions[[:space:]]+nob'
LAYOUT_KTUNE_NOBARRIER="$LAYOUT_KTUNE_NOBARRIER"'arrier([^[:alnum:]_]|$)'
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
LAYOUT_TUNED_STOCK_READAHEAD="$LAYOUT_TUNED_STOCK_READAHEAD"virtual-host:4096
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
LAYOUT_KTUNE_SYSCONFIG=/etc/sysconfig/ktune
LAYOUT_FSTAB=/etc/fstab
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
LAYOUT_VM_VENDORS='(qemu|kvm|red hat|ovirt|rhev hypervisor|openstack|'
LAYOUT_VM_VENDORS="$LAYOUT_VM_VENDORS"'kubevirt|nutanix|alibaba cloud|google compute engine|'
LAYOUT_VM_VENDORS="$LAYOUT_VM_VENDORS"'amazon ec2|vmware|xen|virtual machine|innotek|'
LAYOUT_VM_VENDORS="$LAYOUT_VM_VENDORS"'virtualbox|bochs|parallels|bhyve|apple virtualization)'
LAYOUT_LEGACY_KERNEL_RE='^(2\.|3\.)'
# ---- end of host layout
die() { echo "collect.sh: $*" >&2; exit 1; }
NEWLINE='
'
ROOT="${SASCHECK_ROOT:-}"
ROOT="${ROOT%/}"
[ -z "$ROOT" ] || [ -d "$ROOT" ] || die "SASCHECK_ROOT=$ROOT is not a directory"
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
[ -n "$OUT" ] || OUT="sascheck-$(cat "$ROOT/proc/sys/kernel/hostname" 2>/dev/null || echo host)-$(date +%Y%m%d%H%M%S).tar.gz"
if [ "$BASE64" = 1 ]; then
    # coreutils' base64 from RHEL 6 on; RHEL 5's coreutils 5.97 has none, its openssl does.
    if command -v base64 >/dev/null 2>&1; then ENCODE="base64"
    elif command -v openssl >/dev/null 2>&1; then ENCODE="openssl base64"
    else die "--base64 needs base64 or openssl"; fi
fi

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT INT TERM
R="$STAGE/root"
mkdir -p "$R"
UNREADABLE="$STAGE/unreadable"
: > "$UNREADABLE"
LIMIT=4194304

# Copy one in-root path into the stage: a link stays a link, a directory is made, a file's
# content is read (sysfs and procfs files report no size, so they are read, not copied).
grab() {
    src="$ROOT$1"
    dst="$R$1"
    if [ -L "$src" ]; then
        mkdir -p "$(dirname "$dst")"
        [ -L "$dst" ] || ln -s "$(readlink "$src")" "$dst"
    elif [ -d "$src" ]; then
        mkdir -p "$dst"
    elif [ -f "$src" ]; then
        mkdir -p "$(dirname "$dst")"
        if ! head -c "$LIMIT" "$src" > "$dst" 2>/dev/null; then
            printf '%s\n' "$1" >> "$UNREADABLE"
            rm -f "$dst"
        elif [ -x "$src" ]; then
            chmod u+x "$dst"  # init scripts run at boot only when executable
        fi
    fi
}

# Record a file that is only tested for existence (programs): an empty placeholder.
mark() {
    if [ -e "$ROOT$1" ] || [ -L "$ROOT$1" ]; then
        if [ -L "$ROOT$1" ]; then grab "$1"; else mkdir -p "$(dirname "$R$1")"; : > "$R$1"; fi
    fi
}

# The in-root path a path resolves to (links followed).
real() {
    resolved="$(readlink -f "$ROOT$1" 2>/dev/null || true)"
    printf '%s' "${resolved#"$ROOT"}"
}

# Follow a path: record each link on the way, then grab what it ends at.
follow() {
    path=""
    rest="${1#/}"
    while [ -n "$rest" ]; do
        part="${rest%%/*}"
        if [ "$part" = "$rest" ]; then rest=""; else rest="${rest#*/}"; fi
        path="$path/$part"
        if [ -L "$ROOT$path" ]; then
            grab "$path"
            path="$(real "$path")"
            [ -n "$path" ] || return 0
        fi
    done
    grab "$path"
}

# /proc: content, never links (/proc/mounts is a link to self/mounts).
for file in mounts self/mountinfo cpuinfo meminfo modules cmdline sys/kernel/osrelease sys/kernel/hostname sys/kernel/version \
        sys/vm/dirty_ratio sys/vm/dirty_bytes; do
    if [ -r "$ROOT/proc/$file" ]; then
        mkdir -p "$(dirname "$R/proc/$file")"
        head -c "$LIMIT" "$ROOT/proc/$file" > "$R/proc/$file" 2>/dev/null \
            || printf '/proc/%s\n' "$file" >> "$UNREADABLE"
    fi
done
# NFS mounts' read-ahead: the bdi named by the major:minor mountinfo gives each.
if [ -r "$ROOT$LAYOUT_MOUNTINFO" ]; then
    while read -r _ _ number _ _ rest; do
        for type in $LAYOUT_NETWORK_FS_TYPES; do
            case "$rest" in *" - $type "*) grab "$LAYOUT_BDI_CLASS/$number/read_ahead_kb" ;; esac
        done
    done < "$ROOT$LAYOUT_MOUNTINFO"
fi
# VxFS tunables applied at mount time.
[ -e "$ROOT$LAYOUT_VXFS_TUNEFSTAB" ] && follow "$LAYOUT_VXFS_TUNEFSTAB"
# dm-multipath's configuration, with its config_dir files, and its manual page (which
# options the installed multipath-tools knows).
[ -e "$ROOT$LAYOUT_MULTIPATH_CONF" ] && follow "$LAYOUT_MULTIPATH_CONF"
for file in $LAYOUT_MULTIPATH_MANPAGES; do
    [ -f "$ROOT$file" ] && follow "$file"
done
for file in "$ROOT$LAYOUT_MULTIPATH_CONF_DIR"/*.conf; do
    [ -f "$file" ] && follow "${file#"$ROOT"}"
done
# NUMA nodes online (the kernel's cpulist).
[ -r "$ROOT$LAYOUT_NUMA_NODES_ONLINE" ] && grab "$LAYOUT_NUMA_NODES_ONLINE"
if [ -r "$ROOT/proc/1/environ" ]; then
    mkdir -p "$R/proc/1"
    { tr '\000' '\n' < "$ROOT/proc/1/environ" | grep '^container=' | tr '\n' '\000' \
        > "$R/proc/1/environ"; } 2>/dev/null || true
fi

# Block devices: each /sys/block entry, its queue, device-mapper names, slaves, partitions.
for link in "$ROOT"/sys/block/*; do
    [ -e "$link" ] || [ -L "$link" ] || continue
    name="${link##*/}"
    grab "/sys/block/$name"
    dir="$(real "/sys/block/$name")"
    [ -n "$dir" ] || continue
    for file in dev queue/scheduler queue/read_ahead_kb queue/minimum_io_size \
        queue/optimal_io_size queue/rotational dm/name dm/uuid; do
        grab "$dir/$file"
    done
    for file in wwid vendor model inquiry; do  # inquiry: SCSI INQUIRY data (ALUA's TPGS)
        if [ -e "$ROOT$dir/device/$file" ]; then follow "$dir/device/$file"; fi
    done
    if [ -e "$ROOT$dir/serial" ]; then grab "$dir/serial"; fi
    for queue in "$ROOT$dir"/mq/*; do  # blk-mq hardware queues decide the default scheduler
        [ -d "$queue" ] && grab "$dir/mq/${queue##*/}"
    done
    if [ -d "$ROOT$dir/slaves" ]; then
        grab "$dir/slaves"
        for slave in "$ROOT$dir"/slaves/*; do
            [ -L "$slave" ] && grab "$dir/slaves/${slave##*/}"
        done
    fi
    for part in "$ROOT$dir"/"$name"*; do
        [ -f "$part/partition" ] && grab "$dir/${part##*/}/partition" && grab "$dir/${part##*/}/dev"
    done
done

# Kernel settings, CPUs, DMI.
for dir in $LAYOUT_THP_DIRS; do
    follow "$dir/enabled"
    follow "$dir/defrag"
done
for file in $LAYOUT_DMI_FILES; do
    follow "$file"
done
for cpu in "$ROOT"/sys/devices/system/cpu/cpu[0-9]*; do
    [ -d "$cpu" ] || continue
    grab "/sys/devices/system/cpu/${cpu##*/}"
    if [ -e "$cpu/cpufreq" ]; then follow "/sys/devices/system/cpu/${cpu##*/}/cpufreq/scaling_governor"; fi
done
# The C-states tuned's force_latency=cstate.* and the command line's limits resolve through.
follow "$LAYOUT_CPUIDLE_DRIVER"
for file in $LAYOUT_CPU_FEATURE_FILES; do follow "$file"; done
for state in "$ROOT$LAYOUT_CPUIDLE_STATES"/state[0-9]*; do
    [ -d "$state" ] || continue
    for file in name latency; do follow "$LAYOUT_CPUIDLE_STATES/${state##*/}/$file"; done
done

# Configuration: boot, tuned, udev, init scripts, identity.
for file in /etc/hostname /etc/os-release /etc/redhat-release /etc/fstab \
        $LAYOUT_GRUB_DEFAULTS $LAYOUT_KERNEL_CMDLINE $LAYOUT_GRUBENV $LAYOUT_LEGACY_GRUB_CONFS \
        $LAYOUT_GRUB2_CFG \
        $LAYOUT_INIT_SCRIPTS /etc/tuned/profile_mode $LAYOUT_TUNED_ACTIVE_FILES \
        $LAYOUT_SYSCTL_CONF $LAYOUT_TUNED_MAIN_CONF $LAYOUT_KTUNE_SYSCONFIG $LAYOUT_KTUNE_SYSCTL \
        $LAYOUT_TUNED_PPD_FILES; do
    [ -e "$ROOT$file" ] || [ -L "$ROOT$file" ] && follow "$file"
done
# An EFI boot reads the loader's files from the EFI system partition.
if [ -d "$ROOT$LAYOUT_EFI_FIRMWARE" ]; then
    grab "$LAYOUT_EFI_FIRMWARE"
    for dir in $LAYOUT_EFI_VENDOR_DIRS; do
        for file in grub.cfg grubenv grub.conf; do follow "$dir/$file"; done
    done
fi
# The installed tuned's version decides which options count (tuned/version.py).
for dir in "$ROOT$LAYOUT_TUNED_VERSION_PARENT"/python[23]*; do
    for packages in $LAYOUT_TUNED_VERSION_DIRS; do
        file="${dir#"$ROOT"}/$packages/tuned/version.py"
        [ -e "$ROOT$file" ] && follow "$file"
    done
done
for dir in $LAYOUT_TUNED_PROFILE_DIRS; do
    for entry in "$ROOT$dir"/*/tuned.conf; do
        [ -e "$entry" ] && follow "${entry#"$ROOT"}"
    done
done
for dir in $LAYOUT_BLS_ENTRIES $LAYOUT_UDEV_RULES_DIRS $LAYOUT_TMPFILES_DIRS $LAYOUT_SYSCTL_DIRS \
        $LAYOUT_KTUNE_SCRIPTS; do
    # ktune runs /etc/ktune.d/*.sh (tuned-adm links a profile's ktune.sh there).
    for entry in "$ROOT$dir"/*.conf "$ROOT$dir"/*.rules "$ROOT$dir"/*.sh; do
        [ -e "$entry" ] && follow "${entry#"$ROOT"}"
    done
done
# SysV start links (RHEL 5, 6) of the services whose start at boot the rules judge.
for dir in $LAYOUT_SYSV_RUNLEVEL_DIRS; do
    for service in tuned "$LAYOUT_KTUNE_SYSV" "$LAYOUT_LIBVIRT_SYSV"; do
        for link in "$ROOT$dir"/S[0-9][0-9]"$service"; do
            [ -e "$link" ] || [ -L "$link" ] || continue
            follow "$dir"
            grab "$(real "$dir")/${link##*/}"
        done
    done
done
for entry in "$ROOT$LAYOUT_LVM_BACKUP"/*; do  # LVM metadata: each LV's read_ahead
    if [ -f "$entry" ]; then follow "${entry#"$ROOT"}"; fi
done
for dir in $LAYOUT_SYSTEMD_UNIT_DIRS; do  # their presence says the host boots with systemd
    if [ -d "$ROOT$dir" ]; then follow "$dir"; fi
done
# Mount units of the site, and which targets want them.
units="${LAYOUT_SYSTEMD_UNIT_DIRS%% *}"
for entry in "$ROOT$units"/*.mount "$ROOT$units"/*.wants/*.mount "$ROOT$units"/*.requires/*.mount; do
    if [ -e "$entry" ] || [ -L "$entry" ]; then follow "${entry#"$ROOT"}"; fi
done
for dir in $LAYOUT_SYSTEMD_WANTS_DIRS; do
    for unit in tuned.service $LAYOUT_LIBVIRT_UNITS; do mark "$dir/$unit"; done
    # Services started at boot: their Exec lines may write sysfs (THP, queues).
    for entry in "$ROOT$dir"/*.service; do
        [ -e "$entry" ] || [ -L "$entry" ] || continue
        unit="${entry##*/}"
        follow "$dir/$unit"
        for unit_dir in $LAYOUT_SYSTEMD_UNIT_DIRS; do
            if [ -e "$ROOT$unit_dir/$unit" ]; then follow "$unit_dir/$unit"; break; fi
        done
    done
done
# KVM guests: running ones by name (status files); defined ones whole (their disks).
for dir in $LAYOUT_LIBVIRT_RUNNING_DOMAINS; do
    for entry in "$ROOT$dir"/*.xml; do
        [ -e "$entry" ] && follow "$dir" && mark "$(real "$dir")/${entry##*/}"
    done
done
for entry in "$ROOT$LAYOUT_LIBVIRT_DEFINED_DOMAINS"/*.xml; do
    [ -e "$entry" ] && follow "$LAYOUT_LIBVIRT_DEFINED_DOMAINS" \
        && grab "$(real "$LAYOUT_LIBVIRT_DEFINED_DOMAINS")/${entry##*/}"
done
for file in $LAYOUT_TUNED_BINARIES $LAYOUT_CONTAINER_MARKERS; do
    mark "$file"
done
[ -d "$ROOT$LAYOUT_TUNED_SHIPPED_PROFILES" ] && grab "$LAYOUT_TUNED_SHIPPED_PROFILES"

# SAS: the standard configuration files, what they include, and what the arguments name.
for home in $LAYOUT_SAS_HOMES; do
    for foundation in $LAYOUT_SAS_FOUNDATIONS; do
        base="$home/$foundation"
        [ -d "$ROOT$base" ] || continue
        follow "$base"
        for file in "$ROOT$base"/sasv9.cfg "$ROOT$base"/sasv9_local.cfg "$ROOT$base"/nls/*/sasv9.cfg; do
            [ -f "$file" ] && follow "${file#"$ROOT"}"
        done
    done
done
# SAS 9.4 server contexts (<config>/Lev<N>/<context>) and SAS Viya's SPRE configuration.
for config in $LAYOUT_SAS_CONFIG_DIRS; do
    [ -d "$ROOT$config" ] || continue
    follow "$config"
    for level in "$ROOT$config"/Lev*; do
        [ -d "$level" ] || continue
        follow "${level#"$ROOT"}"
        for file in "$level"/*/sasv9.cfg "$level"/*/"$LAYOUT_SAS_USERMODS"; do
            [ -f "$file" ] && follow "${file#"$ROOT"}"
        done
    done
done
for file in "$ROOT$LAYOUT_SAS_VIYA_SPRE_CONFIG"/sasv9*.cfg; do
    [ -f "$file" ] && follow "${file#"$ROOT"}"
done
find "$R" -name 'sasv9*.cfg' -type f -exec \
    sed -n 's/^[[:space:]]*-[Cc][Oo][Nn][Ff][Ii][Gg][[:space:]=]*["'\'']*\([^"'\'' ]*\).*/\1/p' {} + \
    | while IFS= read -r include; do
    case "$include" in /*) follow "$include" ;; esac
done
for argument in "$@"; do
    case "$argument" in /*) follow "$argument" ;; *) echo "collect.sh: ignoring relative $argument" >&2 ;; esac
done
# The directories and configuration files the site values name, as the scan will read them.
printf '%s' "$SETS" | while IFS= read -r assignment; do
    case " $LAYOUT_SAS_PATH_VALUES " in
        *" ${assignment%%=*} "*)
            printf '%s\n' "${assignment#*=}" | tr ',' '\n' | while IFS= read -r path; do
                path="$(printf '%s' "$path" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')"
                case "$path" in /*) follow "$path" ;; esac
            done ;;
    esac
done

# What the kernel says of each multipath map, on the running host as root: read-only
# (dmsetup's table and status ioctls), and only of this host, never of a --root directory.
if [ -z "$ROOT" ] && [ "$(id -u)" = 0 ] && command -v dmsetup >/dev/null 2>&1; then
    mkdir -p "$(dirname "$R$LAYOUT_DMSETUP_TABLE")"
    dmsetup table --target multipath 2>/dev/null | head -c "$LIMIT" > "$R$LAYOUT_DMSETUP_TABLE" \
        || rm -f "$R$LAYOUT_DMSETUP_TABLE"
    dmsetup status --target multipath 2>/dev/null | head -c "$LIMIT" > "$R$LAYOUT_DMSETUP_STATUS" \
        || rm -f "$R$LAYOUT_DMSETUP_STATUS"
fi

# Mount points must exist in the snapshot (oscap's partition probe stats them).
if [ -r "$R/proc/mounts" ]; then
    while read -r _ point _; do
        point="$(printf '%b' "$(printf '%s' "$point" | sed 's/\\/\\0/g')")"
        case "$point" in /*) [ -e "$R$point" ] || mkdir -p "$R$point" ;; esac
    done < "$R/proc/mounts"
fi

json() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr -d '\000-\037')"; }
# Each line of file $1 as a JSON string, between $2 and $3, the items separated by commas.
json_items() {
    first=1
    while IFS= read -r line; do
        [ "$first" = 1 ] || printf ', '
        first=0
        printf '%s%s%s' "$2" "$(json "$line")" "$3"
    done < "$1"
}
{
    printf '{"schema": "sascheck-snapshot/1", "sascheck": "collect.sh",\n'
    printf ' "collected_at": "%s",\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf ' "host": {"hostname": %s, "kernel": %s, "root": %s},\n' \
        "$(json "$(cat "$R/proc/sys/kernel/hostname" 2>/dev/null || true)")" \
        "$(json "$(cat "$R/proc/sys/kernel/osrelease" 2>/dev/null || true)")" "$(json "${ROOT:-/}")"
    printf '%s' "$SETS" > "$STAGE/sets"
    printf ' "sets": ['
    json_items "$STAGE/sets" '' ''
    printf '],\n "unreadable": ['
    json_items "$UNREADABLE" '{"path": ' ', "reason": "cannot read"}'
    printf ']}\n'
} > "$STAGE/manifest.json"

# Encoded from a file, not through a pipe: sh has no pipefail to report a failed tar.
if [ "$BASE64" = 1 ] || [ "$OUT" = "-" ]; then
    tar -C "$STAGE" -czf "$STAGE/snapshot.tar.gz" manifest.json root
    if [ "$BASE64" = 1 ]; then
        if [ "$OUT" = "-" ]; then $ENCODE < "$STAGE/snapshot.tar.gz"
        else $ENCODE < "$STAGE/snapshot.tar.gz" > "$OUT"; fi
    else
        cat "$STAGE/snapshot.tar.gz"
    fi
else
    tar -C "$STAGE" -czf "$OUT" manifest.json root
fi
[ "$OUT" = "-" ] || echo "wrote $OUT" >&2
