"""A corpus of hostile roots: every scan ends, rule by rule, with a verdict and a reason,
never a traceback, and within a generous hang guard (not a speed assertion)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .support.boot_samples import multipath_conf
from .support.hosts import SasFs, sas_host

HANG_GUARD = 120  # seconds: only there to turn a hang into a failure


def _loops(root: Path) -> None:
    (root / "sys/block/loopa").symlink_to("loopb")
    (root / "sys/block/loopb").symlink_to("loopa")
    cpufreq = root / "sys/devices/system/cpu/cpu0/cpufreq"
    if cpufreq.is_symlink():
        cpufreq.unlink()
    cpufreq.symlink_to("cpufreq")
    thp = root / "sys/kernel/mm/transparent_hugepage"
    for child in thp.iterdir():
        child.unlink()
    thp.rmdir()
    thp.symlink_to("transparent_hugepage/x")
    slaves = root / "sys/devices/virtual/block/dm-1/slaves"
    (slaves / "self").symlink_to("../../dm-1")  # a device that is its own slave


def _huge_mounts(root: Path) -> None:
    lines = [f"/dev/sd{i % 26} /mnt/m{i} xfs rw,noatime 0 0" for i in range(30000)]
    lines.insert(500, "x" * 5000)
    text = (root / "proc/mounts").read_text() + "\n".join(lines) + "\n"
    (root / "proc/mounts").write_text(text)
    assert len(text) > 1_000_000


def _garbage(root: Path) -> None:
    rng = random.Random(7)
    for path in ["sys/block/sdb/queue/scheduler", "sys/devices/virtual/block/dm-2/dm/name",
                 "proc/cpuinfo", "etc/tuned/active_profile", "proc/sys/vm/dirty_ratio",
                 "sys/kernel/mm/transparent_hugepage/enabled",
                 "opt/sas/SASHome/SASFoundation/9.4/sasv9_local.cfg", "etc/default/grub"]:
        target = (root / path).resolve()
        target.write_bytes(bytes(rng.randrange(256) for _ in range(2048)))


def _unreadable(root: Path) -> None:
    for path in ["proc/sys/vm/dirty_ratio", "etc/tuned/active_profile",
                 "sys/kernel/mm/transparent_hugepage/defrag"]:
        (root / path).unlink()
        os.mkfifo(root / path)  # reading would block forever: must be refused
    (root / "etc/default/grub").unlink()
    (root / "etc/default/grub").mkdir()
    (root / "proc/cpuinfo").chmod(0)


def _odd_mount_points(root: Path) -> None:
    pass  # built with the names below


ODD = [SasFs("sasdata", "/sas\ndata"), SasFs("saswork", "/sas work\\x"),
       SasFs("sasutil", "/sas\tutil\r")]

CORPUS: dict[str, tuple[Callable[[Path], None], dict]] = {
    "symlink loops under /sys": (_loops, {}),
    "a /proc/mounts of more than 1 MB": (_huge_mounts, {}),
    "binary garbage in sysfs and configuration": (_garbage, {}),
    "files that cannot be read": (_unreadable, {}),
    "mount points with newlines, tabs and \\040": (_odd_mount_points, {"filesystems": ODD}),
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_hostile_root_scans_end_with_reasons(tmp_path, name):
    damage, changes = CORPUS[name]
    root = sas_host(tmp_path / "root", **changes)
    damage(root)
    dirs = ",".join(fs.mountpoint.replace(",", "") for fs in ODD) if changes else "/sasdata"
    completed = subprocess.run(
        [sys.executable, "-m", "sascheck", "scan", "--root", str(root), "--quiet", "--json", "-",
         "--set", f"sas_data_dirs={dirs}"],
        capture_output=True, text=True, timeout=HANG_GUARD)
    assert completed.returncode in (0, 2, 4), completed.stderr  # 4: nothing judged
    assert "Traceback" not in completed.stderr
    result = json.loads(completed.stdout)
    for rule in result["rules"]:
        if rule["result"] == "error":
            assert rule["message"] or any(e.get("note") for e in rule["evidence"]), rule
        assert rule["result"] in {"pass", "fail", "error", "notapplicable", "notchecked"}
    html = tmp_path / "r.html"
    report = subprocess.run([sys.executable, "-m", "sascheck", "report", "-o", str(html),
                             "/dev/stdin"], input=completed.stdout, capture_output=True,
                            text=True, timeout=HANG_GUARD)
    assert report.returncode == 0, report.stderr


def test_each_damage_is_seen(tmp_path):
    """The corpus is not vacuous: each kind of damage changes what the scan says."""
    root = sas_host(tmp_path / "unreadable")
    _unreadable(root)
    completed = subprocess.run([sys.executable, "-m", "sascheck", "scan", "--root", str(root),
                                "--quiet", "--json", "-", "--set", "sas_data_dirs=/sasdata"],
                               capture_output=True, text=True, timeout=HANG_GUARD)
    rules = {r["id"]: r for r in json.loads(completed.stdout)["rules"]}
    assert rules["vm_dirty_ratio"]["result"] == "error"
    assert "not a regular file" in rules["vm_dirty_ratio"]["message"]
    assert rules["thp_defrag_disabled"]["result"] == "error"
    looped = sas_host(tmp_path / "loops")
    _loops(looped)
    completed = subprocess.run([sys.executable, "-m", "sascheck", "scan", "--root", str(looped),
                                "--quiet", "--json", "-", "--set", "sas_data_dirs=/sasdata"],
                               capture_output=True, text=True, timeout=HANG_GUARD)
    data = json.loads(completed.stdout)
    assert any("symbolic links" in problem for problem in data["problems"])
    thp = {r["id"]: r for r in data["rules"]}["thp_disabled"]
    assert thp["result"] in ("error", "notapplicable")


def _scan_json(root: Path) -> dict[str, dict]:
    completed = subprocess.run(
        [sys.executable, "-m", "sascheck", "scan", "--root", str(root), "--quiet", "--json", "-",
         "--set", "sas_data_dirs=/sasdata"], capture_output=True, text=True, timeout=HANG_GUARD)
    return {r["id"]: r for r in json.loads(completed.stdout)["rules"]}


# Expressions that backtrack exponentially in Python's re against a subject that almost
# matches; the last three passed the syntactic guard sascheck used before RE2.
BACKTRACKING = {"(a+)+$": "a", "(x|x)*y": "x", "(?:a|a)*y": "a", ".*.*.*.*.*.*.*.*.*.*=y": "="}


@pytest.mark.parametrize("pattern", sorted(BACKTRACKING))
def test_a_tuned_unit_regex_that_would_backtrack_is_run_in_linear_time(tmp_path, pattern):
    """A unit's cpuinfo_regex comes from the host. Against 30,000 near-matching characters
    each of these runs for hours in Python's re (tuned's engine); RE2 answers at once: the
    unit does not match this host, so its THP setting does not count."""
    profile = ("[main]\nsummary=hostile\n\n[vm.evil]\ntype=vm\n"
               f"cpuinfo_regex={pattern}\ntransparent_hugepages=never\n")
    root = sas_host(tmp_path / "root", tuned_active="evil", tuned_custom={"evil": profile},
                    bls_options="root=/dev/sda ro", grub_cmdline="",
                    extra_files={"/proc/cpuinfo": BACKTRACKING[pattern] * 30000 + "!\n"})
    thp = _scan_json(root)["thp_disabled_at_boot"]
    assert thp["result"] == "fail"
    assert any("cpuinfo_regex does not match this host" in (e.get("note") or "")
               for e in thp["evidence"])


def test_a_tuned_unit_regex_re2_cannot_run_is_reported_not_run(tmp_path):
    """A back-reference needs backtracking: the unit is reported as not evaluated."""
    profile = ("[main]\nsummary=hostile\n\n[vm.evil]\ntype=vm\ncpuinfo_regex=(a*)*\\1b\n"
               "transparent_hugepages=never\n")
    root = sas_host(tmp_path / "root", tuned_active="evil", tuned_custom={"evil": profile},
                    bls_options="root=/dev/sda ro", grub_cmdline="")
    thp = _scan_json(root)["thp_disabled_at_boot"]
    assert thp["result"] == "fail"
    assert any("cannot be evaluated safely" in (e.get("note") or "") for e in thp["evidence"])


def test_a_multipath_vendor_regex_that_would_backtrack_is_run_in_linear_time(tmp_path):
    """multipath.conf's vendor is a regular expression the host wrote, matched against the
    paths' SCSI vendor (a doctored image can make it 4,000 bytes, the most sascheck reads of an attribute)."""
    conf = multipath_conf('devices {\n\tdevice {\n\t\tvendor "(a+)+$"\n\t\tproduct ".*"\n'
                          "\t\tpath_grouping_policy multibus\n\t}\n}\n")
    near = sas_host(tmp_path / "near", path_vendor="a" * 4000 + "!",
                    extra_files={"/etc/multipath.conf": conf})
    # Neither the site's entry nor RHEL 8's built-in table matches: failover, and at once.
    assert _scan_json(near)["multipath_all_paths_active"]["result"] == "fail"
    matching = sas_host(tmp_path / "match", path_vendor="a" * 4000,
                        extra_files={"/etc/multipath.conf": conf})
    assert _scan_json(matching)["multipath_all_paths_active"]["result"] == "pass"
