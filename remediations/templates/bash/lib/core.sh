# ---- core.sh: the run: settings, arguments, site values, messages, accounting of changes, runtime
#      writes, the summary
# ROOT: where the system lives ("" = this host, live). An offline image gets only its
# persistent configuration changed; runtime writes to /proc and /sys are skipped there.
ROOT="${SASCHECK_ROOT:-}"
ROOT="${ROOT%/}"
DRY_RUN="${SASCHECK_DRY_RUN:-0}"
[[ "$DRY_RUN" == 1 ]] || DRY_RUN=0
# Plan mode (SASCHECK_PLAN=1): change nothing, print the changes as JSON for a caller
# (the Ansible playbook) that carries them out with its own modules.
PLAN="${SASCHECK_PLAN:-0}"
INSTALL_TUNED="${SASCHECK_INSTALL_TUNED:-no}"
CHANGES=0
REFUSED=0
CURRENT_RULE=""
PLAN_ITEMS=()
STAMP="$(date +%Y%m%d%H%M%S)"
BACKED_UP=$'\n'  # the files backed up this run, one a line

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
ANY_HOST="${SASCHECK_ANY_HOST:-0}"

usage() {
    echo "usage: $0 [--dry-run | --revert MANIFEST] [--any-host]   (env: SASCHECK_ROOT=DIR," \
         "SASCHECK_ROLE=ROLE, SASCHECK_INSTALL_TUNED=yes, SASCHECK_MANIFEST=FILE, SASCHECK_ANY_HOST=1)"
}

