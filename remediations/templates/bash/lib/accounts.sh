# -- the SAS accounts' resource limits (pam_limits) ----------------------------------------

# The soft and hard limit of ITEM a PAM session of ACCOUNT gets from limits.conf and
# limits.d/*.conf, as pam_limits ranks them: an entry for the account beats one for a group it
# is in, which beats '*'; at the same rank the one read last wins (Linux-PAM
# pam_limits.c, process_limit). Prints "SOFT HARD FROM RANK", each limit a number,
# "unlimited" or "-" (not set), FROM the file:line that set the hard one (root-relative, "-"
# if none) and RANK its rank (0 the account, 1 a group, 4 '*'); or "stop FILE:LINE" where a
# no-limit line ("DOMAIN -", two words) names the account first: pam_limits then reads no
# further and sets nothing (parse_config_file's PAM_IGNORE).
# As pam_limits reads a line: '#' starts a comment, the first four words count, the value
# '-' is unlimited like '-1', 'unlimited' and 'infinity'. uid and gid range domains are not
# followed.
pam_limit_of() {
    local account="$1" item="$2" groups="" files=() file
    groups="$(awk -F: -v user="$account" '
        FNR == NR { if ($1 == user) gid = $4; next }
        { split($4, members, ","); for (m in members) if (members[m] == user) print $1
          if ($3 == gid && gid != "") print $1 }' \
        "$ROOT$LAYOUT_PASSWD" "$ROOT$LAYOUT_GROUP" 2>/dev/null | tr '\n' ' ')"
    [[ -f "$ROOT$LAYOUT_LIMITS_CONF" ]] && files+=("$ROOT$LAYOUT_LIMITS_CONF")
    for file in "$ROOT$LAYOUT_LIMITS_D"/*.conf; do [[ -f "$file" ]] && files+=("$file"); done
    (( ${#files[@]} )) || { printf -- '- - - 6'; return 0; }
    awk -v user="$account" -v item="$item" -v groups=" $groups" -v root="$ROOT" '
        BEGIN { soft = "-"; hard = "-"; srank = 6; hrank = 6; from = "-" }
        { sub(/#.*/, "") }
        NF == 2 && substr($2, 1, 1) == "-" && ($1 == user || (substr($1, 1, 1) == "@" \
                && index(groups, " " substr($1, 2) " "))) {
            printf "stop %s:%d", substr(FILENAME, length(root) + 1), FNR; stopped = 1; exit
        }
        NF >= 4 {
            type = tolower($2)
            if (tolower($3) != item || (type != "soft" && type != "hard" && type != "-")) next
            if ($1 == user) rank = 0
            else if ($1 == "*") rank = 4
            else if (substr($1, 1, 1) == "@" && index(groups, " " substr($1, 2) " ")) rank = 1
            else next
            value = tolower($4)
            if (value == "-" || value == "-1" || value == "unlimited" || value == "infinity") value = "unlimited"
            else if (match(value, /^[0-9]+/)) {  # kept as digits: awk numbers are doubles
                value = substr(value, 1, RLENGTH); sub(/^0+/, "", value)
                if (value == "") value = "0"
            }
            else next
            if (type != "hard") { if (srank < rank) next; soft = value; srank = rank }
            if (type != "soft" && hrank >= rank) {
                hard = value; hrank = rank
                from = substr(FILENAME, length(root) + 1) ":" FNR
            }
        }
        END { if (!stopped) printf "%s %s %s %s", soft, hard, from, hrank }' "${files[@]}"
}

