"""The .wants directories whose units start at the next boot (scanner/boot/target.py), from
the kernel line's target words (systemd(1)) and default.target (issue 50)."""

from __future__ import annotations

import pytest

from sascheck.scanner.boot.target import boot_wants_dirs
from sascheck.scanner.sources.hostroot import HostRoot

from .rootbuilder import RootBuilder

WANTS = "/etc/systemd/system/{}.target.wants"


@pytest.mark.parametrize(("default", "args", "started"), [
    ("multi-user.target", (), {"multi-user", "basic", "sysinit", "sockets"}),
    ("graphical.target", (), {"graphical", "multi-user", "basic", "sysinit", "sockets"}),
    ("graphical.target", ("3",), {"multi-user", "basic", "sysinit", "sockets"}),
    ("multi-user.target", ("5",), {"graphical", "multi-user", "basic", "sysinit", "sockets"}),
    ("multi-user.target", ("systemd.unit=rescue.target",), {"sysinit"}),
    ("multi-user.target", ("5", "systemd.unit=multi-user.target"),
     {"multi-user", "basic", "sysinit", "sockets"}),  # the last word wins
    (None, (), {"graphical", "multi-user", "basic", "sysinit", "sockets"}),  # untold: all
])
def test_the_boot_target_decides_which_wants_start(tmp_path, default, args, started):
    root = RootBuilder(tmp_path)
    root.file("/etc/hostname", "sas01\n")
    if default:
        root.symlink("/etc/systemd/system/default.target", f"/usr/lib/systemd/system/{default}")
    assert set(boot_wants_dirs(HostRoot(str(tmp_path)), args)) == {
        WANTS.format(name) for name in started}
