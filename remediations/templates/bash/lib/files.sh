# ---- files.sh: files and the manifest: confinement to an offline image, backups, atomic writes,
#      links, commands, plan mode's pending content
# Offline, a path must stay inside the image once every link in it is followed: a link
# planted in the image (etc/sysctl.d -> /etc/sysctl.d) would make us edit this host.
# The image's own resolved path is read once (the run's ROOT never changes); each path
# is resolved anew, as the image may change under us.
CONFINED_TOP=""
confined() {
    local path="$1" real
    live && return 0
    [[ -n "$CONFINED_TOP" ]] || CONFINED_TOP="$(readlink -m -- "$ROOT")"
    real="$(readlink -m -- "$path")"
    if [[ "$real" == "$CONFINED_TOP" || "$real" == "$CONFINED_TOP"/* ]]; then return 0; fi
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
# mktemp with a suffix; RHEL 5's mktemp (1.5) has no --suffix, and its names end in the
# random part.
make_temp() { mktemp --suffix="$2" -- "$1" 2>/dev/null || mktemp "$1"; }

# The manifest, created on first use: a new name of its own, or the named one created with
# noclobber (O_EXCL) or appended to only when it is a regular file and no link.
open_manifest() {
    if [[ -z "$MANIFEST" ]]; then
        mkdir -p -- "$(dirname -- "$MANIFEST_TEMPLATE")" || return 1
        MANIFEST="$(make_temp "$MANIFEST_TEMPLATE" .manifest)" || { MANIFEST=""; return 1; }
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
        missing=("$dir" ${missing[@]+"${missing[@]}"})
        dir="$(dirname -- "$dir")"
    done
    (( ${#missing[@]} == 0 )) || printf '%s\n' "${missing[@]}"
}

# mkdir -p, recording each directory it makes (revert removes them when empty).
make_dirs() {
    local dir missing=()
    while IFS= read -r dir; do missing+=("$dir"); done < <(missing_dirs "$1")
    mkdir -p -- "$1"
    for dir in ${missing[@]+"${missing[@]}"}; do record dir "$dir"; done
}

# Back a file up once per run, beside it, keeping owner and mode. The name is made new
# (mktemp, O_EXCL) so that nothing planted under a predictable name is written through.
backup() {
    local file="$1" copy
    [[ -e "$file" && "$BACKED_UP" != *$'\n'"$file"$'\n'* ]] || return 0
    copy="$(make_temp "$file.sascheck-$STAMP.XXXXXX" .bak)"
    cp -p -- "$file" "$copy"
    BACKED_UP+="$file"$'\n'
    record file "$file" "$copy"
}

# In plan mode files are not written: later edits must see earlier ones, so the content
# planned for each file is kept here, and every rule that touched it is remembered.
# Parallel lists (bash 3.2, RHEL 5's, has no associative arrays): a file, its planned
# content and mode, and the rules that touched it.
PENDING_FILES=() PENDING_CONTENT=() PENDING_MODES=() PENDING_RULES=()
PENDING_AT=0
# Sets PENDING_AT to FILE's place in the lists; false when nothing is planned for it.
pending_at() {
    local index
    for (( index = 0; index < ${#PENDING_FILES[@]}; index++ )); do
        if [[ "${PENDING_FILES[index]}" == "$1" ]]; then PENDING_AT=$index; return 0; fi
    done
    return 1
}
# Plan FILE's CONTENT and MODE (plan mode, and a dry run, which goes on as if written).
pending_set() {
    if ! pending_at "$1"; then
        PENDING_AT=${#PENDING_FILES[@]}
        PENDING_FILES+=("$1") PENDING_RULES+=("")
    fi
    PENDING_CONTENT[PENDING_AT]="$2"
    PENDING_MODES[PENDING_AT]="$3"
}

# A file's content as this run sees it (planned content first), with an "x" appended so
# that trailing newlines survive command substitution.
current_content() {
    local file="$1"
    if pending_at "$file"; then
        printf '%sx' "${PENDING_CONTENT[PENDING_AT]}"
    elif [[ -e "$file" ]]; then
        cat -- "$file"
        printf x
    fi
}

# Replace a file's content atomically when it differs (temporary file + rename). The file
# keeps its mode, or gets MODE when given (an init script must stay executable); new files
# are 0644 unless MODE says otherwise.
write_file() {
    local file="$1" content="$2" mode="${3:-}" temporary current_mode
    confined "$file" || return 0
    if pending_at "$file"; then current_mode="${PENDING_MODES[PENDING_AT]}"
    else current_mode="$(stat -c 0%a -- "$file" 2>/dev/null || echo 0644)"; fi
    if { [[ -e "$file" ]] || pending_at "$file"; } && [[ "$(current_content "$file")" == "${content}x" ]] \
            && [[ -z "$mode" || "$current_mode" == "0${mode#0}" ]]; then
        return 0
    fi
    if (( PLAN )); then
        CHANGES=$((CHANGES + 1))
        pending_set "$file" "$content" "${mode:-$current_mode}"
        PENDING_RULES[PENDING_AT]+=" $CURRENT_RULE"
        return 0
    fi
    if ! act file "write $file" ""; then
        # A dry run goes on as if written, so a later rule editing the file sees the change.
        if (( DRY_RUN )); then
            pending_set "$file" "$content" "${mode:-$current_mode}"
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

# A command that changes the live system (systemctl, tuned-adm, grubby, lvchange, dnf). With
# UNDO set for the call (UNDO="words" run_command ...), the command that undoes it is
# recorded before it runs, for --revert (revert.sh's undo_allowed says which it will run).
UNDO=""
run_command() {
    local argv="" word undo="$UNDO" undo_json="" words=()
    for word in "$@"; do argv+="${argv:+,}$(json "$word")"; done
    read -r -a words <<< "$undo"
    for word in ${words[@]+"${words[@]}"}; do undo_json+="${undo_json:+,}$(json "$word")"; done
    if act command "$*" "\"argv\":[$argv]${undo:+,\"undo\":[$undo_json]}"; then
        if [[ -n "$undo" ]]; then record undo "" "$undo"; else record command "" "$*"; fi
        "$@"
    fi
}

# Rewrite a file through awk; the awk program reads its parameters from ENVIRON so that
# host values (mount points with backslashes) are never reinterpreted.
edit_file() {
    local file="$1" program="$2" content
    confined "$file" || return 0
    [[ -f "$file" ]] || pending_at "$file" || return 0
    content="$(current_content "$file" | sed '$ s/x$//' | awk "$program"; printf x)"
    write_file "$file" "${content%x}"
}
