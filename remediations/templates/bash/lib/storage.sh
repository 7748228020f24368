# ---- storage.sh: the block devices below the SAS file systems: stacks, udev matches, schedulers,
#      read-ahead, LVM
# /sys/block name of a mounted device (/dev/mapper/NAME, /dev/NAME), or nothing.
block_name() {
    local device="$1" dm
    if [[ "$device" == /dev/mapper/* ]]; then
        for dm in "$ROOT"/sys/block/dm-*; do
            if [[ -r "$dm/dm/name" && "$(<"$dm/dm/name")" == "${device#/dev/mapper/}" ]]; then
                printf '%s\n' "${dm##*/}"; return
            fi
        done
    elif [[ "$device" == /dev/* && "${device#/dev/}" != */* ]]; then
        if [[ -e "$ROOT/sys/class/block/${device#/dev/}" || -e "$ROOT/sys/block/${device#/dev/}" ]]; then
            printf '%s' "${device#/dev/}"
        fi
    fi
}

# Sets the variable named $1 to the sysfs directory of block device or partition $2 (empty
# where there is none): its link as it is, whose attributes read the same through it,
# resolved (a process) only for a partition, whose disk is the directory above it. A setter,
# not a command substitution: it runs for each device of each stack.
sys_dir_into() {
    local _sys_link
    printf -v "$1" '%s' ""
    for _sys_link in "$ROOT/sys/class/block/$2" "$ROOT/sys/block/$2"; do
        if [[ -e "$_sys_link/partition" ]]; then
            printf -v "$1" '%s' "$(readlink -f -- "$_sys_link")"; return
        fi
        if [[ -e "$_sys_link" ]]; then printf -v "$1" '%s' "$_sys_link"; return; fi
    done
}

# Every device carrying a device's I/O: itself, a partition's disk, slaves, depth first in
# the order of sascheck's BlockGraph.stack. Each device once, at most 4096 steps: an image's
# slaves/ may loop (dm-0 -> dm-1 -> dm-0) or nest deeply, so an explicit stack (children
# pushed in reverse) replaces recursion.
stack_of() {
    local stack=("$1") seen=" " name entry dir parent slave children index steps=0
    while (( ${#stack[@]} > 0 && steps < 4096 )); do
        steps=$((steps + 1))
        name="${stack[${#stack[@]}-1]}"
        unset 'stack[${#stack[@]}-1]'
        [[ -n "$name" && "$seen" != *" $name "* ]] || continue
        seen+="$name "
        printf '%s\n' "$name"
        # The device's sysfs link as it is (slaves/ reads the same through it); resolved only
        # for a partition, whose disk is the directory above. Expansions, not basename and
        # readlink: this runs for each device of each stack, and a process per name was most
        # of a fix's running time.
        entry="$ROOT/sys/class/block/$name"
        [[ -e "$entry" ]] || entry="$ROOT/sys/block/$name"
        [[ -e "$entry" ]] || continue
        children=()
        if [[ -e "$entry/partition" ]]; then
            dir="$(readlink -f -- "$entry")"; parent="${dir%/*}"; children+=("${parent##*/}")
        fi
        for slave in "$entry"/slaves/*; do
            if [[ -e "$slave" || -L "$slave" ]]; then children+=("${slave##*/}"); fi
        done
        for (( index = ${#children[@]} - 1; index >= 0; index-- )); do
            stack+=("${children[index]}")
        done
    done
}

# Devices below the SAS file systems ("stack"), or the devices they mount, with a
# partition replaced by its disk ("queue"), each once.
sas_devices() {
    local which="$1" point name dir=""
    while IFS= read -r point; do
        name="$(block_name "$(device_of "$point")")"
        [[ -n "$name" ]] || continue
        if [[ "$which" == stack ]]; then
            stack_of "$name"
        else
            sys_dir_into dir "$name"
            if [[ -e "$dir/partition" ]]; then dir="${dir%/*}"; printf '%s\n' "${dir##*/}"
            else printf '%s\n' "$name"; fi
        fi
    done < <(sas_mounts) | awk 'NF && !seen[$0]++'
}

# Whether a name may go into a udev rule: only what udev compares byte for byte
# ($UDEV_SAFE, the pattern sascheck's own udev writer uses), at most 128 characters.
udev_safe() { [[ ${#1} -le 128 && "$1" =~ $UDEV_SAFE ]]; }

# A udev match for a device that survives renaming where the kernel offers one: its
# device-mapper name or UUID, its SCSI wwid, else its kernel name. Device names and wwids
# come from the storage; one that could end the match ("), start new keys or glob is never
# written. Prints nothing (and warns) when no safe match exists.
udev_match() {
    local name="$1" dir="" value key
    sys_dir_into dir "$name"
    for key in name uuid; do
        if [[ -r "$dir/dm/$key" ]]; then
            value="$(<"$dir/dm/$key")"
            if udev_safe "$value"; then
                if [[ $key == name ]]; then printf 'ENV{DM_NAME}=="%s"' "$value"; else printf 'ENV{DM_UUID}=="%s"' "$value"; fi
                return
            fi
            warn "$name: its device-mapper $key has characters a udev rule cannot carry safely"
        fi
    done
    if [[ -r "$dir/device/wwid" ]]; then
        value="$(<"$dir/device/wwid")"
        value="${value%"${value##*[! ]}"}"  # udev ignores trailing blanks; t10 ids have them
        if udev_safe "$value"; then
            printf 'KERNEL=="sd*", ATTRS{wwid}=="%s"' "$value"
            return
        fi
        warn "$name: its wwid has characters a udev rule cannot carry safely"
    fi
    if [[ -r "$dir/serial" ]]; then  # virtio-blk: udev's ID_SERIAL is made of it
        value="$(<"$dir/serial")"
        if udev_safe "$value"; then
            printf 'ENV{ID_SERIAL}=="%s"' "$value"
            return
        fi
        warn "$name: its serial has characters a udev rule cannot carry safely"
    fi
    if udev_safe "$name"; then
        # As --format udev says in its note (remediations/udev.py match_for).
        warn "$name: no device-mapper name or UUID, wwid or serial a rule can carry: matched by its" \
             "kernel name, which can change at the next boot"
        printf 'KERNEL=="%s"' "$name"
    else
        warn "manual: $CURRENT_RULE: a device under the SAS file systems has no safe udev match; set it by hand"
    fi
}

# The scheduler a queue/scheduler file selects ("[none] mq-deadline" -> none).
selected_scheduler() {
    local text=""
    file_value_into text "$1" || true
    if [[ "$text" =~ \[([^]]+)\] ]]; then printf '%s' "${BASH_REMATCH[1]}"; fi
}

# Whether a queue/scheduler file offers a choice (the selected one in brackets): a
# bio-based device's offers none.
offers_schedulers() {
    local text=""
    file_value_into text "$1" && [[ "$text" == *"["* ]]
}

# Whether a queue/scheduler file selects an allowed scheduler.
scheduler_allowed() {
    local selected
    selected="$(selected_scheduler "$1")"
    [[ -n "$selected" ]] && in_list "$selected" "${ALLOWED_SCHEDULERS[@]}"
}

# The scheduler the kernel gives a device nothing configures (scanner/storage/blockdev.py's
# default_scheduler): by release prefix before blk-mq (cfq for SATA disks where the default
# is deadline), then mq-deadline for one hardware queue and none for several.
boot_default_scheduler() {
    local name="$1" release pair vendor queues=0 queue
    release="$(kernel_release)"
    for pair in $LAYOUT_LEGACY_DEFAULT_SCHEDULERS; do
        if [[ "$release" == "${pair%%:*}"* ]]; then
            file_value_into vendor "$ROOT/sys/block/$name/device/vendor" || true
            vendor="${vendor%"${vendor##*[! ]}"}"
            if [[ "${pair#*:}" == deadline && "$vendor" == "$LAYOUT_SATA_VENDOR" ]]; then printf cfq
            else printf '%s' "${pair#*:}"; fi
            return
        fi
    done
    for queue in "$ROOT/sys/block/$name/mq"/*; do
        if [[ "${queue##*/}" =~ ^[0-9]+$ ]]; then queues=$((queues + 1)); fi
    done
    if (( queues > 1 )); then printf none; else printf mq-deadline; fi
}

# The first allowed scheduler a device offers.
preferred_scheduler() {
    local offered="" wanted
    file_value_into offered "$1" || true
    offered=" ${offered//[\[\]]/} "
    for wanted in "${ALLOWED_SCHEDULERS[@]}"; do
        if [[ "$offered" == *" $wanted "* ]]; then printf '%s' "$wanted"; return; fi
    done
}

# LVs whose LVM metadata keeps a fixed read_ahead below SECTORS: raised with lvchange on the
# live host; in an image the metadata on disk cannot be changed safely, so it is said.
lvm_read_ahead_below() {
    local sectors="$1" backup vg lv value
    for backup in "$ROOT$LAYOUT_LVM_BACKUP"/*; do
        [[ -f "$backup" ]] || continue
        vg="${backup##*/}"
        # "lv value" for each logical volume that sets a number (lvm.conf(5) text format).
        # shellcheck disable=SC2016  # the awk program is single-quoted on purpose
        while read -r lv value; do
            (( value < sectors )) || continue
            if ! udev_safe "$vg" || ! udev_safe "$lv"; then continue; fi  # names from a file
            if live && command -v lvchange >/dev/null 2>&1; then
                UNDO="lvchange --readahead $value $vg/$lv" run_command lvchange --readahead "$sectors" "$vg/$lv"
            else
                warn "manual: LVM keeps read_ahead $value sectors for $vg/$lv and sets it at" \
                     "every activation: lvchange --readahead $sectors $vg/$lv"
            fi
        done < <(awk '
            /\{/ { depth++; if (depth == 2 && $1 == "logical_volumes") in_lvs = 1
                    if (in_lvs && depth == 3) lv = $1 }
            /\}/ { if (depth == 2) in_lvs = 0; depth-- }
            in_lvs && depth == 3 && $1 == "read_ahead" && $3 ~ /^[0-9]+$/ { print lv, $3 }
        ' "$backup")
    done
}

# Sets the variable named $1 to sas_devices' list for $2 ("stack" or "queue"), one device a
# line: found once a run (a fix changes no mount's device under it), so that each loop over
# the devices reads the list, not the mounts and sysfs again in a subshell of its own.
SAS_DEVICES_READ=" "
SAS_DEVICES_STACK=""
SAS_DEVICES_QUEUE=""
sas_devices_into() {
    if [[ "$SAS_DEVICES_READ" != *" $2 "* ]]; then
        if [[ "$2" == stack ]]; then SAS_DEVICES_STACK="$(sas_devices stack)"
        else SAS_DEVICES_QUEUE="$(sas_devices queue)"; fi
        SAS_DEVICES_READ+="$2 "
    fi
    if [[ "$2" == stack ]]; then printf -v "$1" '%s' "$SAS_DEVICES_STACK"
    else printf -v "$1" '%s' "$SAS_DEVICES_QUEUE"; fi
}

# The devices the SAS file systems mount read ahead at least the minimum now (live only).
raise_sas_read_ahead_now() {
    local name file current devices=""
    sas_devices_into devices queue
    while IFS= read -r name; do
        [[ -n "$name" ]] || continue
        file="$ROOT/sys/block/$name/queue/read_ahead_kb"
        [[ -r "$file" ]] || continue
        current="$(<"$file")"
        if [[ "$current" =~ ^[0-9]+$ ]] && (( current < READ_AHEAD_MIN_KB )); then
            set_runtime "$file" "$READ_AHEAD_MIN_KB"
        fi
    done <<< "$devices"
}

# Sets the variable named $1 to the paths of the request-based dm-multipath maps under the
# SAS file systems, " a b ": a map hands its paths cloned requests past their schedulers
# (blk_insert_cloned_request), so only the map's scheduler counts and the paths' are left
# alone. A bio-based map (no scheduler) leaves scheduling to its paths.
multipath_paths_into() {
    local _m_paths=" " name dir="" slave uuid devices=""
    sas_devices_into devices stack
    while IFS= read -r name; do
        [[ -n "$name" ]] || continue
        sys_dir_into dir "$name"
        [[ -n "$dir" && -r "$dir/dm/uuid" ]] || continue
        # read's own bounded read, not head: a sysfs file of one line
        uuid=""; IFS= read -r -n 256 uuid < "$dir/dm/uuid" || true
        [[ "$uuid" == "$LAYOUT_MULTIPATH_UUID_PREFIX"* ]] || continue
        offers_schedulers "$dir/queue/scheduler" || continue
        for slave in "$dir"/slaves/*; do
            if [[ -e "$slave" || -L "$slave" ]]; then _m_paths+="${slave##*/} "; fi
        done
    done <<< "$devices"
    printf -v "$1" '%s' "$_m_paths"
}

# Scheduler and read-ahead for the devices under the SAS file systems at every boot: a udev
# rule for each device whose scheduler is not allowed, and read-ahead only ever raised; with
# no SAS device known, the tuned profile's read-ahead (it sets no scheduler).
persist_sas_io_tuning() {
    local rules="" name file wanted match value current paths="" devices=""
    multipath_paths_into paths
    sas_devices_into devices stack
    while IFS= read -r name; do
        [[ -n "$name" && "$paths" != *" $name "* ]] || continue
        file="$ROOT/sys/block/$name/queue/scheduler"
        offers_schedulers "$file" || continue
        if scheduler_allowed "$file"; then
            # Allowed now: left as it is. Where the kernel's default at boot is not allowed
            # (cfq on RHEL 5 and 6), a rule keeps the scheduler it has now.
            in_list "$(boot_default_scheduler "$name")" "${ALLOWED_SCHEDULERS[@]}" && continue
            wanted="$(selected_scheduler "$file")"
        else
            wanted="$(preferred_scheduler "$file")"
        fi
        match="$(udev_match "$name")"
        if [[ -n "$wanted" && -n "$match" ]]; then
            rules+="ACTION==\"add|change\", SUBSYSTEM==\"block\", ENV{DEVTYPE}==\"disk\", $match, ATTR{queue/scheduler}=\"$wanted\""$'\n'
        fi
    done <<< "$devices"
    sas_devices_into devices queue
    while IFS= read -r name; do
        [[ -n "$name" ]] || continue
        match="$(udev_match "$name")"
        [[ -n "$match" ]] || continue
        # Only ever raised: a device that reads ahead more keeps its value.
        value="$READ_AHEAD_MIN_KB"
        file_value_into current "$ROOT/sys/block/$name/queue/read_ahead_kb" || true
        if [[ "$current" =~ ^[0-9]+$ ]] && (( current > value )); then value="$current"; fi
        rules+="ACTION==\"add|change\", SUBSYSTEM==\"block\", ENV{DEVTYPE}==\"disk\", $match, ATTR{queue/read_ahead_kb}=\"$value\""$'\n'
    done <<< "$devices"
    if [[ -n "$rules" ]]; then
        write_file "$ROOT${LAYOUT_UDEV_RULES_DIRS%% *}/99-sascheck-io.rules" \
            "# Written by sascheck: scheduler and read-ahead for the devices under SAS file systems."$'\n'"$rules"
    else
        # No SAS device known (a KVM host, say): tuned's [disk] read-ahead covers every disk.
        say "$CURRENT_RULE: no device found under the SAS file systems; using the tuned profile"
        apply_tuned_profile
    fi
}