while (( $# > 0 )); do
    case "$1" in
        --dry-run) DRY_RUN=1 ;;
        --any-host) ANY_HOST=1 ;;
        --revert) [[ $# -ge 2 ]] || { usage >&2; exit 1; }; REVERT="$2"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; exit 1 ;;
    esac
    shift
done

live() { [[ -z "$ROOT" ]]; }

# Sets the variable named $1 to the text of file $2, trailing newlines dropped, as "$(cat
# FILE)" would, without a process: for the one-line values of /proc and /sys, read for each
# device and key. At most 64 KiB, to the first NUL; returns 1 (the variable empty) where the
# file cannot be read.
file_value_into() {
    local _f_text=""
    printf -v "$1" '%s' ""
    [[ -f "$2" || -c "$2" ]] && [[ -r "$2" ]] || return 1
    { IFS= read -r -d '' -n 65536 _f_text < "$2"; } 2>/dev/null
    while [[ "$_f_text" == *$'\n' ]]; do _f_text="${_f_text%$'\n'}"; done
    printf -v "$1" '%s' "$_f_text"
}

# The target's host name, read as sascheck's scan reads it (rules/host_layout/system.py
# host_name, after systemd's read_etc_hostname_stream): the first line of /etc/hostname
# that is neither blank nor a comment, keeping letters, digits, '-' and '.' (at most 64);
# else the kernel's, read the same way.
cleaned_hostname() {  # FILE
    local line name LC_ALL=C  # byte ranges, as Python's [A-Za-z0-9]
    [[ -r "$1" ]] || return 0
    while IFS= read -r line || [[ -n "$line" ]]; do
        line="${line#"${line%%[![:space:]]*}"}"
        [[ -z "$line" || "$line" == "#"* ]] && continue
        name="${line//[^A-Za-z0-9.-]/}"
        printf '%s' "${name:0:64}"
        return 0
    done < "$1"
}
target_hostname() {
    local name
    name="$(cleaned_hostname "$ROOT/etc/hostname")"
    if [[ -z "$name" ]]; then name="$(cleaned_hostname "$ROOT/proc/sys/kernel/hostname")"; fi
    if [[ -z "$name" ]] && live; then name="$(uname -n)"; fi
    printf '%s' "$name"
}

# A name from a host or a results file reaches the terminal only when plainly a name.
shown_name() { if [[ "$1" =~ ^[A-Za-z0-9._-]{1,64}$ ]]; then printf '%s' "$1"; else printf '%s' "$2"; fi; }

# A fix written for one host changes nothing elsewhere: an image's fix needs its target
# named (SASCHECK_ROOT), and the target's host name and machine-id must be the scanned
# host's. --any-host (SASCHECK_ANY_HOST=1) is for an administrator who means it. A revert
# follows its manifest, which names what it changed.
check_target() {
    local name id wanted name_root="SASCHECK_ROOT=DIR bash $0" name_any="--any-host"
    [[ "$ANY_HOST" == 1 || -n "$REVERT" || -n "$RECORD_KIND" ]] && return 0
    if (( PLAN )); then name_root="-e sascheck_root=DIR"; name_any="-e sascheck_any_host=true"; fi
    wanted="$(shown_name "$TARGET_HOSTNAME" "the host it was written for")"
    if [[ -n "$TARGET_ROOT" ]] && live; then
        echo "sascheck-fix: refused: this fix was written for an offline image; name the target:" \
             "$name_root (DIR: that image), or add $name_any to fix this host" >&2
        exit 4
    fi
    if [[ -n "$TARGET_HOSTNAME" ]]; then
        name="$(target_hostname)"
        if [[ "$name" != "$TARGET_HOSTNAME" ]]; then
            echo "sascheck-fix: refused: the target is $(shown_name "$name" "another host"), not $wanted" \
                 "(host name); nothing changed ($name_any to run it anyway)" >&2
            exit 4
        fi
    fi
    if [[ -n "$TARGET_MACHINE_ID" && -f "$ROOT/etc/machine-id" ]]; then
        id="$(head -c 64 -- "$ROOT/etc/machine-id" 2>/dev/null | tr -d '[:space:]' || true)"
        if [[ "$id" != "$TARGET_MACHINE_ID" ]]; then
            echo "sascheck-fix: refused: the target's /etc/machine-id is not that of $wanted;" \
                 "nothing changed ($name_any to run it anyway)" >&2
            exit 4
        fi
    fi
}

# Site values may come from the environment (the playbook) or a tailoring file (oscap
# generate fix): each is checked against its type (rules/variables.yml) before it is used.
# The value itself is not echoed: it may hold anything.
site_integer() {  # NAME VALUE MIN MAX
    if [[ "$2" =~ ^[0-9]{1,18}$ ]] && (( 10#$2 >= $3 && 10#$2 <= $4 )); then return 0; fi
    warn "refused: site value $1 is not a whole number from $3 to $4"
    return 1
}
site_boolean() {  # NAME VALUE
    [[ "$2" == true || "$2" == false ]] && return 0
    warn "refused: site value $1 is not true or false"
    return 1
}
site_names() {  # NAME PATTERN MIN_ITEMS ITEM... (empty items, oscap's empty list, are none)
    local name="$1" pattern="^($2)\$" fewest="$3" item count=0
    shift 3
    for item in "$@"; do
        [[ -z "$item" ]] && continue
        if ! [[ "$item" =~ $pattern ]]; then
            warn "refused: site value $name has an item that is not a valid name"
            return 1
        fi
        count=$((count + 1))
    done
    (( count >= fewest )) && return 0
    warn "refused: site value $name needs at least $fewest item(s)"
    return 1
}
site_paths() {  # NAME ITEM... (absolute paths, no control characters; empty items are none)
    local name="$1" item
    shift
    for item in "$@"; do
        [[ -z "$item" ]] && continue
        if ! [[ "$item" == /* && "$item" != *[[:cntrl:]]* ]]; then
            warn "refused: site value $name has an item that is not an absolute path"
            return 1
        fi
    done
    return 0
}
say() { if (( PLAN )); then printf '%s\n' "$*" >&2; else printf '%s\n' "$*"; fi; }
# A warning; one that starts "manual: " is work left to a human, listed again at the end.
MANUAL_ITEMS=()
warn() {
    local text="$*"
    # The playbook's planner speaks to an Ansible user: -e variables, not the environment.
    if (( PLAN )); then
        text="${text//SASCHECK_INSTALL_TUNED=yes/-e sascheck_install_tuned=yes}"
        text="${text//--any-host/-e sascheck_any_host=true}"
    fi
    printf 'sascheck-fix: %s\n' "$text" >&2
    if [[ "$text" == "manual: "* ]] && ! in_list "${text#manual: }" ${MANUAL_ITEMS[@]+"${MANUAL_ITEMS[@]}"}; then
        MANUAL_ITEMS+=("${text#manual: }")
        RULE_NAMED=1
    fi
}
# Each rule that failed when scanned and that this run leaves as it is, with why: said in the
# summary and the plan, never skipped in silence (issue 65). FAILED_WHEN_SCANNED lists the
# rules the scan failed (set by the script; empty in a block oscap assembles).
UNMENDED=()
RULE_NAMED=0
not_mended() {
    local item="$CURRENT_RULE: $*"
    [[ -n "$CURRENT_RULE" ]] || return 0
    RULE_NAMED=1
    in_list "$item" ${UNMENDED[@]+"${UNMENDED[@]}"} || UNMENDED+=("$item")
}
REBOOT_FOR=""  # what takes effect only at the next boot (live)

# A JSON string (control characters other than tab and newline are dropped).
json() {
    local text
    # x: command substitution would drop trailing newlines (a file's final one among them)
    text="$(printf '%s' "$1" | tr -d '\000-\010\013\014\016-\037'; printf x)"
    text="${text%x}"
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
# Whether a running /proc/sys value is already at_most or at_least the site's (a sysctl rule
# with a compare): such a value is the site's tuning, kept.
sysctl_within() {
    local file="$1" compare="$2" wanted="$3" current
    live || return 1
    current="$(cat -- "$file" 2>/dev/null || true)"
    [[ "$current" =~ ^[0-9]+$ ]] || return 1
    case "$compare" in
        at_most) (( current <= wanted )) ;;
        at_least) (( current >= wanted )) ;;
        *) [[ "$current" == "$wanted" ]] ;;
    esac
}

# A /proc/sys value of several numbers (kernel.sem) with each field below its site value
# (the arguments after the file, in order) raised to it and a higher one kept: the running
# value, or the image's copy of it offline. Prints nothing when no field is below; fails
# when the value is not that many numbers.
sysctl_fields_raised() {
    local file="$1" current field least raised=() below=0
    shift
    current="$(cat -- "$ROOT$file" 2>/dev/null)" || return 1  # ROOT is empty on a live host
    local -a fields
    read -r -a fields <<< "$current"
    (( ${#fields[@]} == $# )) || return 1
    for field in "${fields[@]}"; do
        [[ "$field" =~ ^[0-9]{1,18}$ ]] || return 1
        least="$1"
        shift
        if (( 10#$field < least )); then
            raised+=("$least") below=1
        else
            raised+=("$((10#$field))")
        fi
    done
    if (( below )); then printf '%s' "${raised[*]}"; fi
}

set_runtime() {
    local file="$1" value="$2" current old
    if ! live; then
        not_mended "a running value: an offline image has no running kernel to set it in"
        return 0
    fi
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

in_list() {
    local needle="$1" item
    shift
    for item in "$@"; do
        if [[ "$item" == "$needle" ]]; then return 0; fi
    done
    return 1
}

# Each rule's block begins here; what each did is said at the end of an assembled script.
RULES_RUN=()
RULE_SKIPPED=0
RULE_REFUSED=0
RULE_FIRST_CHANGE=0
rule_begin() {
    rule_done
    CURRENT_RULE="$1" RULE_SKIPPED=0 RULE_REFUSED=0 RULE_FIRST_CHANGE=$CHANGES RULE_NAMED=0
}
# A block whose own site values are not of their type changes nothing and is refused.
rule_refused() {
    RULE_REFUSED=1
    REFUSED=$((REFUSED + 1))
}
rule_done() {
    local what
    [[ -n "$CURRENT_RULE" ]] || return 0
    if (( RULE_SKIPPED )); then what="skipped (not for a $ROLE host)"
    elif (( RULE_REFUSED )); then what="refused (a site value is not of its type)"
    elif (( CHANGES == RULE_FIRST_CHANGE )); then
        what="nothing to change"
        if (( ! RULE_NAMED )) && [[ "${FAILED_WHEN_SCANNED:-}" == *" $CURRENT_RULE "* ]]; then
            not_mended "failed when scanned, and this run found nothing to change for it (an earlier rule's change may have mended it: scan again)"
        fi
    elif (( DRY_RUN )); then what="$((CHANGES - RULE_FIRST_CHANGE)) changes would be made"
    else what="$((CHANGES - RULE_FIRST_CHANGE)) changes"; fi
    RULES_RUN+=("$CURRENT_RULE: $what")
    CURRENT_RULE=""
}

# The end of a script oscap assembled from the rules' blocks (the EXIT trap): each rule's
# outcome, then finish's summary and exit status; a block that failed ends the run with its
# status, and the rules after it are said not to have run.
finish_blocks() {
    local status=$? item
    trap - EXIT
    if (( status != 0 )); then
        warn "stopped in ${CURRENT_RULE:-the set-up} (exit status $status): the rules after it did not run"
        exit "$status"
    fi
    rule_done
    if (( ! PLAN )); then
        say "rules (${#RULES_RUN[@]}):"
        for item in ${RULES_RUN[@]+"${RULES_RUN[@]}"}; do say "  $item"; done
    fi
    finish
    exit 0
}

# The end of a run: a summary, or in plan mode the plan as JSON.
finish() {
    local item rule entry body="" index unmended
    rule_done  # the last rule's outcome (a rule it leaves unmended is listed below)
    if (( PLAN )); then
        for (( index = 0; index < ${#PENDING_FILES[@]}; index++ )); do
            item="${PENDING_FILES[index]}"
            for rule in ${PENDING_RULES[index]}; do
                entry="{\"rule\":$(json "$rule"),\"kind\":\"file\",\"path\":$(json "$item"),"
                entry+="\"mode\":$(json "${PENDING_MODES[index]}"),"
                entry+="\"description\":$(json "write $item"),\"content\":$(json "${PENDING_CONTENT[index]}")}"
                PLAN_ITEMS+=("$entry")
            done
        done
        for item in ${PLAN_ITEMS[@]+"${PLAN_ITEMS[@]}"}; do body+="${body:+,}$item"; done
        entry=""
        for item in ${MANUAL_ITEMS[@]+"${MANUAL_ITEMS[@]}"}; do entry+="${entry:+,}$(json "$item")"; done
        unmended=""
        for item in ${UNMENDED[@]+"${UNMENDED[@]}"}; do unmended+="${unmended:+,}$(json "$item")"; done
        printf '{"role":%s,"actions":[%s],"manual":[%s],"unmended":[%s]}\n' "$(json "$ROLE")" \
            "$body" "$entry" "$unmended"
        return 0
    fi
    # What is left: each thing that needs a human, what needs a reboot, then the count.
    if (( ${#MANUAL_ITEMS[@]} > 0 )); then
        say "needs a human (${#MANUAL_ITEMS[@]}):"
        for item in "${MANUAL_ITEMS[@]}"; do say "  - $item"; done
    fi
    if (( ${#UNMENDED[@]} > 0 )); then
        say "not mended by this run (${#UNMENDED[@]}):"
        for item in "${UNMENDED[@]}"; do say "  - $item"; done
        # counted in the run's manifest too (a comment: --revert reads past it)
        if (( ! DRY_RUN && CHANGES > 0 )) && [[ -n "$MANIFEST" && -f "$MANIFEST" && ! -L "$MANIFEST" ]]; then
            for item in "${UNMENDED[@]}"; do
                printf '# not mended by this run: %s\n' "${item//[[:cntrl:]]/ }" >> "$MANIFEST"
            done
        fi
    fi
    if [[ -n "$REBOOT_FOR" ]]; then say "needs a reboot:$REBOOT_FOR"; fi
    if (( REFUSED > 0 )); then
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
    # 3: the run did what it could, and left work to a human (listed above).
    # A dry run exits as the run it shows would.
    if (( ${#MANUAL_ITEMS[@]} > 0 )); then exit 3; fi
}
