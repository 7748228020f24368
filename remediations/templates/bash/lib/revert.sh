# ---- revert.sh: --revert MANIFEST, and changes the playbook records
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

# The commands --revert runs, whatever a manifest says: these shapes only, each word plain
# (what run_command's callers record as UNDO).
undo_allowed() {
    local shape
    for shape in '^tuned-adm (off|profile( [A-Za-z0-9_.-]+)+)$' \
                 '^grubby --update-kernel=ALL --(args|remove-args)=[A-Za-z0-9_.,:=-]+$' \
                 '^lvchange --readahead (auto|[0-9]+) [A-Za-z0-9_.+-]+/[A-Za-z0-9_.+-]+$' \
                 '^systemctl disable --now [A-Za-z0-9_.@-]+$' \
                 '^chkconfig [A-Za-z0-9_.-]+ off$' '^service [A-Za-z0-9_.-]+ stop$' \
                 '^mount -o remount,(relatime|strictatime|nobarrier|barrier=0) /[A-Za-z0-9_./-]*$'; do
        if [[ "$1" =~ $shape ]]; then return 0; fi
    done
    return 1
}

revert() {
    local manifest="$1" kind path datum lines=() line index undone=0 words=()
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
            command) warn "manual: the fix ran '$datum', which has no known inverse: undo it by hand if needed" ;;
            undo) if ! undo_allowed "$datum"; then
                      warn "skipped a command --revert does not run: $datum"
                  elif ! live; then
                      warn "manual: on the running host: $datum"
                  else
                      read -r -a words <<< "$datum"
                      if "${words[@]}"; then say "undone: $datum"; undone=$((undone + 1))
                      else warn "failed: $datum"; fi
                  fi ;;
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
        dirs) while IFS= read -r dir; do record dir "$dir"; done < <(missing_dirs "${SASCHECK_RECORD_PATH:-}") ;;
        runtime|file|new|link|command|undo)
              record "$RECORD_KIND" "${SASCHECK_RECORD_PATH:-}" "${SASCHECK_RECORD_DATUM:-}" ;;
        *) warn "cannot record a change of kind $RECORD_KIND"; exit 1 ;;
    esac
    (( MANIFEST_FAILED == 0 ))
    exit $?
fi