# Whether limit A (a number or "unlimited") is below number B.
limit_below() { [[ "$1" != unlimited ]] && (( ${#1} <= 18 )) && (( 10#$1 < $2 )); }

# Whether the hard limit a session inherits where pam_limits sets none is below LEAST, so
# that pam_limits would lower a raised soft limit to it: nofile's 4096 (the kernel's
# INR_OPEN_MAX) under RHEL 6's init and RHEL 7's systemd 219; nproc's as init has it.
# fs.nr_open, above which the kernel refuses a nofile hard limit (kernel/sys.c do_prlimit)
# and pam_limits the session: the host's own, else the kernel's default.
nr_open() {
    local value
    file_value_into value "$ROOT$LAYOUT_NR_OPEN" || true
    if [[ "$value" =~ ^[0-9]{1,10}$ ]]; then printf '%s' "$((10#$value))"; else printf '%s' "$LAYOUT_NR_OPEN_DEFAULT"; fi
}

# Whether the host's pam_limits gives an unlimited nofile as fs.nr_open (linux-pam 1.5.2,
# commit 3234488f, or a backport): only such a build carries the path it reads it from. The
# first module found decides, as in the scanner (scanner/system/limits.py).
pam_maps_unlimited_nofile() {
    local module
    for module in $LAYOUT_PAM_LIMITS_MODULES; do
        [[ -f "$ROOT$module" ]] || continue
        grep -qF "$LAYOUT_NR_OPEN" "$ROOT$module" 2>/dev/null
        return
    done
    return 1
}

# Whether a nofile hard limit HARD makes the kernel refuse it, and pam_limits the session:
# above fs.nr_open (kernel/sys.c do_prlimit: EPERM), unlimited included where this pam_limits
# asks for RLIM_INFINITY (before 1.5.2).
nofile_hard_refused() {
    local hard="$1" ceiling="$2"
    if [[ "$hard" == unlimited ]]; then ! pam_maps_unlimited_nofile
    else [[ "$hard" =~ ^[0-9]+$ ]] && { (( ${#hard} > 18 )) || (( 10#$hard > ceiling )); }; fi
}

# Whether the hard ITEM limit a session inherits where pam_limits sets none is not known
# (scanner: INHERITED_HARD): nofile under RHEL 8's systemd 239.
inherited_hard_unknown() { [[ "$1" == nofile && "$(kernel_release)" == 4.18.* ]]; }

inherited_hard_below() {
    local item="$1" least="$2" hard
    case "$item" in
        nofile) [[ "$(kernel_release)" == [23].* ]] && (( least > 4096 )) ;;
        nproc)
            hard="$(awk '/^Max processes/ { print $4 }' "$ROOT/proc/1/limits" 2>/dev/null)"
            [[ "$hard" =~ ^[0-9]{1,18}$ ]] && (( 10#$hard < least )) ;;
        *) return 1 ;;
    esac
}

# Each SAS account's soft ITEM at least LEAST in its PAM sessions: lines for the account, the
# most specific pam_limits entry, in sascheck's own limits.d file (other files are left as
# they are). A higher soft limit of the site's is kept; the hard limit is written where it
# would lower the soft one (pam_limits' setup_limits): set lower, or not set and what
# sessions inherit is lower.
raise_account_limit() {
    local item="$1" least="$2" account soft hard wanted ours current line retained="" added=""
    local ceiling from rank
    ceiling="$(nr_open)"
    local -a words
    shift 2
    ours="$ROOT$LAYOUT_LIMITS_D/99-sascheck-sas.conf"
    current="$(current_content "$ours")"
    current="${current%x}"
    for account in "$@"; do
        [[ -n "$account" ]] || continue
        read -r soft hard from rank <<< "$(pam_limit_of "$account" "$item")"
        if [[ "$soft" == stop ]]; then
            [[ "$hard" =~ ^[A-Za-z0-9/._:-]{1,200}$ ]] || hard="a file in $LAYOUT_LIMITS_D"
            warn "manual: $hard ('DOMAIN -') tells pam_limits to set no limit for $(shown_name "$account" "a SAS account") and to stop reading, so no limit sascheck writes reaches its sessions: remove that line (it is the site's, so sascheck leaves it)"
            continue
        fi
        if [[ "$item" == nofile ]] && (( least > ceiling )); then
            warn "manual: the site's nofile $least is above fs.nr_open ($ceiling): the kernel would refuse it and pam_limits the session; raise fs.nr_open first"
            continue
        fi
        if [[ "$item" == nofile ]] && nofile_hard_refused "$hard" "$ceiling"; then
            # The site asks for more open files than the kernel allows, so no session opens:
            # the hard limit becomes fs.nr_open, the most the kernel gives (what pam_limits
            # 1.5.2 makes of 'unlimited'), and a soft limit above it is lowered to it
            # (setup_limits). sascheck's line wins where it is read later at the same rank or
            # is more specific; a line for the account read after sascheck's file is the
            # site's to change.
            [[ "$from" =~ ^[A-Za-z0-9/._:-]{1,200}$ ]] || from="a file in $LAYOUT_LIMITS_D"
            if [[ "$rank" == 0 && "$from" == "$LAYOUT_LIMITS_D/"* \
                    && "${from%:*}" > "$LAYOUT_LIMITS_D/99-sascheck-sas.conf" ]]; then
                warn "manual: $from gives $(shown_name "$account" "a SAS account") a nofile hard limit above fs.nr_open ($ceiling), so pam_limits denies its sessions, and it is read after sascheck's file: set it to at most $ceiling there"
                continue
            fi
            added+="$account hard $item $ceiling"$'\n'
            if [[ "$soft" != unlimited && "$soft" != - ]] && limit_below "$soft" "$least"; then
                added+="$account soft $item $least"$'\n'
            fi
            continue
        fi
        # The soft limit the account should have: the site's own where it is not below.
        if [[ "$soft" == - ]] || limit_below "$soft" "$least"; then
            wanted="$least"
            added+="$account soft $item $least"$'\n'
        else
            wanted="$soft"
        fi
        [[ "$wanted" == unlimited ]] && continue
        if { [[ "$hard" != - ]] && limit_below "$hard" "$wanted"; } \
                || { [[ "$hard" == - ]] && inherited_hard_below "$item" "$wanted"; }; then
            added+="$account hard $item $wanted"$'\n'
        elif [[ "$hard" == - ]] && inherited_hard_unknown "$item"; then
            # what the session inherits is not known, so neither is whether pam_limits lowers
            # the soft limit to it: the hard limit is set, at fs.nr_open, which is at least
            # any a session can have inherited (never lowered) and the kernel accepts
            added+="$account hard $item $ceiling"$'\n'
        fi
    done
    [[ -n "$added" ]] || return 0
    while IFS= read -r line; do  # this file's earlier lines for the same account and item go
        [[ -n "$line" ]] || continue
        read -r -a words <<< "$line"
        if (( ${#words[@]} == 4 )) && [[ "${words[2]}" == "$item" ]] \
                && [[ $'\n'"$added" == *$'\n'"${words[0]} ${words[1]} $item "* ]]; then
            continue
        fi
        retained+="$line"$'\n'
    done <<< "${current:-# Written by sascheck: limits of the SAS accounts (pam_limits)}"
    write_file "$ours" "$retained$added"
}

# The *.conf files of the directories given, a file hiding its namesake in a later one, in
# file-name order (how systemd reads drop-ins), one path a line.
conf_files_in_order() {
    local dir file names=" " listed=""
    for dir in "$@"; do
        for file in "$dir"/*.conf; do
            [[ -f "$file" && "$names" != *" ${file##*/} "* ]] || continue
            names+="${file##*/} "
            listed+="${file##*/}"$'\t'"$file"$'\n'
        done
    done
    printf '%s' "$listed" | LC_ALL=C sort | cut -f2-
}

# The value KEY has in unit NAME's [Service] section: its file (the first unit directory that
# has it), then its drop-ins (NAME.d/*.conf in every unit directory, a file hiding its
# namesake in a later directory) in file-name order; the last assignment wins, an empty one
# resets it (systemd.unit(5)). Prints nothing where nothing sets it.
unit_setting() {
    local name="$1" key="$2" dir file found="" files=() dirs=()
    for dir in $LAYOUT_SYSTEMD_UNIT_DIRS; do
        [[ -f "$ROOT$dir/$name" ]] && { files+=("$ROOT$dir/$name"); break; }
    done
    for dir in $LAYOUT_SYSTEMD_UNIT_DIRS; do dirs+=("$ROOT$dir/$name.d"); done
    while IFS= read -r file; do [[ -n "$file" ]] && files+=("$file"); done \
        < <(conf_files_in_order "${dirs[@]}")
    (( ${#files[@]} )) || return 0
    found="$(awk -v key="$key" '
        /^[ \t]*\[/ { section = $0; gsub(/[ \t\[\]]/, "", section); next }
        section == "Service" && index($0, "=") {
            name = substr($0, 1, index($0, "=") - 1); gsub(/^[ \t]+|[ \t]+$/, "", name)
            if (name == key) { value = substr($0, index($0, "=") + 1); gsub(/^[ \t]+|[ \t]+$/, "", value) }
        }
        END { printf "%s", value }' "${files[@]}")"
    printf '%s' "$found"
}

# The soft part of a systemd Limit*= value in PER_UNIT units ("unlimited" for infinity), or
# nothing where it is not one systemd reads.
systemd_soft() {
    local text per_unit="$2" number scale=1
    text="$(printf '%s' "${1%%:*}" | tr '[:upper:]' '[:lower:]')"  # tr: bash 3.2 lacks case modification
    [[ "$text" == infinity ]] && { printf unlimited; return 0; }
    [[ "$text" =~ ^([0-9]{1,15})([kmgt]?)$ ]] || return 0
    number="${BASH_REMATCH[1]}"
    case "${BASH_REMATCH[2]}" in k) scale=1024 ;; m) scale=$((1024**2)) ;; g) scale=$((1024**3)) ;; t) scale=$((1024**4)) ;; esac
    printf '%s' $(( 10#$number * scale / per_unit ))
}

# systemd's KEY= for every service: system.conf, then the system.conf.d drop-ins in file-name
# order (a file hiding its namesake in a later directory); the last wins.
systemd_default() {
    local key="$1" dir file files=() dirs=()
    [[ -f "$ROOT$LAYOUT_SYSTEMD_SYSTEM_CONF" ]] && files+=("$ROOT$LAYOUT_SYSTEMD_SYSTEM_CONF")
    for dir in $LAYOUT_SYSTEMD_SYSTEM_CONF_DIRS; do dirs+=("$ROOT$dir"); done
    while IFS= read -r file; do [[ -n "$file" ]] && files+=("$file"); done \
        < <(conf_files_in_order "${dirs[@]}")
    (( ${#files[@]} )) || return 0
    awk -F= -v key="$key" '$1 ~ "^[ \t]*" key "[ \t]*$" { value = $2 }
        END { gsub(/^[ \t]+|[ \t]+$/, "", value); printf "%s", value }' "${files[@]}"
}

# The services that run as a SAS account (User=) and get ITEM's soft limit below LEAST from
# their unit, systemd's Default*= or systemd's own default: a drop-in in /etc raises it (soft
# and hard; a higher hard limit the unit sets is kept). They take it at their next restart.
raise_service_limits() {
    local item="$1" least="$2" directive per_unit=1 dir path name user text soft hard value
    local seen=" "
    shift 2
    case "$item" in
        nofile) directive=LimitNOFILE ;;
        nproc) directive=LimitNPROC ;;
        stack) directive=LimitSTACK per_unit=1024 ;;
        *) return 0 ;;
    esac
    for dir in $LAYOUT_SYSTEMD_UNIT_DIRS; do
        for path in "$ROOT$dir"/*.service; do
            [[ -f "$path" ]] || continue
            name="${path##*/}"
            # a unit name as systemd allows it: host text reaches paths and messages only so
            [[ "$name" =~ ^[A-Za-z0-9:_.@-]{1,255}$ ]] || continue
            [[ "$seen" != *" $name "* ]] || continue  # an earlier directory's hides it
            seen+="$name "
            user="$(unit_setting "$name" User)"
            in_list "$user" "$@" || continue
            text="$(unit_setting "$name" "$directive")"
            [[ -n "$text" ]] || text="$(systemd_default "Default$directive")"
            soft="$(systemd_soft "${text:-1024}" "$per_unit")"
            [[ -n "$text" || "$item" == nofile ]] || soft=""  # only nofile's default is known
            if [[ -z "$soft" ]] || ! limit_below "$soft" "$least"; then continue; fi
            value="$least"
            if [[ -z "$text" ]]; then  # systemd's own 1024:524288 (from 240): the hard kept
                (( least >= 524288 )) || value="$least:524288"
            elif [[ "$text" == *:* ]]; then
                hard="$(systemd_soft "${text#*:}" "$per_unit")"
                if [[ -n "$hard" ]] && ! limit_below "$hard" "$least"; then
                    value="$((least * per_unit)):${text#*:}"
                else
                    value="$((least * per_unit))"
                fi
            else
                value="$((least * per_unit))"
            fi
            write_file "$ROOT${LAYOUT_SYSTEMD_UNIT_DIRS%% *}/$name.d/90-sascheck-limits.conf" \
                "# Written by sascheck: the SAS account's $item limit
[Service]
$directive=$value
"
            if live; then
                warn "manual: $CURRENT_RULE: $name runs as $user; it takes $directive=$value when restarted: systemctl daemon-reload; systemctl restart $name"
            fi
        done
    done
}
