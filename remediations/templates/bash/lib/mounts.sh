# ---- mounts.sh: SAS file systems: /proc/mounts and /etc/fstab as the scanner reads them, remounts
# /proc/mounts escapes space, tab, newline and backslash as \NNN octal. Decoded exactly as
# the scanner decodes (scanner/parsers/mounts.py): \001 to \177, anything else as written.
# Into the variable named first (printf -v), not printed: the loops over every mount line
# run it without a subshell (a process per line was most of a fix's running time). Its own
# locals start with _u_ so that no caller's name is one of them.
unescape_into() {
    local _u_text="$2" _u_out="" _u_before _u_char
    while [[ "$_u_text" == *\\* ]]; do
        _u_before="${_u_text%%\\*}"
        _u_text="${_u_text:${#_u_before}+1}"
        if [[ "$_u_text" =~ ^[01][0-7][0-7] && "${_u_text:0:3}" != 000 ]]; then
            # shellcheck disable=SC2059  # the format is one checked octal escape
            printf -v _u_char "\\${_u_text:0:3}"
            _u_out+="$_u_before$_u_char"
            _u_text="${_u_text:3}"
        else
            _u_out+="$_u_before\\"
        fi
    done
    printf -v "$1" '%s' "$_u_out$_u_text"
}

# A mount point as the scanner compares it, decoded and without trailing slashes, into the
# variable named first (as unescape_into).
mount_point_into() {
    local _m_point
    unescape_into _m_point "$2"
    while [[ "$_m_point" == */ && "$_m_point" != / ]]; do _m_point="${_m_point%/}"; done
    printf -v "$1" '%s' "$_m_point"
}

