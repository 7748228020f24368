# ---- revert.sh: --revert MANIFEST, and changes the playbook records
# --revert MANIFEST: undo a run's changes, last first. Backups go back into place (content,
# mode and owner), files and links the run made are removed, replaced links point where they
# did, runtime values get their old value; commands (grubby, tuned-adm, a remount) cannot be
# undone blindly and are listed. Running it again changes nothing more. Offline, nothing
# outside the image is touched whatever the manifest says, even by an image that changes
# while it runs: each change is made by IN_IMAGE below, which reaches its directory one
# component at a time through descriptors held inside the image (links resolved inside it,
# as the scanner reads a root) and acts there by base name. bash can only name paths, and
# a path checked is not the path used, so the offline revert needs a Python: RHEL 7's 2.7,
# RHEL 8's platform-python, RHEL 9's python3; where there is none it refuses.

# IN_IMAGE OP ROOT PATH [DATUM]: one change inside the image ROOT, at PATH (ROOT/...).
# OPs: restore (DATUM: the backup's base name, beside PATH), remove-new, remove-dir,
# remove-link, relink (DATUM: the link's target). Exit 0 done, 1 nothing to do, 3 refused.
# Python 2.6 to 3.x: no dir_fd (2.x lacks it), so each step is fchdir to a held descriptor
# and the next name is opened relative to it.
read -r -d '' IN_IMAGE <<'PYTHON' || true
import errno, os, random, stat, sys
def refuse(why):
    sys.stderr.write("sascheck-fix: refused: %s\n" % why)
    sys.exit(3)
def enter(root_fd, parts):
    held, todo, links = [root_fd], list(parts), 0
    while todo:
        part = todo.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if len(held) > 1:
                os.close(held.pop())
            continue
        os.fchdir(held[len(held) - 1])
        try:
            held.append(os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW))
            continue
        except OSError:
            error = sys.exc_info()[1]
            if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
        if not stat.S_ISLNK(os.lstat(part).st_mode):
            raise OSError(errno.ENOTDIR, "not a directory", part)
        links += 1
        if links > 40:
            raise OSError(errno.ELOOP, "too many links", part)
        target = os.readlink(part)
        if target.startswith("/"):
            held = held[:1]
        todo[:0] = target.split("/")
    os.fchdir(held[len(held) - 1])
def main(op, root, path, datum):
    root = root.rstrip("/") or "/"
    if not path.startswith(root + "/"):
        refuse("%r is not inside the image %r" % (path, root))
    parts = path[len(root) + 1:].split("/")
    name = parts.pop()
    if name in ("", ".", ".."):
        refuse("%r names no file" % path)
    try:
        enter(os.open(root, os.O_RDONLY | os.O_DIRECTORY), parts)
        mode = os.lstat(name).st_mode if os.path.lexists(name) else None
        if op == "restore":
            if "/" in datum or datum in ("", ".", "..") or not os.path.lexists(datum) \
                    or not stat.S_ISREG(os.lstat(datum).st_mode):
                return 1
            os.rename(datum, name)
        elif op == "remove-new":
            if mode is None:
                return 1
            os.unlink(name)
        elif op == "remove-dir":
            if mode is None or not stat.S_ISDIR(mode) or os.listdir(name):
                return 1
            os.rmdir(name)
        elif op == "remove-link":
            if mode is None or not stat.S_ISLNK(mode):
                return 1
            os.unlink(name)
        elif op == "relink":
            if mode is not None and stat.S_ISLNK(mode) and os.readlink(name) == datum:
                return 1
            if mode is not None and stat.S_ISDIR(mode):
                refuse("%r is a directory, not a link" % path)
            temporary = ".sascheck-relink-%x" % random.SystemRandom().getrandbits(48)
            os.symlink(datum, temporary)
            try:
                os.rename(temporary, name)
            except OSError:
                os.unlink(temporary)
                raise
        else:
            refuse("unknown change %r" % op)
    except OSError:
        error = sys.exc_info()[1]
        if error.errno != errno.ENOENT:  # gone already: nothing to do, as a second run finds
            sys.stderr.write("sascheck-fix: %s: %s\n" % (path, error.strerror or error))
        return 1
    return 0
sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], (sys.argv[4:] or [""])[0]))
PYTHON

# The Python that runs IN_IMAGE: python3 (RHEL 9), platform-python (RHEL 8), python2 (RHEL 7).
IMAGE_PYTHON=""
image_python() {
    local candidate
    if [[ -z "$IMAGE_PYTHON" ]]; then
        for candidate in python3 /usr/libexec/platform-python python2 python; do
            if command -v "$candidate" >/dev/null 2>&1; then IMAGE_PYTHON="$candidate"; break; fi
        done
    fi
    [[ -n "$IMAGE_PYTHON" ]]
}

# One change of the revert: offline through IN_IMAGE, live as bash does it (nothing on a
# live host is outside it). OP as IN_IMAGE's; the live function it stands for follows.
undo_change() {
    local op="$1" path="$2" datum="${3:-}" live_op="$4"
    if live; then
        if [[ "$op" == relink ]]; then in_directory "$path" "$live_op" "$datum"
        elif [[ "$op" == restore ]]; then in_directory "$path" "$live_op" "./$datum"
        else in_directory "$path" "$live_op"; fi
        return
    fi
    "$IMAGE_PYTHON" -E -S -c "$IN_IMAGE" "$op" "$ROOT" "$path" "$datum"  # -S: starts in ms
}

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
    if [[ ! -e "$manifest" && ! -L "$manifest" && "${SASCHECK_REVERT_ABSENT:-}" == nothing ]]; then
        # the playbook's own manifest: a run that changed nothing records none
        say "nothing to revert: no changes were recorded on this host ($manifest does not exist)"
        return 0
    fi
    [[ -f "$manifest" ]] || { warn "no manifest $manifest"; return 1; }
    if ! live && ! image_python; then
        warn "refused: an offline revert acts inside the image through descriptors, which needs a Python (python3, /usr/libexec/platform-python or python2) on this machine; none was found, so nothing was reverted"
        return 3
    fi
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
                  elif undo_change restore "$path" "${datum##*/}" restore_backup; then
                      say "restored $path"; undone=$((undone + 1)); fi ;;
            new) if undo_change remove-new "$path" "" remove_new; then
                     say "removed $path"; undone=$((undone + 1)); fi ;;
            dir) if undo_change remove-dir "$path" "" remove_empty_dir; then
                     say "removed $path/"; undone=$((undone + 1)); fi ;;
            link) if [[ -z "$datum" ]]; then
                      if undo_change remove-link "$path" "" remove_link; then
                          say "removed $path"; undone=$((undone + 1)); fi
                  elif undo_change relink "$path" "$datum" relink; then
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
