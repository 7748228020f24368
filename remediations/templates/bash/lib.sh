# ---- sascheck remediation library -------------------------------------------------------
# ROOT: where the system lives ("" = this host, live). An offline image gets only its
# persistent configuration changed; runtime writes to /proc and /sys are skipped there.
ROOT="${SASCHECK_ROOT:-}"
ROOT="${ROOT%/}"
DRY_RUN=0
# Plan mode (SASCHECK_PLAN=1): change nothing, print the changes as JSON for a caller
# (the Ansible playbook) that carries them out with its own modules.
PLAN="${SASCHECK_PLAN:-0}"
INSTALL_TUNED="${SASCHECK_INSTALL_TUNED:-no}"
CHANGES=0
REFUSED=0
CURRENT_RULE=""
PLAN_ITEMS=()
STAMP="$(date +%Y%m%d%H%M%S)"
declare -A BACKED_UP=()

# Every change a run makes is recorded here, so that --revert can undo it (see revert()):
# on this host in /var/lib/sascheck; for an offline image in the current directory, outside
# the image, where nothing the image holds (a planted link) can redirect the writes.
# Its name is made new (mktemp, O_EXCL, a random part) when the first change is recorded, so
# that a link planted at a predictable name cannot redirect it; SASCHECK_MANIFEST names one
# to append to (the playbook's), which must be a regular file or not exist.
MANIFEST="${SASCHECK_MANIFEST:-}"
if [[ -n "$ROOT" ]]; then
    MANIFEST_TEMPLATE="$PWD/sascheck-fix-$STAMP.XXXXXXXX"
else
    MANIFEST_TEMPLATE="/var/lib/sascheck/fix-$STAMP.XXXXXXXX"
fi
# The playbook asks through the environment: revert a manifest (its revert tag), or record
# one change it is about to make, or has just made, with its own modules.
REVERT="${SASCHECK_REVERT:-}"
RECORD_KIND="${SASCHECK_RECORD_KIND:-}"

usage() {
    echo "usage: $0 [--dry-run | --revert MANIFEST]   (env: SASCHECK_ROOT=DIR, SASCHECK_ROLE=ROLE," \
         "SASCHECK_INSTALL_TUNED=yes, SASCHECK_MANIFEST=FILE)"
}