# A directory as the scanner places it (scanner/sources/hostroot.py HostRoot.resolve): each
# link on the way followed inside the root (an absolute target starts again at the root's
# top, ".." never climbs above it), at most 40 links; a missing part is kept as written.
# Without it a SAS directory reached through a link (viya4-iac-aws's /nvme/disk) would be
# placed on the file system holding the link, and that one's fstab line edited.
in_root_path() {
    local rest="${1#/}" placed="" part target hops=0
    while [[ -n "$rest" ]]; do
        part="${rest%%/*}"
        if [[ "$rest" == */* ]]; then rest="${rest#*/}"; else rest=""; fi
        case "$part" in
            ""|.) continue ;;
            ..) placed="${placed%/*}"; continue ;;
        esac
        if [[ -L "$ROOT$placed/$part" ]]; then
            if (( ++hops > 40 )); then printf '%s' "$1"; return 1; fi
            target="$(readlink -- "$ROOT$placed/$part")"
            if [[ "$target" == /* ]]; then placed=""; fi
            rest="${target#/}${rest:+/$rest}"
            continue
        fi
        placed="$placed/$part"
    done
    printf '%s' "${placed:-/}"
}

# The mount point holding a directory: the longest prefix; the last such mount wins.
mount_of() {
    local dir="$1" best="" device point rest decoded
    while read -r device point rest; do
        mount_point_into decoded "$point"
        if [[ "$decoded" == / || "$dir" == "$decoded" || "$dir" == "$decoded"/* ]]; then
            if (( ${#decoded} >= ${#best} )); then best="$decoded"; fi
        fi
    done < "$ROOT/proc/mounts"
    printf '%s' "$best"
}

# The device field of the last /proc/mounts entry for a mount point.
device_of() {
    local wanted="$1" found="" device point rest decoded
    while read -r device point rest; do
        mount_point_into decoded "$point"
        if [[ "$decoded" == "$wanted" ]]; then unescape_into found "$device"; fi
    done < "$ROOT/proc/mounts"
    printf '%s' "$found"
}

# A SAS directory that is not there (a typo such as /sasdta) would reach the root file
# system by walking up: it is dropped, said once, and nothing is changed for it (the scan
# reports it as an error).
drop_missing_sas_dirs() {
    local dir kept=()
    for dir in ${SAS_DIRS[@]+"${SAS_DIRS[@]}"}; do
        if [[ "$dir" == /* && ! -d "$ROOT$dir" ]]; then
            warn "refused: SAS directory $dir does not exist here; no file system is changed for it"
        else
            kept+=("$dir")
        fi
    done
    SAS_DIRS=(${kept[@]+"${kept[@]}"})
}

# The scratch directory (scratch_dirs) on a SAS file system that is throw-away scratch, as
# the scanner judges it: it holds a directory the site named scratch and no SAS DATA
# directory. Its barrier options are the site's: the fixes leave them.
scratch_of() {  # MOUNTPOINT
    local dir
    for dir in ${SAS_DATA_DIRS[@]+"${SAS_DATA_DIRS[@]}"}; do
        if dir_on "$dir" "$1"; then return 1; fi
    done
    for dir in ${SCRATCH_DIRS[@]+"${SCRATCH_DIRS[@]}"}; do
        if dir_on "$dir" "$1"; then printf '%s' "$dir"; return 0; fi
    done
    return 1
}
# Whether a directory that is there lies on the file system mounted at MOUNTPOINT (one that
# is not there is on none: never judged as the file system above it).
dir_on() {  # DIR MOUNTPOINT
    [[ "$1" == /* && -d "$ROOT$1" && "$(mount_of "$(in_root_path "$1")")" == "$2" ]]
}

# Mount points of the SAS file systems, one per line, each once.
sas_mounts() {
    local dir
    [[ -r "$ROOT/proc/mounts" ]] || return 0
    for dir in ${SAS_DIRS[@]+"${SAS_DIRS[@]}"}; do
        if [[ "$dir" == /* ]]; then mount_of "$(in_root_path "$dir")"; printf '\n'; fi
    done | awk 'NF && !seen[$0]++'
}

# The bdi (major:minor in /proc/self/mountinfo) of each SAS file system on NFS.
sas_network_bdis() {
    local point type _id _parent number _root mounted rest decoded
    while IFS= read -r point; do
        type="$(mount_type "$point")"
        [[ " $LAYOUT_NETWORK_FS_TYPES " == *" $type "* ]] || continue
        while read -r _id _parent number _root mounted rest; do
            mount_point_into decoded "$mounted"
            if [[ "$decoded" == "$point" && "$number" =~ ^[0-9]+:[0-9]+$ ]]; then
                printf '%s\n' "$number"
            fi
        done < "$ROOT/proc/self/mountinfo"
    done < <(sas_mounts) | awk 'NF && !seen[$0]++'
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
    local point="$1" options="$2" inverse fields
    live || return 0
    inverse="$(remount_inverse "$point" "$options")"
    fields="\"path\":$(json "$point"),\"options\":$(json "remount,$options")"
    if [[ -n "$inverse" ]]; then
        fields+=",\"undo\":[\"mount\",\"-o\",$(json "remount,$inverse"),$(json "$point")]"
    fi
    if act remount "mount -o remount,$options $point" "$fields"; then
        if [[ -n "$inverse" ]]; then record undo "" "mount -o remount,$inverse $point"
        else record command "" "mount -o remount,$options $point"; fi
        mount -o "remount,$options" -- "$point"
    fi
}

# The option that puts a remount back: the access-time mode the mount has now (/proc/mounts
# names relatime or noatime; strictatime shows as neither), the barrier it had.
remount_inverse() {
    local point="$1" options="$2"
    case "$options" in
        noatime) if mount_has_option "$point" relatime; then printf relatime
                 elif ! mount_has_option "$point" noatime; then printf strictatime; fi ;;
        barrier) printf nobarrier ;;
        barrier=1) printf barrier=0 ;;
    esac
}

# Whether the last /proc/mounts entry for a mount point has an option (whole tokens).
mount_has_option() {
    local wanted="$1" option="$2" found=1 device point type options rest decoded
    while read -r device point type options rest; do
        mount_point_into decoded "$point"
        if [[ "$decoded" == "$wanted" ]]; then
            found=1
            if [[ ",$options," == *",$option,"* ]]; then found=0; fi
        fi
    done < "$ROOT/proc/mounts"
    return "$found"
}

mount_type() {
    local wanted="$1" found="" device point type rest decoded
    while read -r device point type rest; do
        mount_point_into decoded "$point"
        if [[ "$decoded" == "$wanted" ]]; then found="$type"; fi
    done < "$ROOT/proc/mounts"
    printf '%s' "$found"
}
