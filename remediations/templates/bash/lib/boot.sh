# ---- boot.sh: what every boot applies: kernel arguments, Transparent Huge Pages
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

# What undoes `grubby --args=NAME=VALUE`: the default entry's former NAME=OLD back, or the
# argument removed when it had none.
grubby_undo() {
    local argument="$1" line words=() word
    line="$(grubby --info=DEFAULT 2>/dev/null | grep -E '^args=' | head -n 1 || true)"
    line="${line#args=}"
    line="${line//\"/}"
    read -r -a words <<< "$line"
    for word in ${words[@]+"${words[@]}"}; do
        if [[ "$word" == "${argument%%=*}="* && "$word" != "$argument" ]]; then
            printf 'grubby --update-kernel=ALL --args=%s' "$word"
            return
        fi
    done
    printf 'grubby --update-kernel=ALL --remove-args=%s' "$argument"
}

# Make a kernel argument part of every boot entry and of the defaults new kernels get
# (MODE "remove": take it out of them all).
persist_kernel_arg() {
    local argument="$1" mode="${2:-set}" entry before="$CHANGES"
    if live && command -v grubby >/dev/null 2>&1; then
        if [[ "$mode" == remove ]]; then
            if grubby --info=ALL 2>/dev/null | grep -E '^args=' | grep -Eq -- "[\" ]${argument}[\" ]"; then
                UNDO="grubby --update-kernel=ALL --args=$argument" \
                    run_command grubby --update-kernel=ALL --remove-args="$argument"
            fi
        elif grubby --info=ALL 2>/dev/null | grep -E '^args=' | grep -vq -- "$argument"; then
            UNDO="$(grubby_undo "$argument")" run_command grubby --update-kernel=ALL --args="$argument"
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
    if live && (( CHANGES > before )) && [[ "$REBOOT_FOR" != *" $argument"* ]]; then
        REBOOT_FOR+=" $argument (kernel command line)"
    fi
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
    [[ -e "$rc" ]] || pending_at "$rc" || write_file "$rc" $'#!/bin/sh\n' 0755
    # Before a top-level exit, which would end the script before our lines.
    # shellcheck disable=SC2016  # the awk program is single-quoted on purpose
    THP_BLOCK="$THP_MARKER"$'\n'"${commands//; if/$'\n'if}" edit_file "$rc" '
        !done && /^exit([ \t]|$)/ { print ENVIRON["THP_BLOCK"]; done = 1 }
        { print }
        END { if (!done) print ENVIRON["THP_BLOCK"] }'
    current="$(current_content "$rc")"
    write_file "$rc" "${current%x}" 0755
    rc_local_runs_at_boot
}

# SysV runs rc.local from an S??local link in the run level it boots (/etc/inittab's
# initdefault, read as RHEL 6's upstart reads it: scanner/boot/target.py); where that run
# level has none, rc.local does not run, and the administrator links it.
rc_local_runs_at_boot() {
    local level link
    level="$(awk -F ':' '$3 == "initdefault" && $1 !~ "^#" { print $2; exit }' \
        "$ROOT$LAYOUT_INITTAB" 2>/dev/null || true)"
    [[ "$level" =~ ^[1-5Ss]$ ]] || return 0  # untold: every run level's links count
    [[ "$level" == [Ss] ]] && level=1
    for link in "$ROOT/etc/rc.d/rc$level.d"/S[0-9][0-9]local "$ROOT/etc/rc$level.d"/S[0-9][0-9]local; do
        if [[ -e "$link" || -L "$link" ]]; then return 0; fi
    done
    warn "manual: $CURRENT_RULE: rc.local does not run at run level $level" \
         "(/etc/inittab's initdefault): no S??local link in /etc/rc.d/rc$level.d;" \
         "link it (ln -s ../rc.local /etc/rc.d/rc$level.d/S99local)"
}
