# ---- sysctl.sh: a sysctl value every boot ends with, kept where the host's own tuning lives
# (issue 51): sascheck's tuned profile where tuned starts at boot, else /etc/sysctl.d; never both.

# Keys sascheck's tuned profile carries in [sysctl] beyond its template's, one KEY=VALUE a
# line, set by this run (tuned_profile_text adds them to those an earlier run wrote).
TUNED_SYSCTL=""

# Whether the installed tuned is at least RELEASE (MAJOR.MINOR); an unknown one is taken as
# the newest, as the scanner takes it.
tuned_at_least() {
    local version="" major minor
    tuned_version_into version
    [[ -n "$version" ]] || return 0
    major="${version% *}" minor="${version#* }"
    (( 10#$major > 10#${1%.*} || (10#$major == 10#${1%.*} && 10#$minor >= 10#${1#*.}) ))
}

# Whether tuned 2 starts at the next boot (scanner/tuned/active.py's _tuned_started): a
# tuned.service link in the .wants of a target the boot reaches, graphical.target's only
# where default.target is it (or is not told); live, systemctl's answer.
tuned_starts_at_boot() {
    local dir link target=""
    (( ! TUNED_STARTED )) || return 0  # this run enabled it (start_tuned_profile)
    uses_systemd && tuned_installed || return 1
    if live; then systemctl is-enabled --quiet tuned 2>/dev/null; return; fi
    for link in $LAYOUT_DEFAULT_TARGET_LINKS; do
        if [[ -L "$ROOT$link" ]]; then target="$(readlink -- "$ROOT$link")"; break; fi
    done
    for dir in $LAYOUT_SYSTEMD_WANTS_DIRS; do
        if [[ "$dir" == */graphical.target.wants && -n "$target" \
                && "$target" != */graphical.target ]]; then continue; fi
        if [[ -e "$ROOT$dir/tuned.service" || -L "$ROOT$dir/tuned.service" ]]; then return 0; fi
    done
    return 1
}

# The last value tuned-main.conf gives OPTION (its `option = value` lines), or nothing.
tuned_main_option() {
    sed -n -E "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*(.*[^[:space:]])?[[:space:]]*\$/\\1/p" \
        "$ROOT$LAYOUT_TUNED_MAIN_CONF" 2>/dev/null | tail -n 1
}

# Whether tuned applies the system sysctl files again after its profile's [sysctl] for KEY
# (plugin_sysctl.py): reapply_sysctl from tuned 2.7, on unless tuned-main.conf turns it off
# (get_bool's true words), KEY not matched by reapply_sysctl_exclude's patterns (2.27 on).
tuned_reapplies() {
    local key="$1" value pattern count=0
    local -a patterns=()
    tuned_at_least "$LAYOUT_TUNED_REAPPLY_SYSCTL_SINCE" || return 1
    value="$(tuned_main_option reapply_sysctl)"
    if [[ -n "$value" ]]; then
        value="$(printf '%s' "$value" | tr '[:upper:]' '[:lower:]')"
        [[ " $LAYOUT_TUNED_TRUE_WORDS " == *" $value "* ]] || return 1
    fi
    if tuned_at_least "$LAYOUT_TUNED_REAPPLY_EXCLUDE_SINCE"; then
        # GlobalConfig.get_list: split on "," or ";", each stripped (never globbed here)
        IFS=',;' read -r -a patterns <<< "$(tuned_main_option reapply_sysctl_exclude)"
        for pattern in ${patterns[@]+"${patterns[@]}"}; do
            pattern="${pattern#"${pattern%%[![:space:]]*}"}"
            pattern="${pattern%"${pattern##*[![:space:]]}"}"
            [[ -n "$pattern" ]] || continue
            if (( ++count > FNMATCH_MAX_PATTERNS )); then
                warn "tuned-main.conf: reapply_sysctl_exclude has more than $FNMATCH_MAX_PATTERNS patterns; the rest are not read (their keys taken as re-applied)"
                break
            fi
            if fnmatch_matches "$key" "$pattern"; then return 1; fi
        done
    fi
    return 0
}

# Python's fnmatch, as tuned reads reapply_sysctl_exclude (2.27, plugin_sysctl.py: each key
# against each pattern with fnmatch.fnmatch), translated to an ERE that [[ =~ ]] matches
# with the C library's regexec (no back-references here, so no backtracking search): "*",
# "?" and "[...]" are its only operators, every other character is literal. bash's own
# [[ == ]] would read "*(", "+(" or "@(" as extended globs, which fnmatch does not, and its
# matcher backtracks (a 15-character pattern held a dry run for minutes).
FNMATCH_MAX_PATTERNS=64
FNMATCH_MAX_LENGTH=256

# fnmatch_ere PATTERN: the ERE printed; fails (printing nothing) for a pattern longer than
# FNMATCH_MAX_LENGTH or with "[:", "[." or "[=" inside brackets (POSIX's, not fnmatch's).
fnmatch_ere() {
    local pattern="$1" ere="^" i=0 j c rest stuff tail
    (( ${#pattern} <= FNMATCH_MAX_LENGTH )) || return 1
    while (( i < ${#pattern} )); do
        c="${pattern:i:1}"
        i=$((i + 1))
        case "$c" in
            '*') [[ "$ere" == *'.*' ]] || ere+='.*' ;;  # a run of stars is one
            '?') ere+='.' ;;
            '[')
                # fnmatch.translate: a leading "!" and then a leading "]" belong to the set;
                # with no closing "]" the "[" is literal
                j=$i
                if [[ "${pattern:j:1}" == '!' ]]; then j=$((j + 1)); fi
                if [[ "${pattern:j:1}" == ']' ]]; then j=$((j + 1)); fi
                rest="${pattern:j}"
                if [[ "$rest" != *']'* ]]; then ere+='\['; continue; fi
                stuff="${pattern:i:j-i}${rest%%]*}"
                tail="${rest#*]}"
                i=$((j + ${#rest} - ${#tail}))
                # "[:", "[." and "[=" open POSIX classes, which fnmatch reads as characters
                [[ "$stuff" != *'[:'* && "$stuff" != *'[.'* && "$stuff" != *'[='* ]] || return 1
                if [[ "${stuff:0:1}" == '!' ]]; then
                    stuff="^${stuff:1}"
                elif [[ "$stuff" == '^' ]]; then
                    ere+='\^'
                    continue
                elif [[ "${stuff:0:1}" == '^' ]]; then
                    stuff="${stuff:1}^"  # literal in fnmatch; last, it is literal in an ERE
                fi
                ere+="[$stuff]" ;;
            '.'|'+'|'('|')'|'{'|'}'|'|'|'^'|'$'|"\\"|']') ere+="\\$c" ;;
            *) ere+="$c" ;;
        esac
    done
    printf '%s' "$ere\$"
}

# Whether KEY matches fnmatch PATTERN; false where the pattern cannot be read (said once).
fnmatch_matches() {
    local ere
    if ! ere="$(fnmatch_ere "$2")"; then
        warn "tuned-main.conf: a reapply_sysctl_exclude pattern is not read (over $FNMATCH_MAX_LENGTH characters, or a POSIX class inside brackets); taken as not matching $1"
        return 1
    fi
    [[ "$1" =~ $ere ]]  # 2 (not an ERE: a reversed range, which fnmatch drops) as no match
}

# The ERE of a sysctl file's line setting KEY, up to its "=" (sysctl.d(5): "." or "/" as the
# separator, systemd-sysctl's leading "-").
sysctl_key_pattern() { printf '%s' "^[[:space:]]*-?[[:space:]]*${1//./[./]}[[:space:]]*="; }

# A file tuned re-applies after its profile that sets KEY, printed (under $ROOT), or nothing:
# /run/sysctl.d, /etc/sysctl.d (the /usr and /lib directories too before tuned 2.13), then
# /etc/sysctl.conf.
reapplied_file_setting() {
    local key="$1" dirs="$LAYOUT_TUNED_REAPPLY_SYSCTL_DIRS" dir file pattern
    tuned_at_least "$LAYOUT_TUNED_REAPPLY_SYSCTL_ETC_ONLY_SINCE" || dirs="$LAYOUT_TUNED_REAPPLY_SYSCTL_ALL_DIRS"
    pattern="$(sysctl_key_pattern "$key")"
    for dir in $dirs; do
        for file in "$ROOT$dir"/*.conf; do
            if grep -Eqs -- "$pattern" "$file"; then printf '%s' "$file"; return 0; fi
        done
    done
    if grep -Eqs -- "$pattern" "$ROOT$LAYOUT_SYSCTL_CONF"; then printf '%s' "$ROOT$LAYOUT_SYSCTL_CONF"; fi
}

# Where KEY's boot value belongs, printed: "tuned" where tuned 2 starts at boot, sascheck
# may write its profile (one it can include is here, no site profile of that name), and no
# file tuned re-applies after that profile sets KEY; else "sysctl". A sysctl file that sets
# KEY is where the site keeps it, and it would win over the profile; a profile's value wins
# over sysctl.d where tuned re-applies nothing (before 2.7, or reapply_sysctl = 0).
sysctl_home() {
    local key="$1"
    if tuned_starts_at_boot && [[ -n "$(tuned_include)" ]] \
            && ! foreign_profile "$TUNED_PROFILE_NAME" >/dev/null \
            && { ! tuned_reapplies "$key" || [[ -z "$(reapplied_file_setting "$key")" ]]; }; then
        printf tuned
    else
        printf sysctl
    fi
}

# A sysctl value every boot ends with, where sysctl_home says. In tuned: a [sysctl] line of
# sascheck's profile, changing nothing else: the profile itself where it is the one tuned
# runs, else a profile that includes the one tuned runs and adds only its [sysctl] lines;
# where tuned runs none it can name, the whole profile (apply_tuned_profile).
# With a bound ("at_least" or "at_most"), what is written is the value kept for boot
# (sysctl_kept_for_boot): never one further from the bound than the host has; in tuned (2.10
# on) a single number is written ">VALUE" or "<VALUE", which tuned applies only where the key
# boots lower or higher (plugin_sysctl.py's assignment modifiers).
persist_sysctl() {
    local key="$1" value="$2" compare="${3:-}" ours active before="$CHANGES" written
    if [[ "$compare" == at_least || "$compare" == at_most ]]; then
        value="$(sysctl_kept_for_boot "$compare" "$key" "$value")"
    fi
    written="$value"
    if [[ "$(sysctl_home "$key")" != tuned ]]; then
        persist_sysctl_file "$key" "$value"
        return 0
    fi
    if [[ "$value" =~ ^[0-9]+$ ]] && tuned_at_least "$LAYOUT_TUNED_SYSCTL_MODIFIERS_SINCE"; then
        case "$compare" in at_least) written=">$value" ;; at_most) written="<$value" ;; esac
    fi
    TUNED_SYSCTL="$(sysctl_lines_without "$key" "$TUNED_SYSCTL")"$'\n'"$key=$written"$'\n'
    ours="$ROOT$(tuned_user_dir)/$TUNED_PROFILE_NAME/tuned.conf"
    active="$(tuned_boot_profile)"
    if [[ "$active" == "$TUNED_PROFILE_NAME" ]] && { [[ -f "$ours" ]] || pending_at "$ours"; }; then
        TUNED_TEXT="$(current_content "$ours")"
        TUNED_TEXT="${TUNED_TEXT%x}"
    elif [[ "$active" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]*$ && "$active" != "$TUNED_PROFILE_NAME" ]] \
            && tuned_has_profile "$active"; then
        TUNED_TEXT="${TUNED_PROFILE_THP_OFF%%$'\n'*}"$'\n'"# Includes $active, the profile tuned ran, and adds the sysctl values SAS needs.
[main]
summary=$active with the sysctl values SAS needs
include=$active
"
    else
        apply_tuned_profile
        return 0
    fi
    TUNED_TEXT="$(sysctl_section_set "$TUNED_TEXT" "$TUNED_SYSCTL")"$'\n'
    write_file "$ours" "$TUNED_TEXT"
    if (( CHANGES > before )); then
        say "$CURRENT_RULE: $key=$written kept in tuned's $TUNED_PROFILE_NAME profile, where this host's boot tuning lives"
    fi
    start_tuned_profile "$before"
}

# TEXT (a tuned profile) with each KEY=VALUE line of LINES set in its [sysctl] section: a
# line for KEY replaced where it is (written "KEY = VALUE" or "KEY=VALUE"), else added at the
# section's end; the section added last where there is none. Every other line is kept.
sysctl_section_set() {
    local text="$1" wanted="" line key value set_to section="" pending
    while IFS= read -r line; do  # one line a key: the last value given for it
        if [[ -n "$line" ]]; then wanted="$(sysctl_lines_without "${line%%=*}" "$wanted")"$'\n'"$line"; fi
    done <<< "$2"
    pending="$wanted"
    SECTION_TEXT=""
    while IFS= read -r line; do
        if [[ "$line" =~ ^\[.*\][[:space:]]*$ ]]; then
            if [[ "$section" == "[sysctl]" ]]; then sysctl_section_flush "$pending"; pending=""; fi
            section="${line%%]*}]"
        elif [[ "$section" == "[sysctl]" && "$line" == *=* ]]; then
            key="${line%%=*}"
            key="${key//[[:space:]]/}"
            if [[ $'\n'"$pending" == *$'\n'"$key="* ]]; then
                set_to="$(sysctl_line_for "$key" "$pending")"
                value="${line#*=}"
                value="${value#"${value%%[![:space:]]*}"}"
                value="${value%"${value##*[![:space:]]}"}"
                # the same value as written ("KEY = VALUE") stays as it is
                [[ "$value" == "${set_to#*=}" ]] || line="$set_to"
                pending="$(sysctl_lines_without "$key" "$pending")"
            elif [[ $'\n'"$wanted" == *$'\n'"$key="* ]]; then
                continue  # a second line for a key already set (tuned keeps the last)
            fi
        fi
        SECTION_TEXT+="$line"$'\n'
    done <<< "$text"
    if [[ "$section" != "[sysctl]" && -n "${pending//$'\n'/}" ]]; then
        SECTION_TEXT="${SECTION_TEXT%$'\n'}"$'\n\n[sysctl]\n'
    fi
    sysctl_section_flush "$pending"
    printf '%s' "${SECTION_TEXT%$'\n'}"
}

# Add LINES (KEY=VALUE) to SECTION_TEXT, whose last section is [sysctl]: after its last
# setting, before the blank lines that end it.
sysctl_section_flush() {
    local nl=$'\n' left trailing
    left="$(sysctl_lines_without "" "$1")"
    [[ -n "$left" ]] || return 0
    trailing="${SECTION_TEXT##*[!"$nl"]}"
    SECTION_TEXT="${SECTION_TEXT%"$trailing"}"$'\n'"$left"$'\n'"${trailing#"$nl"}"
}

# The KEY=VALUE line of LINES for KEY; LINES' other non-empty lines, each ended.
sysctl_line_for() {
    local line
    while IFS= read -r line; do
        if [[ "${line%%=*}" == "$1" ]]; then printf '%s' "$line"; return; fi
    done <<< "$2"
}
sysctl_lines_without() {
    local line
    while IFS= read -r line; do
        if [[ -n "$line" && "${line%%=*}" != "$1" ]]; then printf '%s\n' "$line"; fi
    done <<< "$2"
}

# A site that sets a ratio's byte twin chose it over the ratio (vm.dirty_bytes over
# vm.dirty_ratio, vm.dirty_background_bytes over vm.dirty_background_ratio): writing either
# zeroes the other (mm/page-writeback.c, dirty_ratio_handler and dirty_bytes_handler, and
# their dirty_background_ pair), so the ratio is left alone and said (manual). Its running
# value, or a sysctl file that sets it. The pairs: the host layout's SYSCTL_BYTES_TWINS.
bytes_twin_chosen() {
    local ratio="$1" twin="$2" file dir value pattern
    pattern="^[[:space:]]*-?[[:space:]]*${twin//./[./]}[[:space:]]*=[[:space:]]*0*[1-9]"
    file_value_into value "$ROOT/proc/sys/${twin//.//}" || true
    if [[ ! "$value" =~ ^0*[1-9][0-9]*$ ]]; then
        value=""
        for dir in $LAYOUT_SYSCTL_DIRS; do
            for file in "$ROOT$dir"/*.conf; do
                if grep -Eqs "$pattern" "$file"; then
                    value="$file"
                fi
            done
        done
        if grep -Eqs "$pattern" "$ROOT$LAYOUT_SYSCTL_CONF"; then
            value="$ROOT$LAYOUT_SYSCTL_CONF"
        fi
        [[ -n "$value" ]] || return 1
    fi
    if [[ "$DIRTY_BYTES_SAID" != *" $CURRENT_RULE "* ]]; then
        warn "manual: $CURRENT_RULE: the site sets $twin (${value#"$ROOT"}); $ratio" \
             "would zero it, so it is left: keep one of the two deliberately"
        DIRTY_BYTES_SAID+="$CURRENT_RULE "
    fi
    return 0
}

# The profile template's own key (vm.dirty_ratio): is its byte twin the site's choice?
dirty_bytes_chosen() { bytes_twin_chosen vm.dirty_ratio vm.dirty_bytes; }
DIRTY_BYTES_SAID=" "

# KEY=VALUE in the sysctl files (scanner/boot/sysctl.py's order): each line setting KEY in
# /etc/sysctl.conf and /etc/sysctl.d gets VALUE, since those are applied last and again by
# tuned's reapply_sysctl, and a file named to sort after the others (99-sysctl.conf, the
# link to sysctl.conf, included) holds it too.
persist_sysctl_file() {
    local key="$1" value="$2" file pattern etc="$ROOT${LAYOUT_SYSCTL_DIRS%% *}"
    pattern="$(sysctl_key_pattern "$key")"
    for file in "$ROOT$LAYOUT_SYSCTL_CONF" "$etc"/*.conf; do
        [[ -f "$file" && ! -L "$file" ]] || continue  # 99-sysctl.conf links to sysctl.conf
        grep -Eqs -- "$pattern" "$file" || continue
        # shellcheck disable=SC2016  # the awk program is single-quoted on purpose
        SYSCTL_PATTERN="$pattern" SYSCTL_LINE="$key = $value" edit_file "$file" '
            $0 ~ ENVIRON["SYSCTL_PATTERN"] { $0 = ENVIRON["SYSCTL_LINE"] }
            { print }'
    done
    # The file holds every key sascheck persists: this key's line is replaced where it is,
    # or added; the others stay (a rule of its own each, fixed in one run or several).
    local ours="$etc/99-zz-sascheck.conf" current line merged="" found=0
    current="$(current_content "$ours")"
    current="${current%x}"
    [[ -n "$current" ]] || current="# Written by sascheck"
    while IFS= read -r line; do
        [[ -n "$line" ]] || continue
        if [[ "$line" =~ $pattern ]]; then
            (( found )) && continue
            line="$key = $value" found=1
        fi
        merged+="$line"$'\n'
    done <<< "$current"
    (( found )) || merged+="$key = $value"$'\n'
    write_file "$ours" "$merged"
}

# The kernel's own value of KEY where nothing sets it, by the host's release (the table of
# rules/host_layout/boot.py, KERNEL_SYSCTL_DEFAULTS); fails where it is not known, or the
# image does not say its kernel.
kernel_sysctl_default() {
    local key="$1" release entry rest prefix value
    local -a entries
    file_value_into release "$ROOT/proc/sys/kernel/osrelease" || return 1
    read -r -a entries <<< "$LAYOUT_KERNEL_SYSCTL_DEFAULTS"
    for entry in "${entries[@]}"; do
        [[ "${entry%%@*}" == "$key" ]] || continue
        rest="${entry#*@}"
        prefix="${rest%%@*}" value="${rest#*@}"
        [[ "$release" == "$prefix"* ]] || continue
        [[ "$value" != unknown ]] || return 1
        printf '%s' "${value//,/ }"
        return 0
    done
    return 1
}

# The value to persist for KEY with a bound COMPARE (at_least or at_most) of VALUE (one
# number, or several for kernel.sem): field by field the highest (at_least) or lowest
# (at_most) of VALUE, the running value (the image's copy offline), every value /etc sets the
# key to and the kernel's own for this release, so that no value the host has or boots with
# moves away from the bound. Values that are not that many numbers are passed over.
sysctl_kept_for_boot() {
    local compare="$1" key="$2" conf line value field number
    local -a kept candidates=() fields
    read -r -a kept <<< "$3"
    local pattern
    pattern="$(sysctl_key_pattern "$key")[[:space:]]*(.*)$"
    file_value_into value "$ROOT/proc/sys/${key//.//}" && candidates+=("$value")
    value="$(kernel_sysctl_default "$key")" && candidates+=("$value")
    for conf in "$ROOT$LAYOUT_SYSCTL_CONF" "$ROOT${LAYOUT_SYSCTL_DIRS%% *}"/*.conf; do
        [[ -f "$conf" ]] || continue
        while IFS= read -r line || [[ -n "$line" ]]; do
            if [[ "$line" =~ $pattern ]]; then candidates+=("${BASH_REMATCH[1]}"); fi
        done < "$conf"
    done
    for value in "${candidates[@]}"; do
        read -r -a fields <<< "$value"
        (( ${#fields[@]} == ${#kept[@]} )) || continue
        for field in "${fields[@]}"; do [[ "$field" =~ ^[0-9]{1,18}$ ]] || continue 2; done
        for number in "${!fields[@]}"; do
            field=$((10#${fields[number]}))
            if [[ "$compare" == at_least ]] && (( field > 10#${kept[number]} )); then
                kept[number]="$field"
            elif [[ "$compare" == at_most ]] && (( field < 10#${kept[number]} )); then
                kept[number]="$field"
            fi
        done
    done
    printf '%s' "${kept[*]}"
}
