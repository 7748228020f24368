"""Where the SAS accounts' resource limits come from: pam_limits for login sessions,
systemd for the services it starts, and the running processes (scanner/system/limits.py)."""

from __future__ import annotations

# -- accounts -----------------------------------------------------------------------------
PASSWD = "/etc/passwd"
GROUP = "/etc/group"

# -- pam_limits (Linux-PAM modules/pam_limits/pam_limits.c) -------------------------------
# limits.conf is read first, then limits.d/*.conf in file-name order; every file adds to
# one table, in which a user entry beats a group entry beats '*' wherever each is, and at
# the same rank the entry read last wins (process_limit's src_soft/src_hard).
LIMITS_CONF = "/etc/security/limits.conf"
LIMITS_D = "/etc/security/limits.d"
# The module itself, where the host keeps it (RHEL 7 on: /usr/lib64; RHEL 5 and 6: /lib64):
# whether it maps an unlimited nofile to fs.nr_open (linux-pam 1.5.2, commit 3234488f, or a
# backport) is told by the path it reads that value from, which only such a build carries.
PAM_LIMITS_MODULES = ("/usr/lib64/security/pam_limits.so", "/lib64/security/pam_limits.so",
                      "/usr/lib/security/pam_limits.so", "/lib/security/pam_limits.so")
PAM_NR_OPEN_MARK = b"/proc/sys/fs/nr_open"
# fs.nr_open: the most open files a process may have; setrlimit refuses a higher nofile hard
# limit with EPERM (kernel/sys.c do_prlimit). The kernel's default is 1024 * 1024
# (fs/file.c sysctl_nr_open).
NR_OPEN = "/proc/sys/fs/nr_open"
NR_OPEN_DEFAULT = 1024 * 1024
# Items sascheck judges: pam_limits' item name -> (systemd's directive, /proc/PID/limits
# row, unit pam_limits and `ulimit` give it in, bytes per unit in /proc/PID/limits and
# systemd's directive). pam_limits reads stack in KiB (it multiplies by 1024).
LIMIT_ITEMS = {
    "nofile": ("LimitNOFILE", "Max open files", "files", 1),
    "nproc": ("LimitNPROC", "Max processes", "processes", 1),
    "stack": ("LimitSTACK", "Max stack size", "KiB", 1024),
}
# The soft limit a session or service has where nothing sets the item: the kernel's
# INR_OPEN_CUR (1024 open files; systemd keeps it soft, include/linux/fs.h), _STK_LIM (8 MiB
# of stack, include/uapi/linux/resource.h). nproc's is sized from memory at boot
# (kernel/fork.c, max_threads / 2): not known from files (None).
INHERITED_SOFT = {"nofile": 1024, "nproc": None, "stack": 8192}
# The hard limit they inherit, by kernel release prefix (the first that matches): the
# kernel's INR_OPEN_MAX (4096) under RHEL 6's init and RHEL 7's systemd 219; 524288 from
# systemd 240 (RHEL 9 on; whether RHEL 8's systemd 239 carries that change is not known here:
# None). Stack's hard limit is unlimited; nproc's is sized from memory.
UNLIMITED_LIMIT = "unlimited"
INHERITED_HARD: dict[str, tuple[tuple[str, str | None], ...]] = {
    "nofile": (("2.", "4096"), ("3.", "4096"), ("4.18.", None), ("", "524288")),
    "stack": (("", UNLIMITED_LIMIT),),
    "nproc": (("", None),),
}

# -- systemd ------------------------------------------------------------------------------
# DefaultLimitNOFILE= and the like for every service (systemd-system.conf(5)): system.conf,
# then system.conf.d drop-ins in name order.
SYSTEMD_SYSTEM_CONF = "/etc/systemd/system.conf"
SYSTEMD_SYSTEM_CONF_DIRS = ("/etc/systemd/system.conf.d", "/run/systemd/system.conf.d",
                            "/usr/lib/systemd/system.conf.d")
PROC = "/proc"  # /proc/PID/status (Uid:) and /proc/PID/limits of running processes
