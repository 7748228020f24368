# ---- tuned.sh: tuned (2.x) and RHEL 5/6's tuned 0.2 and ktune
# Whether tuned here (or in the image) can load profile NAME: a tuned.conf in one of its
# profile directories, either layout (scanner/tuned/active.py's available_profiles).
tuned_has_profile() {
    local dir
    [[ "$1" =~ ^[A-Za-z0-9_.-]+$ ]] || return 1
    for dir in $LAYOUT_TUNED_PROFILE_DIRS; do
        if [[ -f "$ROOT$dir/$1/tuned.conf" ]]; then return 0; fi
    done
    return 1
}

# A tuned profile named NAME that sascheck did not write (its first line says whose it is):
# printed where found. A fix never replaces it (issue 48): the site's settings would go.
foreign_profile() {
    local dir file first
    for dir in $LAYOUT_TUNED_PROFILE_DIRS; do
        file="$ROOT$dir/$1/tuned.conf"
        [[ -f "$file" ]] || continue
        first="$(head -n 1 -- "$file" 2>/dev/null || true)"
        if [[ "$first" != "# $1: a tuned profile for SAS, written by sascheck "* ]]; then
            printf '%s' "$dir/$1/tuned.conf"
            return 0
        fi
    done
    return 1
}

# The profiles sas-performance may include, best first, one a line: the site's own active
# profile, tuned's own for the role, then the site's allowed ones (generate.py's
# tuned_include_candidates).
tuned_include_candidates() {
    local pair name
    if [[ -n "$TUNED_SITE_PROFILE" ]]; then printf '%s\n' "$TUNED_SITE_PROFILE"; fi
    for pair in $LAYOUT_TUNED_ROLE_PROFILES; do
        if [[ "${pair%%:*}" == "$ROLE" ]]; then printf '%s\n' "${pair#*:}"; fi
    done
    for name in ${ALLOWED_TUNED_PROFILES[@]+"${ALLOWED_TUNED_PROFILES[@]}"}; do
        if [[ "$name" != "$TUNED_PROFILE_NAME" ]]; then printf '%s\n' "$name"; fi
    done
}

# The first candidate this host has; nothing when it has none (tuned refuses a profile whose
# include is missing, and would then start with no tuning at all).
tuned_include() {
    local name
    while IFS= read -r name; do
        if tuned_has_profile "$name"; then printf '%s' "$name"; return; fi
    done < <(tuned_include_candidates)
}

# A file of the installed tuned's Python package (tuned/NAME), as a path on this machine;
# nothing when there is none.
tuned_package_file() {
    local dir packages file
    for dir in "$ROOT$LAYOUT_TUNED_VERSION_PARENT"/python[23]*; do
        for packages in $LAYOUT_TUNED_VERSION_DIRS; do
            file="$dir/$packages/tuned/$1"
            if [[ -f "$file" ]]; then printf '%s' "$file"; return; fi
        done
    done
}

