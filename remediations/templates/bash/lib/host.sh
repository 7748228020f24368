# ---- host.sh: the host's role and init system: the same signals as sascheck's scanner (LAYOUT_*
#      above)
# A KVM host runs guests (rules/host_layout/system.py): a KVM vendor module in use, a running
# libvirt guest, or a defined guest with libvirt enabled at boot.
runs_guests() {
    local module directory unit file
    for module in $LAYOUT_KVM_VENDOR_MODULES; do
        if grep -Eqs "^${module}[[:space:]]+[0-9]+[[:space:]]+0*[1-9]" "$ROOT$LAYOUT_PROC_MODULES"; then
            return 0
        fi
    done
    for directory in $LAYOUT_LIBVIRT_RUNNING_DOMAINS; do
        for file in "$ROOT$directory"/*.xml; do [[ -e "$file" ]] && return 0; done
    done
    for file in "$ROOT$LAYOUT_LIBVIRT_DEFINED_DOMAINS"/*.xml; do
        [[ -e "$file" ]] || continue
        for directory in $LAYOUT_SYSTEMD_WANTS_DIRS; do
            for unit in $LAYOUT_LIBVIRT_UNITS; do
                if [[ -e "$ROOT$directory/$unit" || -L "$ROOT$directory/$unit" ]]; then return 0; fi
            done
        done
        sysv_started "$LAYOUT_LIBVIRT_SYSV"
        return  # the answer is the same for every defined domain
    done
    return 1
}

detect_role() {
    local vendor file module
    if [[ -n "${SASCHECK_ROLE:-}" ]]; then printf '%s' "$SASCHECK_ROLE"; return; fi
    if [[ -n "$FORCED_ROLE" ]]; then printf '%s' "$FORCED_ROLE"; return; fi
    for file in $LAYOUT_CONTAINER_MARKERS; do
        if [[ -e "$ROOT$file" ]]; then printf container; return; fi
    done
    if tr '\000' '\n' 2>/dev/null < "$ROOT/proc/1/environ" | grep -q '^container='; then
        printf container; return
    fi
    if grep -Eqs '^(flags|Features)[[:space:]]*:.*[[:space:]]hypervisor([[:space:]]|$)' "$ROOT/proc/cpuinfo"; then
        printf kvm_guest; return
    fi
    for file in $LAYOUT_DMI_FILES; do
        [[ -r "$ROOT$file" ]] || continue
        vendor="$(tr '[:upper:]' '[:lower:]' < "$ROOT$file")"
        if [[ "$vendor" =~ $LAYOUT_VM_VENDORS ]]; then
            printf kvm_guest; return
        fi
    done
    if runs_guests; then printf kvm_host; else printf bare_metal; fi
}

# RHEL 5/6: a SysV service starts at boot when a run-level directory has its S<NN> link
# (what chkconfig NAME on makes; scanner/boot/services.py reads it the same way).
sysv_started() {
    local directory link
    for directory in $LAYOUT_SYSV_RUNLEVEL_DIRS; do
        for link in "$ROOT$directory"/S[0-9][0-9]"$1"; do
            if [[ -e "$link" || -L "$link" ]]; then return 0; fi
        done
    done
    return 1
}

# Does the image (or this host) boot with systemd? RHEL 5 and 6 boot with SysV init.
uses_systemd() {
    if live; then [[ -d /run/systemd/system ]]; return; fi
    [[ -d "$ROOT/usr/lib/systemd/system" || -d "$ROOT/lib/systemd/system" ]]
}

kernel_release() {
    local release=""
    if file_value_into release "$ROOT/proc/sys/kernel/osrelease"; then printf '%s\n' "$release"
    else uname -r; fi
}

# Whether the host's kernel XFS refuses barrier and nobarrier (rules/host_layout/storage.py's
# xfs_refuses_barrier_options): Linux 4.19 on, and RHEL 8's 4.18. An image that does not say
# its kernel is not judged by this machine's.
xfs_refuses_barrier_options() {
    local release major minor
    file_value_into release "$ROOT/proc/sys/kernel/osrelease" || return 1
    [[ "$release" =~ ^([0-9]{1,4})\.([0-9]{1,4})\. ]] || return 1
    major="${BASH_REMATCH[1]}" minor="${BASH_REMATCH[2]}"
    if (( 10#$major > 4 || (10#$major == 4 && 10#$minor >= 19) )); then return 0; fi
    [[ "$release" == 4.18.* && "$release" == *.el8* ]]
}