while (( $# > 0 )); do
    case "$1" in
        --dry-run) DRY_RUN=1 ;;
        --revert) [[ $# -ge 2 ]] || { usage >&2; exit 1; }; REVERT="$2"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; exit 1 ;;
    esac
    shift
done

live() { [[ -z "$ROOT" ]]; }

# Site values may come from the environment (the playbook) or a tailoring file (oscap
# generate fix): refuse any that is not of its type before using it.
check_values() {
    local name
    [[ "$READ_AHEAD_MIN_KB" =~ ^[0-9]{1,9}$ ]] || { echo "sascheck-fix: read-ahead minimum '$READ_AHEAD_MIN_KB' is not a number" >&2; exit 1; }
    [[ "$DIRTY_RATIO" =~ ^[0-9]{1,3}$ ]] || { echo "sascheck-fix: dirty ratio '$DIRTY_RATIO' is not a number" >&2; exit 1; }
    [[ "$STORAGE_CACHE_PROTECTED" =~ ^(true|false)$ ]] || { echo "sascheck-fix: storage_cache_protected must be true or false" >&2; exit 1; }
    (( ${#ALLOWED_SCHEDULERS[@]} > 0 )) || { echo "sascheck-fix: no allowed scheduler" >&2; exit 1; }
    for name in "${ALLOWED_SCHEDULERS[@]}"; do
        [[ "$name" =~ ^[a-z][a-z0-9_-]{0,31}$ ]] || { echo "sascheck-fix: '$name' is not a scheduler name" >&2; exit 1; }
    done
}
check_values
say() { if (( PLAN )); then printf '%s\n' "$*" >&2; else printf '%s\n' "$*"; fi; }
warn() { printf 'sascheck-fix: %s\n' "$*" >&2; }

# A JSON string (control characters other than tab and newline are dropped).
json() {
    local text
    text="$(printf '%s' "$1" | tr -d '\000-\010\013\014\016-\037')"
    text="${text//\\/\\\\}"
    text="${text//\"/\\\"}"
    text="${text//$'\n'/\\n}"
    text="${text//$'\t'/\\t}"
    printf '"%s"' "$text"
}

# Account for a change. Returns 0 when the caller should make it now; in dry-run mode
# it only says what would happen, in plan mode it records it (KIND, then JSON fields).
act() {
    local kind="$1" description="$2" fields="$3" item
    CHANGES=$((CHANGES + 1))
    if (( PLAN )); then
        item="{\"rule\":$(json "$CURRENT_RULE"),\"kind\":$(json "$kind")"
        item+=",\"description\":$(json "$description")${fields:+,$fields}}"
        PLAN_ITEMS+=("$item")
        return 1
    fi
    if (( DRY_RUN )); then
        say "would: $description"
        return 1
    fi
    say "changed: $description"
}

# Write a runtime value (sysfs, procfs) when it differs. Live only.
set_runtime() {
    local file="$1" value="$2" current old
    live || return 0
    [[ -w "$file" ]] || { warn "cannot write $file"; return 0; }
    current="$(<"$file")"
    if [[ "$current" == *"[$value]"* || "$current" == "$value" ]]; then
        return 0
    fi
    # A selection ("always madvise [never]") is restored by writing its selected word.
    if [[ "$current" =~ \[([^]]+)\] ]]; then old="${BASH_REMATCH[1]}"; else old="$current"; fi
    if act runtime "$file: $current -> $value" \
            "\"path\":$(json "$file"),\"value\":$(json "$value"),\"old\":$(json "$old")"; then
        record runtime "$file" "$old"
        printf '%s' "$value" > "$file"
    fi
}

# Offline, a path must stay inside the image once every link in it is followed: a link
# planted in the image (etc/sysctl.d -> /etc/sysctl.d) would make us edit this host.
confined() {
    local path="$1" real top
    live && return 0
    top="$(readlink -m -- "$ROOT")"
    real="$(readlink -m -- "$path")"
    if [[ "$real" == "$top" || "$real" == "$top"/* ]]; then return 0; fi
    warn "refused: ${path#"$ROOT"} resolves to $real, outside the image $ROOT"
    REFUSED=$((REFUSED + 1))
    return 1
}

# The manifest: one change a line, KIND, then the path and the datum hex-encoded (host
# paths may hold tabs and newlines; hex decodes without any shell evaluation).
hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }
unhex() {
    local hex="$1" escaped="" i
    for (( i = 0; i < ${#hex}; i += 2 )); do escaped+="\\x${hex:i:2}"; done
    printf '%b' "$escaped"
}
MANIFEST_FAILED=0
# The manifest, created on first use: a new name of its own, or the named one created with
# noclobber (O_EXCL) or appended to only when it is a regular file and no link.
open_manifest() {
    if [[ -z "$MANIFEST" ]]; then
        mkdir -p -- "$(dirname -- "$MANIFEST_TEMPLATE")" || return 1
        MANIFEST="$(mktemp --suffix=.manifest -- "$MANIFEST_TEMPLATE")" || { MANIFEST=""; return 1; }
    elif [[ -L "$MANIFEST" || ( -e "$MANIFEST" && ! -f "$MANIFEST" ) ]]; then
        return 1
    elif [[ ! -e "$MANIFEST" ]]; then
        mkdir -p -- "$(dirname -- "$MANIFEST")" && (set -C; : > "$MANIFEST") || return 1
    else
        return 0
    fi
    printf '# sascheck fix manifest: undo with: %s --revert %s\n' "$0" "$MANIFEST" >> "$MANIFEST"
}
record() {
    local kind="$1" path="$2" datum="${3:-}"
    # A manifest that cannot be written must not stop a run halfway through its changes.
    if ! { open_manifest &&
           printf '%s\t%s\t%s\n' "$kind" "$(hex "$path")" "$(hex "$datum")" >> "$MANIFEST"
         } 2>/dev/null; then
        (( MANIFEST_FAILED )) || warn "cannot write ${MANIFEST:-a manifest in ${MANIFEST_TEMPLATE%/*}}: --revert will not know this run's changes"
        MANIFEST_FAILED=1
    fi
}

# The directories mkdir -p would make for DIR, outermost first, one a line.
missing_dirs() {
    local dir="$1" missing=()
    while [[ ! -e "$dir" && "$dir" != / && "$dir" != . ]]; do
        missing=("$dir" "${missing[@]}")
        dir="$(dirname -- "$dir")"
    done
    (( ${#missing[@]} == 0 )) || printf '%s\n' "${missing[@]}"
}

# mkdir -p, recording each directory it makes (revert removes them when empty).
make_dirs() {
    local dir missing=()
    mapfile -t missing < <(missing_dirs "$1")
    mkdir -p -- "$1"
    for dir in "${missing[@]}"; do record dir "$dir"; done
}

# Back a file up once per run, beside it, keeping owner and mode. The name is made new
# (mktemp, O_EXCL) so that nothing planted under a predictable name is written through.
backup() {
    local file="$1" copy
    [[ -e "$file" && -z "${BACKED_UP[$file]:-}" ]] || return 0
    copy="$(mktemp --suffix=.bak -- "$file.sascheck-$STAMP.XXXXXX")"
    cp -p -- "$file" "$copy"
    BACKED_UP[$file]=1
    record file "$file" "$copy"
}

# In plan mode files are not written: later edits must see earlier ones, so the content
# planned for each file is kept here, and every rule that touched it is remembered.
declare -A PENDING=() PENDING_RULES=()
PENDING_ORDER=()

# A file's content as this run sees it (planned content first), with an "x" appended so
# that trailing newlines survive command substitution.
current_content() {
    local file="$1"
    if [[ -n "${PENDING[$file]+set}" ]]; then
        printf '%sx' "${PENDING[$file]}"
    elif [[ -e "$file" ]]; then
        cat -- "$file"
        printf x
    fi
}

# Replace a file's content atomically when it differs (temporary file + rename). The file
# keeps its mode, or gets MODE when given (an init script must stay executable); new files
# are 0644 unless MODE says otherwise.
declare -A PENDING_MODE=()
write_file() {
    local file="$1" content="$2" mode="${3:-}" temporary current_mode
    confined "$file" || return 0
    current_mode="${PENDING_MODE[$file]:-$(stat -c 0%a -- "$file" 2>/dev/null || echo 0644)}"
    if [[ -e "$file" || -n "${PENDING[$file]+set}" ]] && [[ "$(current_content "$file")" == "${content}x" ]] \
            && [[ -z "$mode" || "$current_mode" == "0${mode#0}" ]]; then
        return 0
    fi
    if (( PLAN )); then
        CHANGES=$((CHANGES + 1))
        [[ -n "${PENDING[$file]+set}" ]] || PENDING_ORDER+=("$file")
        PENDING[$file]="$content"
        PENDING_RULES[$file]+=" $CURRENT_RULE"
        PENDING_MODE[$file]="${mode:-$current_mode}"
        return 0
    fi
    if ! act file "write $file" ""; then
        # A dry run goes on as if written, so a later rule editing the file sees the change.
        if (( DRY_RUN )); then
            PENDING[$file]="$content"
            PENDING_MODE[$file]="${mode:-$current_mode}"
        fi
        return 0
    fi
    make_dirs "$(dirname -- "$file")"
    if [[ -e "$file" ]]; then backup "$file"; else record new "$file"; fi
    temporary="$(mktemp -- "$file.sascheck.XXXXXX")"
    printf '%s' "$content" > "$temporary"
    if [[ -e "$file" ]]; then
        chmod --reference="$file" -- "$temporary"
        chown --reference="$file" -- "$temporary" 2>/dev/null || true
    else
        chmod 0644 -- "$temporary"
    fi
    if [[ -n "$mode" ]]; then chmod "$mode" -- "$temporary"; fi
    mv -f -- "$temporary" "$file"
}

# A symbolic link, created when missing.
make_link() {
    local link="$1" target="$2"
    [[ -e "$link" || -L "$link" ]] && return 0
    confined "$(dirname -- "$link")" || return 0
    if act link "link $link -> $target" "\"path\":$(json "$link"),\"target\":$(json "$target")"; then
        make_dirs "$(dirname -- "$link")"
        record link "$link" ""
        ln -s -- "$target" "$link"
    fi
}

# Point an existing symbolic link at TARGET (what tuned-adm's unlink and symlink amount to).
replace_link() {
    local link="$1" target="$2" was
    confined "$(dirname -- "$link")" || return 0
    was="$(readlink -- "$link" 2>/dev/null || echo nothing)"
    if act link "link $link -> $target (was $was)" \
            "\"path\":$(json "$link"),\"target\":$(json "$target")"; then
        make_dirs "$(dirname -- "$link")"
        if [[ -L "$link" ]]; then record link "$link" "$was"; else record link "$link" ""; fi
        ln -sfn -- "$target" "$link"
    fi
}

# A command that changes the live system (systemctl, tuned-adm, grubby, dnf).
run_command() {
    local argv="" word
    for word in "$@"; do argv+="${argv:+,}$(json "$word")"; done
    if act command "$*" "\"argv\":[$argv]"; then record command "" "$*"; "$@"; fi
}

# Rewrite a file through awk; the awk program reads its parameters from ENVIRON so that
# host values (mount points with backslashes) are never reinterpreted.
edit_file() {
    local file="$1" program="$2" content
    confined "$file" || return 0
    [[ -f "$file" || -n "${PENDING[$file]+set}" ]] || return 0
    content="$(current_content "$file" | sed '$ s/x$//' | awk "$program"; printf x)"
    write_file "$file" "${content%x}"
}

in_list() {
    local needle="$1" item
    shift
    for item in "$@"; do
        if [[ "$item" == "$needle" ]]; then return 0; fi
    done
    return 1
}

# ---- the host's role: the same signals as sascheck's scanner (LAYOUT_* above) -----------
# A KVM host runs guests (rules/host_layout.py): a KVM vendor module in use, a running
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

# ---- SAS storage: file systems and the block devices below them ------------------------
# /proc/mounts escapes space, tab, newline and backslash as \NNN octal. Decoded exactly as
# the scanner decodes (scanner/parsers/mounts.py): \001 to \177, anything else as written.
unescape() {
    local text="$1" out="" before char
    while [[ "$text" == *\\* ]]; do
        before="${text%%\\*}"
        text="${text:${#before}+1}"
        if [[ "$text" =~ ^[01][0-7][0-7] && "${text:0:3}" != 000 ]]; then
            # shellcheck disable=SC2059  # the format is one checked octal escape
            printf -v char "\\${text:0:3}"
            out+="$before$char"
            text="${text:3}"
        else
            out+="$before\\"
        fi
    done
    printf '%s' "$out$text"
}

# A mount point as the scanner compares it: decoded, without trailing slashes.
mount_point() {
    local point
    point="$(unescape "$1"; printf x)"
    point="${point%x}"
    while [[ "$point" == */ && "$point" != / ]]; do point="${point%/}"; done
    printf '%s' "$point"
}

# The mount point holding a directory: the longest prefix; the last such mount wins.
mount_of() {
    local dir="$1" best="" device point rest decoded
    while read -r device point rest; do
        decoded="$(mount_point "$point")"
        if [[ "$decoded" == / || "$dir" == "$decoded" || "$dir" == "$decoded"/* ]]; then
            if (( ${#decoded} >= ${#best} )); then best="$decoded"; fi
        fi
    done < "$ROOT/proc/mounts"
    printf '%s' "$best"
}

# The device field of the last /proc/mounts entry for a mount point.
device_of() {
    local wanted="$1" found="" device point rest
    while read -r device point rest; do
        if [[ "$(mount_point "$point")" == "$wanted" ]]; then found="$(unescape "$device")"; fi
    done < "$ROOT/proc/mounts"
    printf '%s' "$found"
}

# /sys/block name of a mounted device (/dev/mapper/NAME, /dev/NAME), or nothing.
block_name() {
    local device="$1" dm
    if [[ "$device" == /dev/mapper/* ]]; then
        for dm in "$ROOT"/sys/block/dm-*; do
            if [[ -r "$dm/dm/name" && "$(<"$dm/dm/name")" == "${device#/dev/mapper/}" ]]; then
                basename -- "$dm"; return
            fi
        done
    elif [[ "$device" == /dev/* && "${device#/dev/}" != */* ]]; then
        if [[ -e "$ROOT/sys/class/block/${device#/dev/}" || -e "$ROOT/sys/block/${device#/dev/}" ]]; then
            printf '%s' "${device#/dev/}"
        fi
    fi
}

# The sysfs directory of a block device or partition, resolved inside the root.
sys_dir() {
    local name="$1" link
    for link in "$ROOT/sys/class/block/$name" "$ROOT/sys/block/$name"; do
        if [[ -e "$link" ]]; then readlink -f -- "$link"; return; fi
    done
}

# Every device carrying a device's I/O: itself, a partition's disk, slaves, depth first in
# the order of sascheck's BlockGraph.stack. Each device once, at most 4096 steps: an image's
# slaves/ may loop (dm-0 -> dm-1 -> dm-0) or nest deeply, so an explicit stack (children
# pushed in reverse) replaces recursion.
stack_of() {
    local stack=("$1") seen=" " name dir slave children index steps=0
    while (( ${#stack[@]} > 0 && steps < 4096 )); do
        steps=$((steps + 1))
        name="${stack[${#stack[@]}-1]}"
        unset 'stack[${#stack[@]}-1]'
        [[ -n "$name" && "$seen" != *" $name "* ]] || continue
        seen+="$name "
        printf '%s\n' "$name"
        dir="$(sys_dir "$name")"
        [[ -n "$dir" ]] || continue
        children=()
        if [[ -e "$dir/partition" ]]; then children+=("$(basename -- "$(dirname -- "$dir")")"); fi
        for slave in "$dir"/slaves/*; do
            if [[ -e "$slave" || -L "$slave" ]]; then children+=("$(basename -- "$slave")"); fi
        done
        for (( index = ${#children[@]} - 1; index >= 0; index-- )); do
            stack+=("${children[index]}")
        done
    done
}

# Mount points of the SAS file systems, one per line, each once.
sas_mounts() {
    local dir
    [[ -r "$ROOT/proc/mounts" ]] || return 0
    for dir in "${SAS_DIRS[@]}"; do
        if [[ "$dir" == /* ]]; then mount_of "$dir"; printf '\n'; fi
    done | awk 'NF && !seen[$0]++'
}

# Devices below the SAS file systems ("stack"), or the devices they mount, with a
# partition replaced by its disk ("queue"), each once.
sas_devices() {
    local which="$1" point name dir
    while IFS= read -r point; do
        name="$(block_name "$(device_of "$point")")"
        [[ -n "$name" ]] || continue
        if [[ "$which" == stack ]]; then
            stack_of "$name"
        else
            dir="$(sys_dir "$name")"
            if [[ -e "$dir/partition" ]]; then basename -- "$(dirname -- "$dir")"; else printf '%s\n' "$name"; fi
        fi
    done < <(sas_mounts) | awk 'NF && !seen[$0]++'
}

# The bdi (major:minor in /proc/self/mountinfo) of each SAS file system on NFS.
sas_network_bdis() {
    local point type _id _parent number _root mounted rest
    while IFS= read -r point; do
        type="$(mount_type "$point")"
        [[ " $LAYOUT_NETWORK_FS_TYPES " == *" $type "* ]] || continue
        while read -r _id _parent number _root mounted rest; do
            if [[ "$(mount_point "$mounted")" == "$point" && "$number" =~ ^[0-9]+:[0-9]+$ ]]; then
                printf '%s\n' "$number"
            fi
        done < "$ROOT/proc/self/mountinfo"
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
    local name="$1" dir value key
    dir="$(sys_dir "$name")"
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
        printf 'KERNEL=="%s"' "$name"
    else
        warn "a device under the SAS file systems has no safe udev match; set it by hand"
    fi
}

# The scheduler for tuned's [disk] elevator: the first allowed one in the kernel's own
# vocabulary (deadline/noop before blk-mq, mq-deadline/none after).
tuned_elevator() {
    local release legacy=0 name
    release="$(kernel_release)"
    if [[ "$release" =~ $LAYOUT_LEGACY_KERNEL_RE ]]; then legacy=1; fi
    for name in "${ALLOWED_SCHEDULERS[@]}"; do
        if [[ " $LAYOUT_LEGACY_SCHEDULERS " == *" $name "* ]]; then
            (( legacy )) && { printf '%s' "$name"; return; }
        else
            (( legacy )) || { printf '%s' "$name"; return; }
        fi
    done
    printf '%s' "${ALLOWED_SCHEDULERS[0]}"
}

# The first allowed scheduler a device offers.
preferred_scheduler() {
    local offered wanted
    offered=" $(tr -d '[]' < "$1") "
    for wanted in "${ALLOWED_SCHEDULERS[@]}"; do
        if [[ "$offered" == *" $wanted "* ]]; then printf '%s' "$wanted"; return; fi
    done
}

# Add or replace a kernel argument in the lines of a boot file that carry arguments; with
# MODE "remove", take out every NAME=VALUE word equal to it instead.
set_kernel_arg() {
    local file="$1" pattern="$2" argument="$3" mode="${4:-set}"
    # shellcheck disable=SC2016  # the awk program is single-quoted on purpose
    KARG_PATTERN="$pattern" KARG_NAME="${argument%%=*}" KARG="$argument" KARG_MODE="$mode" \
        edit_file "$file" '
        function fix(text,    n, words, i, out, remove) {
            n = split(text, words, /[ \t]+/); out = ""; remove = ENVIRON["KARG_MODE"] == "remove"
            for (i = 1; i <= n; i++) {
                if (words[i] == "") continue
                if (remove ? words[i] == ENVIRON["KARG"] \
                           : index(words[i], ENVIRON["KARG_NAME"] "=") == 1) continue
                out = out (out == "" ? "" : " ") words[i]
            }
            if (remove) return out
            return out (out == "" ? "" : " ") ENVIRON["KARG"]
        }
        $0 ~ ENVIRON["KARG_PATTERN"] {
            if (match($0, /"[^"]*"/) || match($0, /\047[^\047]*\047/)) {
                $0 = substr($0, 1, RSTART) fix(substr($0, RSTART + 1, RLENGTH - 2)) substr($0, RSTART + RLENGTH - 1)
            } else if (match($0, /^[ \t]*GRUB_CMDLINE_LINUX=/)) {
                $0 = substr($0, 1, RLENGTH) "\"" fix(substr($0, RLENGTH + 1)) "\""
            } else if (match($0, /^[ \t]*options[ \t]+/)) {
                $0 = substr($0, 1, RLENGTH) fix(substr($0, RLENGTH + 1))
            } else if (match($0, /^[ \t]*(kernel|linux|linux16|linuxefi)[ \t]+[^ \t]+[ \t]*/)) {
                $0 = substr($0, 1, RLENGTH) fix(substr($0, RLENGTH + 1))
            } else {
                $0 = fix($0)
            }
        }
        { print }'
}

# Make a kernel argument part of every boot entry and of the defaults new kernels get
# (MODE "remove": take it out of them all).
persist_kernel_arg() {
    local argument="$1" mode="${2:-set}" entry
    if live && command -v grubby >/dev/null 2>&1; then
        if [[ "$mode" == remove ]]; then
            if grubby --info=ALL 2>/dev/null | grep -E '^args=' | grep -Eq -- "[\" ]${argument}[\" ]"; then
                run_command grubby --update-kernel=ALL --remove-args="$argument"
            fi
        elif grubby --info=ALL 2>/dev/null | grep -E '^args=' | grep -vq -- "$argument"; then
            run_command grubby --update-kernel=ALL --args="$argument"
        fi
    else
        for entry in "$ROOT$LAYOUT_BLS_ENTRIES"/*.conf; do
            if [[ -f "$entry" ]]; then set_kernel_arg "$entry" '^[ \t]*options[ \t]' "$argument" "$mode"; fi
        done
        # A GRUB 2 menu (RHEL 7, BIOS or EFI): its linux lines, as grubby would edit them
        # (the template below makes grub2-mkconfig write the same).
        for entry in "$ROOT$LAYOUT_GRUB2_CFG" $LAYOUT_EFI_VENDOR_DIRS; do
            [[ "$entry" == "$ROOT$LAYOUT_GRUB2_CFG" ]] || entry="$ROOT$entry/grub.cfg"
            if [[ -f "$entry" && ! -L "$entry" ]]; then
                set_kernel_arg "$entry" '^[ \t]*linux(16|efi)?[ \t]' "$argument" "$mode"
            fi
        done
        for entry in $LAYOUT_LEGACY_GRUB_CONFS; do
            # One of them is grubby's link to the other, the live file: edit that file once.
            if [[ -f "$ROOT$entry" && ! -L "$ROOT$entry" ]]; then
                set_kernel_arg "$ROOT$entry" '^[ \t]*kernel[ \t]' "$argument" "$mode"
            fi
        done
    fi
    set_kernel_arg "$ROOT$LAYOUT_GRUB_DEFAULTS" '^[ \t]*GRUB_CMDLINE_LINUX=' "$argument" "$mode"
    set_kernel_arg "$ROOT$LAYOUT_KERNEL_CMDLINE" '.' "$argument" "$mode"
}

# A sysctl value every boot ends with (scanner/sysctl_boot.py's order): each line setting
# KEY in /etc/sysctl.conf and /etc/sysctl.d gets VALUE, since those are applied last and
# again by tuned's reapply_sysctl, and a file named to sort after the others (99-sysctl.conf,
# the link to sysctl.conf, included) holds it too.
persist_sysctl() {
    local key="$1" value="$2" file pattern etc="$ROOT${LAYOUT_SYSCTL_DIRS%% *}"
    pattern="^[[:space:]]*-?[[:space:]]*${key//./[./]}[[:space:]]*="
    for file in "$ROOT$LAYOUT_SYSCTL_CONF" "$etc"/*.conf; do
        [[ -f "$file" && ! -L "$file" ]] || continue  # 99-sysctl.conf links to sysctl.conf
        grep -Eqs -- "$pattern" "$file" || continue
        # shellcheck disable=SC2016  # the awk program is single-quoted on purpose
        SYSCTL_PATTERN="$pattern" SYSCTL_LINE="$key = $value" edit_file "$file" '
            $0 ~ ENVIRON["SYSCTL_PATTERN"] { $0 = ENVIRON["SYSCTL_LINE"] }
            { print }'
    done
    write_file "$etc/99-zz-sascheck.conf" "# Written by sascheck"$'\n'"$key = $value"$'\n'
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
                run_command lvchange --readahead "$sectors" "$vg/$lv"
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

# RHEL 5/6: a SysV service starts at boot when a run-level directory has its S<NN> link
# (what chkconfig NAME on makes; scanner/services.py reads it the same way).
sysv_started() {
    local directory link
    for directory in $LAYOUT_SYSV_RUNLEVEL_DIRS; do
        for link in "$ROOT$directory"/S[0-9][0-9]"$1"; do
            if [[ -e "$link" || -L "$link" ]]; then return 0; fi
        done
    done
    return 1
}

ktune_started() { sysv_started "$LAYOUT_KTUNE_SYSV"; }

# RHEL 5/6: ktune scripts whose start() multiplies every disk's read-ahead by less than 1
# (multiply_disk_readahead 0.25 belongs in stop()), after udev set it. Not rewritten (the
# script belongs to a tuned 0.2 profile): said.
ktune_lowers_read_ahead() {
    local script
    ktune_started || return 0
    for script in "$ROOT$LAYOUT_KTUNE_SCRIPTS"/*.sh; do
        [[ -f "$script" ]] || continue
        if awk '/^start\(\)/ { body = 1 } body && /^}/ { body = 0 }
                body && $1 == "multiply_disk_readahead" && $2 + 0 < 1 { found = 1 }
                END { exit !found }' "$script"; then
            warn "manual: ${script#"$ROOT"} (ktune) lowers every disk's read-ahead at each" \
                 "boot after udev: remove its multiply_disk_readahead line from start()"
        fi
    done
}

# Does the image (or this host) boot with systemd? RHEL 5 and 6 boot with SysV init.
uses_systemd() {
    if live; then [[ -d /run/systemd/system ]]; return; fi
    [[ -d "$ROOT/usr/lib/systemd/system" || -d "$ROOT/lib/systemd/system" ]]
}

# THP enabled and defrag never after every boot, written after everything that may turn
# them on (tuned's [vm], RHEL 6 ktune's enable_transparent_hugepages): a systemd unit
# ordered after tuned (RHEL 7+), else lines in rc.local, which SysV runs last (S99local).
THP_UNIT=sascheck-thp-never.service
THP_MARKER="# sascheck: Transparent Huge Pages never (SAS), after tuned and ktune"
persist_thp_never() {
    local dir commands="" rc="$ROOT${LAYOUT_INIT_SCRIPTS%% *}" current
    local units="${LAYOUT_SYSTEMD_UNIT_DIRS%% *}"
    for dir in $LAYOUT_THP_DIRS; do
        commands+="${commands:+; }if [ -d $dir ]; then echo never > $dir/enabled;"
        commands+=" echo never > $dir/defrag; fi"
    done
    if uses_systemd; then
        write_file "$ROOT$units/$THP_UNIT" "$THP_MARKER
[Unit]
Description=Transparent Huge Pages never for SAS (written by sascheck)
After=tuned.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c '$commands'

[Install]
WantedBy=multi-user.target
"
        make_link "$ROOT${LAYOUT_SYSTEMD_WANTS_DIRS%% *}/$THP_UNIT" "$units/$THP_UNIT"
        return 0
    fi
    current="$(current_content "$rc")"
    if [[ "$current" == *"$THP_MARKER"* ]]; then
        write_file "$rc" "${current%x}" 0755  # present: only make sure it runs
        return 0
    fi
    [[ -e "$rc" || -n "${PENDING[$rc]+set}" ]] || write_file "$rc" $'#!/bin/sh\n' 0755
    # Before a top-level exit, which would end the script before our lines.
    # shellcheck disable=SC2016  # the awk program is single-quoted on purpose
    THP_BLOCK="$THP_MARKER"$'\n'"${commands//; if/$'\n'if}" edit_file "$rc" '
        !done && /^exit([ \t]|$)/ { print ENVIRON["THP_BLOCK"]; done = 1 }
        { print }
        END { if (!done) print ENVIRON["THP_BLOCK"] }'
    current="$(current_content "$rc")"
    write_file "$rc" "${current%x}" 0755
}

# awk: fstab's octal escapes (\040 for a space) decoded, as the kernel writes them.
# shellcheck disable=SC2016  # the awk program is single-quoted on purpose
FSTAB_UNESCAPE='
        function unescape(text,    out, code) {
            out = ""
            while (match(text, /\\[0-7][0-7][0-7]/)) {
                code = (substr(text, RSTART + 1, 1) * 64) + (substr(text, RSTART + 2, 1) * 8) + substr(text, RSTART + 3, 1)
                out = out substr(text, 1, RSTART - 1) sprintf("%c", code)
                text = substr(text, RSTART + 4)
            }
            return out text
        }'

# Does an /etc/fstab line mount POINT at boot (not noauto)?
fstab_mounts() {
    [[ -f "$ROOT$LAYOUT_FSTAB" ]] || return 1
    # shellcheck disable=SC2016  # the awk program is single-quoted on purpose
    FSTAB_POINT="$1" awk "$FSTAB_UNESCAPE"'
        !/^[ \t]*#/ && NF >= 4 && unescape($2) == ENVIRON["FSTAB_POINT"] && $4 !~ /(^|,)noauto(,|$)/ { found = 1 }
        END { exit !found }' "$ROOT$LAYOUT_FSTAB"
}

# Rewrite the options of fstab entries for a mount point (fstab escapes like /proc/mounts).
fstab_options() {
    local point="$1" remove="$2" add="$3"
    # shellcheck disable=SC2016  # the awk program is single-quoted on purpose
    FSTAB_POINT="$point" FSTAB_REMOVE="$remove" FSTAB_ADD="$add" edit_file "$ROOT$LAYOUT_FSTAB" '
'"$FSTAB_UNESCAPE"'
        !/^[ \t]*#/ && NF >= 4 && unescape($2) == ENVIRON["FSTAB_POINT"] {
            n = split($4, options, ","); out = ""; have = 0
            split(ENVIRON["FSTAB_REMOVE"], gone, ",")
            for (i = 1; i <= n; i++) {
                drop = 0
                for (g in gone) if (options[i] == gone[g]) drop = 1
                if (options[i] == ENVIRON["FSTAB_ADD"]) have = 1
                if (!drop) out = out (out == "" ? "" : ",") options[i]
            }
            if (!have && ENVIRON["FSTAB_ADD"] != "") out = out (out == "" ? "" : ",") ENVIRON["FSTAB_ADD"]
            if (out == "") out = "defaults"
            $4 = out
        }
        { print }'
}

remount() {
    local point="$1" options="$2"
    live || return 0
    if act remount "mount -o remount,$options $point" "\"path\":$(json "$point"),\"options\":$(json "remount,$options")"; then
        record command "" "mount -o remount,$options $point"
        mount -o "remount,$options" -- "$point"
    fi
}

# The end of a run: a summary, or in plan mode the plan as JSON.
finish() {
    local item rule entry body=""
    if (( PLAN )); then
        for item in "${PENDING_ORDER[@]}"; do
            for rule in ${PENDING_RULES[$item]}; do
                entry="{\"rule\":$(json "$rule"),\"kind\":\"file\",\"path\":$(json "$item"),"
                entry+="\"mode\":$(json "${PENDING_MODE[$item]}"),"
                entry+="\"description\":$(json "write $item"),\"content\":$(json "${PENDING[$item]}")}"
                PLAN_ITEMS+=("$entry")
            done
        done
        for item in "${PLAN_ITEMS[@]}"; do body+="${body:+,}$item"; done
        printf '{"role":%s,"actions":[%s]}\n' "$(json "$ROLE")" "$body"
    elif (( REFUSED > 0 )); then
        say "$CHANGES changes, $REFUSED refused (see above)"
        exit 1
    elif (( CHANGES == 0 )); then
        say "no changes"
    elif (( DRY_RUN )); then
        say "$CHANGES changes would be made"
    else
        say "$CHANGES changes made"
        if [[ -e "$MANIFEST" ]]; then say "recorded in $MANIFEST: undo with $0 --revert $MANIFEST"; fi
    fi
}

# Whether the last /proc/mounts entry for a mount point has an option (whole tokens).
mount_has_option() {
    local wanted="$1" option="$2" found=1 device point type options rest
    while read -r device point type options rest; do
        if [[ "$(mount_point "$point")" == "$wanted" ]]; then
            found=1
            if [[ ",$options," == *",$option,"* ]]; then found=0; fi
        fi
    done < "$ROOT/proc/mounts"
    return "$found"
}

mount_type() {
    local wanted="$1" found="" device point type rest
    while read -r device point type rest; do
        if [[ "$(mount_point "$point")" == "$wanted" ]]; then found="$type"; fi
    done < "$ROOT/proc/mounts"
    printf '%s' "$found"
}

kernel_release() { cat "$ROOT/proc/sys/kernel/osrelease" 2>/dev/null || uname -r; }

# RHEL 5 has no tuned: its ktune service is the throughput tuning; start it at every boot.
apply_rhel5_ktune() {
    if ktune_started; then return 0; fi
    if live && [[ ! -e /etc/rc.d/init.d/ktune ]]; then
        if [[ "$INSTALL_TUNED" == yes ]]; then run_command yum -y install ktune
        else warn "$CURRENT_RULE: ktune is not installed; install it (yum install ktune), or run" \
                  "with SASCHECK_INSTALL_TUNED=yes"; return 0; fi
    fi
    if live; then
        run_command chkconfig ktune on
        run_command service ktune start
    else
        warn "manual: $CURRENT_RULE: this RHEL 5 image has no tuned; on the running host:" \
             "chkconfig ktune on; service ktune start"
    fi
}

# `tuned-adm profile NAME` of tuned 0.2 (RHEL 5, 6). Live, tuned-adm itself; offline, the
# files it changes (tuned_adm.py at v0.2.22): the name in active-profile and links to the
# profile's ktune.sh, sysctl.ktune, ktune.sysconfig and tuned.conf. A regular file where a
# link belongs is the site's own and is left alone, as are the start links chkconfig makes.
activate_tuned02_profile() {
    local name="$1" profile="$LAYOUT_TUNED02_PROFILES/$1" pair file link
    if [[ ! "$name" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]*$ ]]; then
        warn "$CURRENT_RULE: refused a tuned profile name that is not a plain name"
        return 1
    fi
    if [[ ! -d "$ROOT$profile" ]]; then
        warn "$CURRENT_RULE: tuned 0.2 has no profile $name in $LAYOUT_TUNED02_PROFILES"
        return 1
    fi
    if live; then
        run_command tuned-adm profile "$name"
        return 0
    fi
    write_file "$ROOT$LAYOUT_TUNED02_ACTIVE" "$name"$'\n'
    for pair in $LAYOUT_TUNED02_LINKS; do
        file="${pair%%:*}" link="${pair#*:}"
        if [[ ! -e "$ROOT$profile/$file" ]]; then
            if [[ -L "$ROOT$link" ]]; then
                warn "manual: $CURRENT_RULE: $name has no $file; remove the link $link"
            fi
            continue
        fi
        [[ "$(readlink -- "$ROOT$link" 2>/dev/null)" == "$profile/$file" ]] && continue
        if [[ -e "$ROOT$link" && ! -L "$ROOT$link" ]]; then
            warn "manual: $CURRENT_RULE: $link is the site's own file, not tuned-adm's link:" \
                 "give it the settings of $profile/$file"
        elif [[ -L "$ROOT$link" ]]; then
            replace_link "$ROOT$link" "$profile/$file"
        else
            make_link "$ROOT$link" "$profile/$file"
        fi
    done
    if ! ktune_started || ! sysv_started tuned; then
        warn "manual: $CURRENT_RULE: on the running host: chkconfig tuned on; chkconfig ktune on"
    fi
}

# RHEL 5/6: the active tuned 0.2 profile's ktune.sh (tuned-adm's link) remounts every local
# file system nobarrier at boot.
ktune_profile_remounts_nobarrier() {
    local script="$ROOT$LAYOUT_KTUNE_SCRIPTS/tunedadm.sh"
    ktune_started && [[ -f "$script" ]] && grep -Eqs "$LAYOUT_KTUNE_NOBARRIER" "$script"
}

# The devices the SAS file systems mount read ahead at least the minimum now (live only).
raise_sas_read_ahead_now() {
    local name file current
    while IFS= read -r name; do
        file="$ROOT/sys/block/$name/queue/read_ahead_kb"
        [[ -r "$file" ]] || continue
        current="$(<"$file")"
        if [[ "$current" =~ ^[0-9]+$ ]] && (( current < READ_AHEAD_MIN_KB )); then
            set_runtime "$file" "$READ_AHEAD_MIN_KB"
        fi
    done < <(sas_devices queue)
}

# Scheduler and read-ahead for the devices under the SAS file systems at every boot: a udev
# rule (read-ahead only ever raised); with no SAS device known, the tuned profile.
persist_sas_io_tuning() {
    local rules="" name file wanted match value current
    while IFS= read -r name; do
        file="$ROOT/sys/block/$name/queue/scheduler"
        if [[ ! -r "$file" ]] || ! grep -q '\[' "$file"; then
            continue
        fi
        wanted="$(preferred_scheduler "$file")"
        match="$(udev_match "$name")"
        if [[ -n "$wanted" && -n "$match" ]]; then
            rules+="ACTION==\"add|change\", SUBSYSTEM==\"block\", ENV{DEVTYPE}==\"disk\", $match, ATTR{queue/scheduler}=\"$wanted\""$'\n'
        fi
    done < <(sas_devices stack)
    while IFS= read -r name; do
        match="$(udev_match "$name")"
        [[ -n "$match" ]] || continue
        # Only ever raised: a device that reads ahead more keeps its value.
        value="$READ_AHEAD_MIN_KB"
        current="$(cat "$ROOT/sys/block/$name/queue/read_ahead_kb" 2>/dev/null || true)"
        if [[ "$current" =~ ^[0-9]+$ ]] && (( current > value )); then value="$current"; fi
        rules+="ACTION==\"add|change\", SUBSYSTEM==\"block\", ENV{DEVTYPE}==\"disk\", $match, ATTR{queue/read_ahead_kb}=\"$value\""$'\n'
    done < <(sas_devices queue)
    if [[ -n "$rules" ]]; then
        write_file "$ROOT${LAYOUT_UDEV_RULES_DIRS%% *}/99-sascheck-io.rules" \
            "# Written by sascheck: scheduler and read-ahead for the devices under SAS file systems."$'\n'"$rules"
    else
        # No SAS device known (a KVM host, say): tuned's [disk] settings cover every disk.
        say "$CURRENT_RULE: no device found under the SAS file systems; using the tuned profile"
        apply_tuned_profile
    fi
}

# Install the sas-performance tuned profile, enable tuned at boot and activate it.
apply_tuned_profile() {
    local tuned_ready=1 wants
    if [[ "$(kernel_release)" == "$LAYOUT_RHEL5_KERNEL_PREFIX"* \
          && ! -e "$ROOT/usr/sbin/tuned" && ! -e "$ROOT/usr/bin/tuned-adm" ]]; then
        apply_rhel5_ktune
        return 0
    fi
    if [[ ! -e "$ROOT/usr/sbin/tuned" && ! -e "$ROOT/usr/bin/tuned-adm" ]]; then
        if [[ "$INSTALL_TUNED" == yes ]] && live; then
            if command -v dnf >/dev/null 2>&1; then run_command dnf -y install tuned; else run_command yum -y install tuned; fi
        else
            warn "$CURRENT_RULE: tuned is not installed; install it, or run with SASCHECK_INSTALL_TUNED=yes"
            tuned_ready=0
        fi
    fi
    if (( tuned_ready )) && ! uses_systemd; then
        # RHEL 5/6: a shipped tuned 0.2 profile, as tuned-adm activates it; chkconfig and
        # service, never systemctl.
        if live; then
            run_command chkconfig tuned on
            run_command chkconfig ktune on
        fi
        activate_tuned02_profile "$TUNED_SYSV_PROFILE" || true
        return 0
    fi
    if (( tuned_ready )); then
        local before="$CHANGES"
        write_file "$ROOT/etc/tuned/$TUNED_PROFILE_NAME/tuned.conf" "$TUNED_PROFILE"
        if live; then
            if ! systemctl is-enabled --quiet tuned 2>/dev/null; then
                run_command systemctl enable --now tuned
            fi
            # Activate it, and again when its content changed: tuned reads it only then.
            if (( CHANGES > before )) \
                || [[ "$(tuned-adm active 2>/dev/null)" != *": $TUNED_PROFILE_NAME"* ]]; then
                run_command tuned-adm profile "$TUNED_PROFILE_NAME"
            fi
        else
            wants="$ROOT${LAYOUT_SYSTEMD_WANTS_DIRS%% *}/tuned.service"
            make_link "$wants" /usr/lib/systemd/system/tuned.service
            # What tuned-adm profile would write, so the image boots with the profile.
            write_file "$ROOT${LAYOUT_TUNED_ACTIVE_FILES%% *}" "$TUNED_PROFILE_NAME"$'\n'
            write_file "$ROOT/etc/tuned/profile_mode" "manual"$'\n'
        fi
    fi
}

# --revert MANIFEST: undo a run's changes, last first. Backups go back into place (content,
# mode and owner), files and links the run made are removed, replaced links point where they
# did, runtime values get their old value; commands (grubby, tuned-adm, a remount) cannot be
# undone blindly and are listed. Running it again changes nothing more. Offline, nothing
# outside the image is touched whatever the manifest says, even by an image that changes
# while it runs: each change is made from inside its directory (cd -P, checked once there),
# by base name, so a directory swapped for a link after the check redirects nothing.

# Run a command in PATH's directory, confined; the command gets the base name.
in_directory() {
    local path="$1" directory here top
    shift
    directory="$(dirname -- "$path")"
    case "${path##*/}" in ""|.|..) warn "refused: $path names no file"; return 3 ;; esac
    (
        cd -P -- "$directory" 2>/dev/null || exit 1
        here="$(pwd -P)"
        if ! live; then
            top="$(readlink -m -- "$ROOT")"
            if [[ "$here" != "$top" && "$here" != "$top"/* ]]; then
                warn "refused: ${directory#"$ROOT"} is $here once entered, outside the image $ROOT"
                exit 3
            fi
        fi
        "$@" "./${path##*/}"
    )
}

# A manifest line's three tab-separated fields (an empty path field kept: IFS=$'\t' would
# collapse it, tab being IFS white space, and shift the datum into the path).
split_line() {
    local line="$1" rest
    LINE_KIND="${line%%$'\t'*}"
    rest="${line#*$'\t'}"
    LINE_PATH="${rest%%$'\t'*}"
    LINE_DATUM="${rest#*$'\t'}"
    [[ "$line" == *$'\t'*$'\t'* ]]
}

# Runtime values are restored only under /proc/sys and /sys, whatever the manifest names.
runtime_path() {
    local real
    [[ "$1" =~ ^/(proc/sys|sys)/ && "$1" != *..* ]] || return 1
    real="$(readlink -e -- "$1")" || return 1
    [[ "$real" =~ ^/(proc/sys|sys)/ ]]
}

restore_backup() { [[ -f "$1" && ! -L "$1" ]] && mv -fT -- "$1" "$2"; }  # -T: never into a directory
remove_new() { if [[ -e "$1" || -L "$1" ]]; then rm -f -- "$1"; else return 1; fi; }
remove_empty_dir() { [[ -d "$1" && ! -L "$1" ]] && rmdir -- "$1" 2>/dev/null; }
remove_link() { [[ -L "$1" ]] && rm -f -- "$1"; }
relink() { [[ "$(readlink -- "$2" 2>/dev/null)" != "$1" ]] && ln -sfnT -- "$1" "$2"; }

revert() {
    local manifest="$1" kind path datum lines=() line index undone=0
    [[ -f "$manifest" ]] || { warn "no manifest $manifest"; return 1; }
    while IFS= read -r line; do
        [[ "$line" == \#* || -z "$line" ]] && continue
        if ! split_line "$line" || [[ ! "$LINE_PATH" =~ ^[0-9a-f]*$ || ! "$LINE_DATUM" =~ ^[0-9a-f]*$ ]]; then
            warn "skipped a malformed line"; continue
        fi
        lines+=("$line")
    done < "$manifest"
    for (( index = ${#lines[@]} - 1; index >= 0; index-- )); do
        split_line "${lines[index]}"
        kind="$LINE_KIND"
        path="$(unhex "$LINE_PATH"; printf x)" datum="$(unhex "$LINE_DATUM"; printf x)"
        path="${path%x}" datum="${datum%x}"
        # A link is judged by where it stands, not where it points (an absolute target is
        # the image's own path, which resolves outside it from here).
        if [[ "$kind" == link ]]; then
            confined "$(dirname -- "$path")" || continue
        elif [[ -n "$path" && "$kind" != runtime ]] && ! confined "$path"; then
            continue
        fi
        case "$kind" in
            file) # The backup is made beside the file: same directory, both by base name.
                  if [[ "$(dirname -- "$datum")" != "$(dirname -- "$path")" ]]; then
                      warn "skipped a backup that is not beside its file: $datum"
                  elif [[ -e "$datum" ]] && in_directory "$path" restore_backup "./${datum##*/}"; then
                      say "restored $path"; undone=$((undone + 1)); fi ;;
            new) if in_directory "$path" remove_new; then
                     say "removed $path"; undone=$((undone + 1)); fi ;;
            dir) if in_directory "$path" remove_empty_dir; then
                     say "removed $path/"; undone=$((undone + 1)); fi ;;
            link) if [[ -z "$datum" ]]; then
                      if in_directory "$path" remove_link; then say "removed $path"; undone=$((undone + 1)); fi
                  elif in_directory "$path" relink "$datum"; then
                      say "relinked $path -> $datum"; undone=$((undone + 1))
                  fi ;;
            runtime) if ! runtime_path "$path"; then
                         warn "skipped a runtime value outside /proc/sys and /sys: $path"
                     elif live && [[ -w "$path" && "$(<"$path")" != *"[$datum]"* && "$(<"$path")" != "$datum" ]]; then
                         printf '%s' "$datum" > "$path"; say "restored $path: $datum"; undone=$((undone + 1)); fi ;;
            command) warn "manual: undo by hand if needed: $datum" ;;
            *) warn "skipped an unknown change: $kind" ;;
        esac
    done
    if (( undone == 0 )); then say "nothing to revert"; else say "$undone changes reverted"; fi
}

if [[ -n "$REVERT" ]]; then
    revert "$REVERT"
    exit $?
fi

# SASCHECK_RECORD_KIND: the playbook records a change of its own (KIND PATH DATUM from
# SASCHECK_RECORD_PATH and _DATUM) in the manifest, as a run of this script would; "dirs"
# records the directories it is about to make for PATH.
if [[ -n "$RECORD_KIND" ]]; then
    case "$RECORD_KIND" in
        dirs) mapfile -t RECORDED < <(missing_dirs "${SASCHECK_RECORD_PATH:-}")
              for dir in "${RECORDED[@]}"; do record dir "$dir"; done ;;
        runtime|file|new|link|command)
              record "$RECORD_KIND" "${SASCHECK_RECORD_PATH:-}" "${SASCHECK_RECORD_DATUM:-}" ;;
        *) warn "cannot record a change of kind $RECORD_KIND"; exit 1 ;;
    esac
    (( MANIFEST_FAILED == 0 ))
    exit $?
fi