# Where the site's own profiles go, decided as scanner/tuned/layout.py decides: the installed
# consts.py (a build choice: tuned.spec keeps /etc/tuned where rhel < 10, so RHEL 9's 2.25
# has it), else the directories the package made, else the release (2.23 moved them).
tuned_user_dir() {
    local file dir version=""
    file="$(tuned_package_file consts.py)"
    if [[ -n "$file" ]]; then
        dir=$(sed -n -e 's/^LOAD_DIRECTORIES[[:space:]]*=[[:space:]]*\[[[:space:]]*"[^"]*"[[:space:]]*,[[:space:]]*"\(\/[^"]*\)".*/\1/p' \
                     -e 's/^USER_PROFILES_DIR[[:space:]]*=[[:space:]]*"\(\/[^"]*\)".*/\1/p' "$file" | head -n 1)
        if [[ -z "$dir" ]] && grep -q '^SYSTEM_PROFILE_DIR[[:space:]]*=' "$file"; then
            dir="/etc/tuned/$LAYOUT_TUNED_PROFILES_SUBDIR"
        fi
        if [[ -n "$dir" && "/$dir/" != *"/../"* ]]; then printf '%s' "$dir"; return; fi
    fi
    if [[ -d "$ROOT$LAYOUT_TUNED_NEW_LAYOUT" ]]; then
        printf '/etc/tuned/%s' "$LAYOUT_TUNED_PROFILES_SUBDIR"
    elif [[ -d "$ROOT$LAYOUT_TUNED_SHIPPED_PROFILES" ]]; then
        printf /etc/tuned
    else
        tuned_version_into version
        if [[ -n "$version" ]] && (( 10#${version% *} > 2 || (10#${version% *} == 2 && 10#${version#* } >= 23) )); then
            printf '/etc/tuned/%s' "$LAYOUT_TUNED_PROFILES_SUBDIR"
        else
            printf /etc/tuned
        fi
    fi
}

# The installed tuned's "MAJOR MINOR" from its tuned/version.py (scanner/tuned/active.py's
# tuned_version); nothing when no such file says it.
tuned_version() {
    local file major minor
    file="$(tuned_package_file version.py)"
    [[ -n "$file" ]] || return 0
    major=$(sed -n 's/^TUNED_VERSION_MAJOR[[:space:]]*=[[:space:]]*\([0-9]\{1,4\}\)[[:space:]]*$/\1/p' "$file" | head -n 1)
    minor=$(sed -n 's/^TUNED_VERSION_MINOR[[:space:]]*=[[:space:]]*\([0-9]\{1,4\}\)[[:space:]]*$/\1/p' "$file" | head -n 1)
    if [[ -n "$major" && -n "$minor" ]]; then printf '%s %s' "$major" "$minor"; fi
}

# Sets the variable named $1 to tuned_version's answer, read once a run (a dozen rules ask;
# each reading was six processes) and again after this run installs tuned.
TUNED_VERSION_READ=0
TUNED_VERSION_CACHE=""
tuned_version_into() {
    if (( ! TUNED_VERSION_READ )); then
        TUNED_VERSION_CACHE="$(tuned_version)"
        TUNED_VERSION_READ=1
    fi
    printf -v "$1" '%s' "$TUNED_VERSION_CACHE"
}

# Whether this tuned reads ">N" (base.py's assignment modifiers, from 2.4): tuned 2.3
# (RHEL 7.0) hands ">4096" to int() and sets nothing. An unknown version is taken as newer.
tuned_has_modifiers() { tuned_at_least "$LAYOUT_TUNED_MODIFIERS_SINCE"; }

# The sas-performance profile for this host, in TUNED_TEXT: its include, a read-ahead never
# below the included profile's own floor (">N", or plain N where tuned has no modifiers),
# no dirty_ratio where the site chose dirty_bytes, and the sysctl keys fixes keep in it.
TUNED_DIRTY_SECTION=$'\n\n[sysctl]\nvm.dirty_ratio=@DIRTY_RATIO@\n'
tuned_profile_text() {
    local include="$1" floor=0 pair
    if [[ "$ROLE" == kvm_host ]]; then TUNED_TEXT="$TUNED_PROFILE_KVM_HOST"; else TUNED_TEXT="$TUNED_PROFILE_THP_OFF"; fi
    for pair in $LAYOUT_TUNED_STOCK_READAHEAD; do
        if [[ "${pair%%:*}" == "$include" ]]; then floor="${pair#*:}"; fi
    done
    TUNED_TEXT="${TUNED_TEXT//@INCLUDE@/$include}"
    TUNED_TEXT="${TUNED_TEXT//@READ_AHEAD_MIN_KB@/$((READ_AHEAD_MIN_KB > floor ? READ_AHEAD_MIN_KB : floor))}"
    if ! tuned_has_modifiers; then TUNED_TEXT="${TUNED_TEXT//readahead=>/readahead=}"; fi
    if dirty_bytes_chosen; then TUNED_TEXT="${TUNED_TEXT/"$TUNED_DIRTY_SECTION"/$'\n'}"; fi
    TUNED_TEXT="${TUNED_TEXT//@DIRTY_RATIO@/$DIRTY_RATIO}"
    TUNED_TEXT="$(sysctl_section_set "$TUNED_TEXT" "$(tuned_kept_sysctl)"$'\n'"$TUNED_SYSCTL")"$'\n'
}

# The [sysctl] lines of the profile an earlier run wrote beyond the template's own key: kept
# when the profile is written again. Nothing is read from a profile sascheck did not write.
tuned_kept_sysctl() {
    local current line key section=""
    foreign_profile "$TUNED_PROFILE_NAME" >/dev/null && return 0
    current="$(current_content "$ROOT$(tuned_user_dir)/$TUNED_PROFILE_NAME/tuned.conf")"
    while IFS= read -r line; do
        if [[ "$line" =~ ^\[.*\][[:space:]]*$ ]]; then section="${line%%]*}]"; continue; fi
        [[ "$section" == "[sysctl]" && "$line" =~ ^[[:space:]]*[A-Za-z0-9_./-]+[[:space:]]*=[^[:cntrl:]]+$ ]] || continue
        key="${line%%=*}" line="${line#*=}"
        key="${key//[[:space:]]/}"
        line="${line#"${line%%[![:space:]]*}"}"
        if [[ "$key" != "$TUNED_TEMPLATE_SYSCTL" ]]; then printf '%s=%s\n' "$key" "$line"; fi
    done <<< "${current%x}"
}

# ktune.init exits at once where /etc/sysconfig/ktune is missing.
ktune_started() { sysv_started "$LAYOUT_KTUNE_SYSV" && [[ -e "$ROOT$LAYOUT_KTUNE_SYSCONFIG" ]]; }

# A ktune.d entry's name as a message may show it: a file name from the host reaches the
# terminal only when it is plainly a name.
ktune_script_name() {
    local name="${1#"$ROOT"}"
    if udev_safe "${name##*/}"; then printf '%s' "$name"; else printf 'a script in %s' "$LAYOUT_KTUNE_SCRIPTS"; fi
}

# The scripts ktune runs at boot: X.sh beside each /etc/ktune.d/X.conf, when executable
# (ktune.init's call_script; scanner/tuned/ktune.py). Each as two NUL-ended paths under $ROOT: the
# ktune.d entry, and the file to read (offline, a link's absolute target inside the image).
ktune_scripts() {
    local conf script target
    ktune_started || return 0
    grep -Eqs '^[[:space:]]*USE_KTUNE_D=["'"'"']?yes["'"'"']?[[:space:]]*$' \
        "$ROOT$LAYOUT_KTUNE_SYSCONFIG" || return 0
    for conf in "$ROOT$LAYOUT_KTUNE_SCRIPTS"/*.conf; do
        script="${conf%.conf}.sh"
        if [[ -L "$script" ]] && ! live; then
            target="$(readlink -- "$script")"
            if [[ "$target" == /* ]]; then target="$ROOT$target"; else target="${script%/*}/$target"; fi
        else
            target="$script"
        fi
        if [[ -f "$target" && -x "$target" ]] && confined "$target"; then
            printf '%s\0%s\0' "$script" "$target"
        fi
    done
}

# RHEL 5/6: ktune scripts whose start() multiplies every disk's read-ahead by less than 1
# (multiply_disk_readahead 0.25 belongs in stop()), after udev set it. Not rewritten (the
# script belongs to a tuned 0.2 profile): said.
ktune_lowers_read_ahead() {
    local script file name
    while IFS= read -r -d '' script && IFS= read -r -d '' file; do
        name="$(ktune_script_name "$script")"
        if awk '/^start\(\)/ { body = 1 } body && /^}/ { body = 0 }
                body && $1 == "multiply_disk_readahead" && $2 + 0 < 1 { found = 1 }
                END { exit !found }' "$file"; then
            warn "manual: $name (ktune) lowers every disk's read-ahead at each" \
                 "boot after udev: remove its multiply_disk_readahead line from start()"
        fi
    done < <(ktune_scripts)
}

# RHEL 5 has no tuned: its ktune service is the throughput tuning; start it at every boot.
apply_rhel5_ktune() {
    if ktune_started; then return 0; fi
    if live && [[ ! -e /etc/rc.d/init.d/ktune ]]; then
        if [[ "$INSTALL_TUNED" == yes ]]; then run_command yum -y install ktune
        else warn "manual: $CURRENT_RULE: ktune is not installed; install it (yum install ktune), or run" \
                  "with SASCHECK_INSTALL_TUNED=yes"; return 0; fi
    fi
    if live; then
        UNDO="chkconfig ktune off" run_command chkconfig ktune on
        UNDO="service ktune stop" run_command service ktune start
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
        UNDO="$(tuned_undo "$(tuned_active)")" run_command tuned-adm profile "$name"
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
    local script file
    while IFS= read -r -d '' script && IFS= read -r -d '' file; do
        if [[ "$script" == "$ROOT$LAYOUT_KTUNE_SCRIPTS/tunedadm.sh" ]] \
                && grep -Eqs "$LAYOUT_KTUNE_NOBARRIER" "$file"; then return 0; fi
    done < <(ktune_scripts)
    return 1
}

# Whether the host's tune-profiles/functions defines a function (scanner/tuned/ktune.py): where the
# file is missing, tuned's 1.0 branch (RHEL 6) stands in, which has disable_disk_barriers and
# set_transparent_hugepages (and not v0.2.22's remount_partitions).
ktune_defines() {
    local functions="$ROOT$LAYOUT_TUNED02_FUNCTIONS"
    if [[ -f "$functions" ]]; then
        grep -Eqs "^[[:space:]]*$1[[:space:]]*\\(\\)" "$functions"
    else
        [[ "$1" == disable_disk_barriers || "$1" == set_transparent_hugepages ]]
    fi
}

# tuned's programs exist (scanner/tuned/active.py reads the same files).
tuned_installed() {
    local binary
    for binary in $LAYOUT_TUNED_BINARIES; do
        if [[ -e "$ROOT$binary" ]]; then return 0; fi
    done
    return 1
}

# The active tuned profile(s) as tuned-adm reports them ("Current active profile: NAME"),
# or nothing (tuned off, or no answer).
tuned_active() {
    local line prefix="Current active profile: "
    while IFS= read -r line; do
        if [[ "$line" == "$prefix"* ]]; then printf '%s' "${line#"$prefix"}"; return; fi
    done < <(tuned-adm active 2>/dev/null || true)
}

# The profile(s) tuned runs or starts with: sas-performance once this run started it (or, in
# a dry run, would have), else tuned-adm's answer on a live host, else (tuned stopped, or an
# image) the active-profile file tuned reads at start.
TUNED_STARTED=0
tuned_boot_profile() {
    local active="" file="$ROOT${LAYOUT_TUNED_ACTIVE_FILES%% *}"
    if (( TUNED_STARTED )); then printf '%s' "$TUNED_PROFILE_NAME"; return; fi
    if live; then active="$(tuned_active)"; fi
    if [[ -z "$active" && -r "$file" ]]; then active="$(head -n 1 -- "$file" 2>/dev/null || true)"; fi
    printf '%s' "$active"
}

# Whether profile NAME is the one tuned runs or starts with.
tuned_selected() { [[ " $(tuned_boot_profile) " == *" $1 "* ]]; }

# What undoes `tuned-adm profile sas-performance`, given what was active before: that profile
# again, or tuned-adm off; nothing to record when sas-performance was already active (an
# earlier run's manifest holds the way back).
tuned_undo() {
    local before="$1"
    if [[ -z "$before" ]]; then printf 'tuned-adm off'
    elif [[ "$before" != "$TUNED_PROFILE_NAME" && "$before" =~ ^[A-Za-z0-9_.\ -]+$ ]]; then
        printf 'tuned-adm profile %s' "$before"
    fi
}

# Install the sas-performance tuned profile, enable tuned at boot and activate it.
apply_tuned_profile() {
    local tuned_ready=1 include before found
    if [[ "$(kernel_release)" == "$LAYOUT_RHEL5_KERNEL_PREFIX"* ]] && ! tuned_installed; then
        apply_rhel5_ktune
        return 0
    fi
    if ! tuned_installed; then
        if [[ "$INSTALL_TUNED" == yes ]] && live; then
            if command -v dnf >/dev/null 2>&1; then run_command dnf -y install tuned; else run_command yum -y install tuned; fi
            TUNED_VERSION_READ=0  # the package just installed has a version of its own
        else
            warn "manual: $CURRENT_RULE: tuned is not installed; install it, or run with SASCHECK_INSTALL_TUNED=yes"
            tuned_ready=0
        fi
    fi
    if (( tuned_ready )) && ! uses_systemd; then
        # RHEL 5/6: a shipped tuned 0.2 profile, as tuned-adm activates it; chkconfig and
        # service, never systemctl. A site's own profile stays: tuned 0.2 cannot include
        # it, and replacing it would drop what it does (seed 003's cpu_dma_latency).
        if [[ -n "$TUNED_SITE_PROFILE" ]]; then
            warn "manual: $CURRENT_RULE: $TUNED_SITE_PROFILE is the site's own tuned profile:" \
                 "kept; give its ktune.sh what the scan found missing (see the evidence), or" \
                 "choose $TUNED_SYSV_PROFILE (tuned-adm profile $TUNED_SYSV_PROFILE)"
            return 0
        fi
        if live; then
            sysv_started tuned || UNDO="chkconfig tuned off" run_command chkconfig tuned on
            ktune_started || UNDO="chkconfig ktune off" run_command chkconfig ktune on
        fi
        activate_tuned02_profile "$TUNED_SYSV_PROFILE" || true
        return 0
    fi
    (( tuned_ready )) || return 0
    include="$(tuned_include)"
    if [[ -z "$include" ]]; then
        warn "manual: $CURRENT_RULE: this host has none of the tuned profiles" \
             "$TUNED_PROFILE_NAME could include ($(tuned_include_candidates | tr '\n' ' ')):" \
             "tuned refuses a profile whose include is missing, so tuned is left as it is;" \
             "install throughput-performance (package tuned) and run the fix again"
        return 0
    fi
    before="$CHANGES"
    if found="$(foreign_profile "$TUNED_PROFILE_NAME")"; then
        if ! tuned_selected "$TUNED_PROFILE_NAME"; then
            warn "manual: $CURRENT_RULE: $found is a" \
                 "$TUNED_PROFILE_NAME profile sascheck did not write: kept, not replaced; add to" \
                 "it what the scan found missing (see the evidence), or rename it and run the" \
                 "fix again (sascheck's profile then includes it while it is active)"
            return 0
        fi
        # The site's own, and the one selected: kept as it is; tuned is started below, and
        # what the profile itself lacks is the site's to add.
        warn "manual: $CURRENT_RULE: $found, the site's own $TUNED_PROFILE_NAME profile, is" \
             "kept as it is (tuned is started with it); if a new scan still fails this rule," \
             "add to it what the evidence names"
    else
        tuned_profile_text "$include"
        write_file "$ROOT$(tuned_user_dir)/$TUNED_PROFILE_NAME/tuned.conf" "$TUNED_TEXT"
    fi
    start_tuned_profile "$before"
}

# tuned enabled at boot with sas-performance active (once a run), activated again where its
# file changed since CHANGES was BEFORE (tuned reads a profile only when one is activated).
start_tuned_profile() {
    local before="$1" active wants
    if live; then
        if (( ! TUNED_STARTED )) && ! systemctl is-enabled --quiet tuned 2>/dev/null; then
            UNDO="systemctl disable --now tuned" run_command systemctl enable --now tuned
        fi
        active="$(tuned_active)"
        if (( CHANGES > before )) \
                || { (( ! TUNED_STARTED )) && [[ "$active" != "$TUNED_PROFILE_NAME" ]]; }; then
            UNDO="$(tuned_undo "$active")" run_command tuned-adm profile "$TUNED_PROFILE_NAME"
        fi
    elif (( ! TUNED_STARTED )); then
        wants="$ROOT${LAYOUT_SYSTEMD_WANTS_DIRS%% *}/tuned.service"
        make_link "$wants" /usr/lib/systemd/system/tuned.service
        # What tuned-adm profile would write, so the image boots with the profile.
        write_file "$ROOT${LAYOUT_TUNED_ACTIVE_FILES%% *}" "$TUNED_PROFILE_NAME"$'\n'
        write_file "$ROOT/etc/tuned/profile_mode" "manual"$'\n'
    fi
    TUNED_STARTED=1
}
