"""XFS's barrier options as the kernel takes them (issue 35): removed in Linux 4.19 (commit
1c02d502c208) and in RHEL 8's 4.18, where an fstab entry with nobarrier does not mount and
the host boots to emergency mode; ext4 still takes them. The boot-time rule fails such an
entry whatever the storage cache, and the fix removes it, never writes it."""

from __future__ import annotations

import os
import subprocess
from contextlib import ExitStack

import pytest

from sascheck.rules.host_layout import xfs_refuses_barrier_options

from .support.fix_hosts import verdicts
from .support.hosts import BASELINE_SETS, sas_host
from .support.lab import make_fs, prerequisites_missing
from .support.remedy import generate, run_bash
from .support.verdict_hosts import data_fs

PROTECTED = [*BASELINE_SETS, "storage_cache_protected=true"]


@pytest.mark.live
@pytest.mark.skipif(prerequisites_missing() is not None, reason="needs root and loop devices")
def test_this_kernel_refuses_xfs_nobarrier_and_ext4_takes_it(tmp_path):
    """The real kernel decides: on this machine's (>= 4.19) XFS refuses nobarrier."""
    assert xfs_refuses_barrier_options(os.uname().release)
    with ExitStack() as stack:
        xfs = make_fs(stack, tmp_path, "x", "xfs", "noatime", 300)
        ext4 = make_fs(stack, tmp_path, "e", "ext4", "noatime", 64)
        for fs, accepted in ((xfs, False), (ext4, True)):
            subprocess.run(["umount", str(fs.mountpoint)], check=True)
            done = subprocess.run(["mount", "-o", "noatime,nobarrier", fs.device,
                                   str(fs.mountpoint)], capture_output=True, text=True)
            assert (done.returncode == 0) == accepted, (fs.fstype, done.stderr)


@pytest.mark.parametrize(("kernel", "fstype", "kept"), [
    ("4.18.0-513.el8.x86_64", "xfs", False),  # RHEL 8: removed, whatever the cache
    ("5.14.0-427.el9.x86_64", "xfs", False),
    ("3.10.0-1160.el7.x86_64", "xfs", True),  # RHEL 7 XFS takes it: the site's choice stays
    ("5.14.0-427.el9.x86_64", "ext4", True),
])
def test_the_fix_removes_xfs_nobarrier_where_the_kernel_refuses_it(tmp_path, kernel, fstype,
                                                                    kept):
    root = sas_host(tmp_path / "root", kernel=kernel, filesystems=data_fs(
        fstype, "rw,noatime", "defaults,noatime,nobarrier"))
    before = verdicts(root, PROTECTED)["mount_options_at_boot"]
    assert before == ("pass" if kept else "fail")
    run_bash(generate("bash", tmp_path / "fix.sh", root, PROTECTED), root)
    fstab = (root / "etc/fstab").read_text()
    line = next(line for line in fstab.splitlines() if " /sasdata " in line)
    assert ("nobarrier" in line) == kept, line
    assert fstab.endswith("\n")
    assert verdicts(root, PROTECTED)["mount_options_at_boot"] == "pass"
