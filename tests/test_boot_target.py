"""What the next boot starts (scanner/boot/target.py, issue 50): the .wants directories of
the targets the boot target reaches, from the kernel line's target words (systemd(1)),
default.target and the host's own target files; and SysV's run level."""

from __future__ import annotations

import pytest

from sascheck.scanner.boot.target import boot_runlevel, boot_starts, boot_wants_dirs
from sascheck.scanner.sources.hostroot import HostRoot

from .support.hosts import RHEL6_INITTAB
from .support.rootbuilder import RootBuilder

WANTS = "/etc/systemd/system/{}.target.wants"
SHIPPED = "/usr/lib/systemd/system"


def _systemd_root(tmp_path, default: str | None) -> RootBuilder:
    root = RootBuilder(tmp_path)
    root.file("/etc/hostname", "sas01\n")
    root.file(f"{SHIPPED}/multi-user.target", "[Unit]\nRequires=basic.target\n")
    if default:
        root.symlink("/etc/systemd/system/default.target", f"{SHIPPED}/{default}")
    return root


def _wants(dirs) -> set[str]:
    return {d for d in dirs if d.endswith(".wants")}


@pytest.mark.parametrize(("default", "args", "started"), [
    ("multi-user.target", (), {"multi-user", "basic", "sysinit", "sockets"}),
    ("graphical.target", (), {"graphical", "multi-user", "basic", "sysinit", "sockets"}),
    ("graphical.target", ("3",), {"multi-user", "basic", "sysinit", "sockets"}),
    ("multi-user.target", ("5",), {"graphical", "multi-user", "basic", "sysinit", "sockets"}),
    ("multi-user.target", ("systemd.unit=rescue.target",), {"sysinit", "rescue"}),
    ("multi-user.target", ("5", "systemd.unit=multi-user.target"),
     {"multi-user", "basic", "sysinit", "sockets"}),  # the last word wins
    (None, (), {"graphical", "multi-user", "basic", "sysinit", "sockets"}),  # untold: all
])
def test_the_boot_target_decides_which_wants_start(tmp_path, default, args, started):
    _systemd_root(tmp_path, default)
    assert _wants(boot_wants_dirs(HostRoot(str(tmp_path)), args)) == {
        WANTS.format(name) for name in started}


def test_a_sites_own_target_is_followed_through_its_file_drop_ins_and_wants(tmp_path):
    """A site's default target pulls in what its [Unit] Wants=/Requires= name (an empty
    assignment resets the list, as systemd's parser does), what its drop-ins add, and the
    targets linked in its .wants; each of those targets' .wants then start too."""
    root = _systemd_root(tmp_path, None)
    root.file("/etc/systemd/system/sas.target",
              "[Unit]\nDescription=SAS batch\nWants=graphical.target\nWants=\n"
              "Requires=multi-user.target\nAfter=multi-user.target\n[Install]\nWantedBy=x.target\n")
    root.symlink("/etc/systemd/system/default.target", "/etc/systemd/system/sas.target")
    root.file("/etc/systemd/system/sas.target.d/10-grid.conf", "[Unit]\nWants=grid.target\n")
    root.file(f"{SHIPPED}/grid.target", "[Unit]\nDescription=grid\n")
    root.symlink("/etc/systemd/system/sas.target.wants/nfs.target", f"{SHIPPED}/nfs.target")
    dirs = set(boot_wants_dirs(HostRoot(str(tmp_path))))
    assert _wants(dirs) == {WANTS.format(name) for name in (
        "sas", "grid", "nfs", "multi-user", "basic", "sysinit", "sockets")}
    assert "/etc/systemd/system/sas.target.requires" in dirs
    # the host's own multi-user.target decides over systemd's shipped graph
    root.file("/etc/systemd/system/multi-user.target", "[Unit]\nDescription=trimmed\n")
    assert WANTS.format("basic") not in boot_wants_dirs(HostRoot(str(tmp_path)))


@pytest.mark.parametrize(("inittab", "args", "level"), [
    (RHEL6_INITTAB.format(level=3), (), "3"),
    (RHEL6_INITTAB.format(level=5), (), "5"),
    (RHEL6_INITTAB.format(level=5), ("single",), "1"),  # rcS.conf: single|S|s|1
    (RHEL6_INITTAB.format(level=3), ("5",), "5"),
    ("#id:5:initdefault:\n", (), ""),  # a comment: init asks, sascheck cannot tell
    (None, (), ""),
])
def test_the_sysv_run_level_is_read_as_upstart_reads_it(tmp_path, inittab, args, level):
    root = RootBuilder(tmp_path)
    root.file("/etc/hostname", "sas01\n")
    if inittab is not None:
        root.file("/etc/inittab", inittab)
    assert boot_runlevel(HostRoot(str(tmp_path)), args)[0] == level
    starts = boot_starts(HostRoot(str(tmp_path)), args)
    if level:
        assert starts.rc_dirs == (f"/etc/rc.d/rc{level}.d", f"/etc/rc{level}.d")
        # no S99local in that run level: rc.local does not run
        assert starts.rc_local_skipped.startswith("no S??local link starts rc.local")
    else:
        assert starts.rc_dirs == ("/etc/rc.d/rc3.d", "/etc/rc3.d", "/etc/rc.d/rc5.d", "/etc/rc5.d")


def test_a_drop_in_adds_to_the_shipped_dependencies(tmp_path):
    """A site's drop-in for a shipped target (multi-user.target.d/*.conf) adds to what the
    target pulls in; a snapshot, which has no shipped unit file, keeps systemd's shipped
    dependencies beside it."""
    root = RootBuilder(tmp_path)
    root.file("/etc/hostname", "sas01\n")
    root.symlink("/etc/systemd/system/default.target", f"{SHIPPED}/multi-user.target")
    root.file("/etc/systemd/system/multi-user.target.d/50-sas.conf",
              "[Unit]\nWants=sas-batch.target\n")
    assert _wants(boot_wants_dirs(HostRoot(str(tmp_path)))) == {
        WANTS.format(name) for name in ("multi-user", "basic", "sysinit", "sockets", "sas-batch")}
