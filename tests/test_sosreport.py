"""`sascheck scan --sosreport`: a sosreport scanned gives the verdicts the host itself gives.

Built sosreports (tests/support/sosbuilder.py) have the layout of sos 4.x on RHEL; the live test
runs the real `sos report` on loop devices it makes and compares with a live scan.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from sascheck.cli import main
from sascheck.rules import Catalogue
from sascheck.scanner.scan import run_scan
from sascheck.scanner.sources.sosreport import LSBLK, LSBLK_TREE, opened

from .support.boot_samples import MULTIPATH_T_094, RHEL5_REDHAT_RELEASE
from .support.hosts import SasFs, sas_host, tree_digest
from .support.lab import LAB_HOST_SETS, make_fs, prerequisites_missing
from .support.sosbuilder import sosreport_archive, sosreport_tree

# sos has no SAS plugin: both scans are told the SAS directories and BUFSIZE alike.
SAS_SETS = ["sas_data_dirs=/sasdata", "sas_work_dirs=/saswork", "sas_utilloc_dirs=/sasutil",
            "sas_bufsize_bytes=65536"]


def _verdicts(result: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {rule["id"]: (rule["result"], rule["actual"]) for rule in result["rules"]}


def _scan_sosreport(catalogue: Catalogue, path: Path, sets: list[str],
                    role: str = "bare_metal") -> dict[str, Any]:
    with opened(str(path)) as report:
        result = run_scan(catalogue, "default", sets, report.root, role,
                          reframe=report.reframe).to_dict()
        result["gaps"] = report.gaps
        result["notes"] = report.notes
    return result


HOSTS = {
    "baseline": {},
    "untuned": {"thp_enabled": "[always] madvise never", "read_ahead_kb": 128,
                "mpath_scheduler": "mq-deadline kyber [bfq] none", "tuned_active": None,
                "dirty_ratio": 20},
    "one LUN, atime": {"sas_luns": 1, "filesystems": [
        SasFs("sasdata", "/sasdata", options="rw,relatime,attr2,inode64,noquota"),
        SasFs("saswork", "/saswork", fstype="ext4", options="rw,nobarrier"),
        SasFs("sasutil", "/sasutil")]},
    "RHEL 7 SATA": {"kernel": "3.10.0-1160.el7.x86_64", "path_vendor": "ATA",
                    "path_scheduler": "noop [deadline] cfq", "mpath_scheduler": "noop [deadline] cfq"},
}


# What the block plugin ran: sos 4.1+ both listings; sos 3.x (RHEL 7, early 8) only the
# tree; RHEL 6's lsblk writes a device-mapper device's kernel name beside it.
SOS_RELEASES = {"sos 4.1+": {}, "sos 3.x": {"lsblk": False},
                "sos 3.x, RHEL 6 lsblk": {"lsblk": False, "rhel6": True}}


@pytest.mark.parametrize("changes", HOSTS.values(), ids=HOSTS.keys())
@pytest.mark.parametrize("release", SOS_RELEASES.values(), ids=SOS_RELEASES.keys())
@pytest.mark.parametrize("packed", [True, False], ids=["tar.xz", "unpacked"])
def test_sosreport_gives_the_hosts_own_verdicts(catalogue, tmp_path, changes, release, packed):
    root = sas_host(tmp_path / "root", **changes)
    sos = (sosreport_archive(root, tmp_path, **release) if packed
           else sosreport_tree(root, tmp_path, **release))
    live = run_scan(catalogue, "default", SAS_SETS, str(root), "bare_metal").to_dict()
    scanned = _scan_sosreport(catalogue, sos, SAS_SETS)
    assert _verdicts(scanned) == _verdicts(live)
    assert scanned["storage"] == live["storage"]  # the same stacks, device by device
    listing = LSBLK if release.get("lsblk", True) else LSBLK_TREE
    assert any(note.endswith(listing) for note in scanned["notes"])


def test_an_unpacked_sosreport_is_found_inside_the_directory_holding_it(catalogue, tmp_path):
    root = sas_host(tmp_path / "root")
    top = sosreport_tree(root, tmp_path / "received")
    before = tree_digest(top)
    scanned = _scan_sosreport(catalogue, tmp_path / "received", SAS_SETS)
    assert scanned["by_id"] if "by_id" in scanned else scanned["rules"]
    assert _verdicts(scanned)["io_scheduler"][0] == "pass"
    assert tree_digest(top) == before  # a scan writes nothing in the sosreport


def test_without_lsblk_the_volumes_below_are_notchecked_naming_it(catalogue, tmp_path):
    """A sosreport without either lsblk listing (its block plugin skipped): a mount on an
    LVM volume cannot be followed to its disks, and the rules say so instead of guessing."""
    root = sas_host(tmp_path / "root")
    sos = sosreport_archive(root, tmp_path, lsblk=False, tree=False)
    scanned = _scan_sosreport(catalogue, sos, SAS_SETS)
    rules = {rule["id"]: rule for rule in scanned["rules"]}
    for rule_id in ("io_scheduler", "read_ahead"):
        assert rules[rule_id]["result"] == "notchecked", rules[rule_id]
        listed = rules[rule_id]["message"].split(" (sos did not record it)")[0]
        # The device nodes the stack would start from; a SAS mount point is no gap.
        assert listed == ("not in the sosreport: /dev/mapper/sasvg-sasdata, "
                          "/dev/mapper/sasvg-sasutil, /dev/mapper/sasvg-saswork")
        assert "lsblk's listings are missing" in rules[rule_id]["message"]
    assert any(LSBLK in gap for gap in scanned["gaps"])
    # What needs no device stack is still judged.
    assert rules["sas_fs_noatime"]["result"] == "pass"
    assert rules["thp_disabled"]["result"] == "pass"


def test_a_file_sos_did_not_keep_is_notchecked_not_an_error(catalogue, tmp_path):
    root = sas_host(tmp_path / "root")
    top = sosreport_tree(root, tmp_path)
    (top / "sys/kernel/mm/transparent_hugepage/defrag").unlink()  # sos 4.0 kept only enabled
    rule = {r["id"]: r for r in _scan_sosreport(catalogue, top, SAS_SETS)["rules"]}[
        "thp_defrag_disabled"]
    assert rule["result"] == "notchecked"
    assert "not in the sosreport: /sys/kernel/mm/transparent_hugepage/defrag" in rule["message"]


def test_a_malformed_file_in_a_sosreport_is_still_an_error(catalogue, tmp_path):
    root = sas_host(tmp_path / "root")
    top = sosreport_tree(root, tmp_path)
    (top / "sys/kernel/mm/transparent_hugepage/defrag").write_bytes(b"\0\0garbage")
    rule = {r["id"]: r for r in _scan_sosreport(catalogue, top, SAS_SETS)["rules"]}[
        "thp_defrag_disabled"]
    assert rule["result"] == "error"


@pytest.mark.parametrize(("tuned", "expected"), [("2.3.0", "fail"), ("2.4.0", "pass")])
def test_tuneds_release_comes_from_installed_rpms(catalogue, tmp_path, tuned, expected):
    """sos keeps no tuned/version.py: the release in installed-rpms decides what tuned
    honours (here throughput-performance's readahead=>4096, which tuned 2.3 cannot read)."""
    sos = sosreport_tree(sas_host(tmp_path / "root"), tmp_path, tuned=tuned)
    scanned = _scan_sosreport(catalogue, sos, SAS_SETS)
    rule = next(r for r in scanned["rules"] if r["id"] == "io_tuning_at_boot")
    from_tuned = [item["result"] for item in rule["evidence"]
                  if item["subject"] == "read-ahead" and "[disk]" in item["source"]]
    assert from_tuned == [expected], rule["evidence"]
    assert f"tuned {tuned}: from /installed-rpms" in scanned["notes"]


def test_cli_names_the_sosreport_and_how_its_facts_were_rebuilt(tmp_path, capsys):
    root = sas_host(tmp_path / "root", thp_enabled="[always] madvise never")
    sos = sosreport_archive(root, tmp_path)
    output = tmp_path / "results.json"
    status = main(["scan", "--sosreport", str(sos), "--role", "bare_metal", "--quiet",
                   "--json", str(output), *[f"--set={s}" for s in SAS_SETS]])
    result = json.loads(output.read_text())
    assert status == 2
    assert result["host"]["root"] == str(sos)
    assert result["host"]["hostname"] == "sastest"
    assert result["host"]["kernel"] == "4.18.0-513.el8.x86_64"
    assert result["source"]["kind"] == "sosreport"
    assert any("dmsetup_info_-c" in note for note in result["source"]["notes"])
    assert any(p.startswith("sosreport: SAS's configuration") for p in result["problems"])
    assert {r["id"]: r["result"] for r in result["rules"]}["thp_disabled"] == "fail"
    script = tmp_path / "fix.sh"
    assert main(["fix", "--format", "bash", "--sosreport", str(sos), "--role", "bare_metal",
                 "-o", str(script), *[f"--set={s}" for s in SAS_SETS]]) == 0
    assert "transparent_hugepage" in script.read_text()


@pytest.mark.parametrize("problem", ["two tops", "climbs out", "not sos", "missing"])
def test_an_unusable_sosreport_is_refused_in_one_line(tmp_path, capsys, problem):
    archive = tmp_path / "sosreport.tar.xz"
    if problem != "missing":
        payload = tmp_path / "payload"
        payload.mkdir()
        (payload / "file").write_text("x\n")
        names = {"two tops": ["sosreport-a/sos_commands/x", "sosreport-b/etc/fstab"],
                 "climbs out": ["sosreport-a/../../../tmp/evil"],
                 "not sos": ["sosreport-a/etc/fstab"]}[problem]
        with tarfile.open(archive, "w:xz") as tar:
            for name in names:
                tar.add(payload / "file", arcname=name)
    status = main(["scan", "--sosreport", str(archive), "--quiet"])
    err = capsys.readouterr().err
    assert status == 1
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert not (tmp_path.parent / "tmp" / "evil").exists()


def test_hostile_sosreport_stays_inside_its_copy(catalogue, tmp_path):
    """Links out of the sosreport and device names with path parts read and write nothing
    of the scanning machine."""
    root = sas_host(tmp_path / "root")
    top = sosreport_tree(root, tmp_path)
    secret = tmp_path / "secret"
    secret.write_text("/dev/sdz /sasdata ext3 rw 0 0\n")
    (top / "proc/mounts").unlink()
    (top / "proc/mounts").symlink_to(secret)  # absolute: outside the sosreport
    lsblk = top / "sos_commands/block/lsblk_-O_-P"
    lsblk.write_text(lsblk.read_text() + 'KNAME="../../../../../tmp/planted" NAME="x" '
                     'MAJ:MIN="8:99" TYPE="disk" PKNAME=""\n')
    scanned = _scan_sosreport(catalogue, top, SAS_SETS)
    assert "/dev/sdz" not in json.dumps(scanned["rules"])
    assert not Path("/tmp/planted").exists()
    assert any("refused" in gap for gap in scanned["gaps"])


# -- the real sos ---------------------------------------------------------------------------
def _sos_plugins() -> list[str]:
    listing = subprocess.run(["sos", "report", "--list-plugins"], capture_output=True,
                             text=True, check=True).stdout
    # What a scan reads (tests/support/sosbuilder.py lists each plugin's part), and no more: each
    # plugin costs seconds.
    wanted = {"block", "devicemapper", "filesys", "kernel", "memory", "processor", "host",
              "systemd", "udev", "grub2", "tuned", "services", "release", "rpm"}
    return sorted({line.split()[0] for line in listing.splitlines()
                   if line.startswith(" ") and line.split() and line.split()[0] in wanted})


@pytest.fixture
def real_sos() -> None:
    import os
    reason = prerequisites_missing() or (None if shutil.which("sos") else "sos is not installed")
    if reason and os.environ.get("CI"):
        pytest.fail(f"live test cannot run in CI: {reason}")
    if reason:
        pytest.skip(reason)


@pytest.fixture
def lab(tmp_path: Path, real_sos: None) -> Iterator[dict[str, Any]]:
    with ExitStack() as stack:
        data = make_fs(stack, tmp_path, "sosdata", "xfs", "noatime", 320)
        work = make_fs(stack, tmp_path, "sos work", "ext4", "relatime", 64)
        for fs, scheduler, read_ahead in ((data, "mq-deadline", 4096), (work, "none", 128)):
            (fs.queue / "scheduler").write_text(scheduler)
            (fs.queue / "read_ahead_kb").write_text(str(read_ahead))
        yield {"data": data, "work": work}


@pytest.mark.live
def test_real_sos_report_gives_the_live_scans_verdicts(catalogue, lab, tmp_path):
    sets = [f"sas_data_dirs={lab['data'].mountpoint}", f"sas_work_dirs={lab['work'].mountpoint}",
            *LAB_HOST_SETS]
    live = run_scan(catalogue, "default", sets, "/", "bare_metal").to_dict()
    output = tmp_path / "sos"
    output.mkdir()
    subprocess.run(["sos", "report", "--batch", "--tmp-dir", str(output), "--label", "sascheck",
                    "-o", ",".join(_sos_plugins())], check=True, capture_output=True)
    (archive,) = output.glob("sosreport-*.tar.*[!5]")  # not the .md5 / .sha256 beside it
    scanned = _scan_sosreport(catalogue, archive, sets)
    ours, theirs = _verdicts(scanned), _verdicts(live)
    for rule_id in ("io_scheduler", "read_ahead", "sas_fs_type", "sas_fs_noatime",
                    "sas_dirs_separate", "thp_disabled", "vm_dirty_ratio"):
        assert ours[rule_id] == theirs[rule_id], rule_id
    # WORK's 128 KiB read-ahead fails, seen through the sosreport's copy of its queue.
    assert ours["read_ahead"][0] == "fail" and ours["sas_fs_type"][0] == "pass"
    # Where they differ, the sosreport lacked the rule's input and says which.
    rules = {rule["id"]: rule for rule in scanned["rules"]}
    for rule_id, (verdict, _actual) in ours.items():
        if verdict != theirs[rule_id][0]:
            assert verdict == "notchecked", (rule_id, rules[rule_id], theirs[rule_id])
            assert rules[rule_id]["message"].startswith("not in the sosreport: ")
    storage = {item["mountpoint"]: item for item in scanned["storage"]}
    assert str(lab["work"].mountpoint) in storage


# -- the parsers, on samples in their tools' formats ----------------------------------------
# RHEL 6's lsblk (util-linux-ng 2.17), as insights-core's LSBlock documents it.
RHEL6_LSBLK = """NAME                            MAJ:MIN RM  SIZE RO TYPE  MOUNTPOINT
sda                               8:0    0   80G  0 disk
|-sda1                            8:1    0  256M  0 part  /boot
`-sda2                            8:2    0 79.8G  0 part
  |-volgrp01-root (dm-0)        253:0    0   15G  0 lvm   /
  `-volgrp01-swap (dm-1)        253:1    0    8G  0 lvm   [SWAP]
"""
# util-linux 2.32+ under C.UTF-8 (sos 4.x): box-drawing branches, a kpartx partition.
UTF8_LSBLK = """NAME            MAJ:MIN RM  SIZE RO TYPE  MOUNTPOINT
sdb               8:16   0  500G  0 disk
└─mpatha        253:2    0  500G  0 mpath
  └─mpatha1     253:3    0  500G  0 part  /sasdata
"""


def test_lsblk_tree_rows_become_devices_with_parents():
    from sascheck.scanner.parsers.sos_commands import parse_lsblk_tree

    rows, problems = parse_lsblk_tree(RHEL6_LSBLK)
    assert problems == []
    assert [(r.kname, r.name, r.number, r.kind, r.parent) for r in rows] == [
        ("sda", "sda", "8:0", "disk", ""), ("sda1", "sda1", "8:1", "part", "sda"),
        ("sda2", "sda2", "8:2", "part", "sda"),
        ("dm-0", "volgrp01-root", "253:0", "lvm", "sda2"),
        ("dm-1", "volgrp01-swap", "253:1", "lvm", "sda2")]
    rows, _ = parse_lsblk_tree(UTF8_LSBLK)
    assert [(r.kname, r.parent) for r in rows] == [("sdb", ""), ("dm-2", "sdb"),
                                                   ("dm-3", "dm-2")]
    rows, problems = parse_lsblk_tree("NAME MAJ:MIN\nnot a row at all\n")
    assert rows == [] and problems == ["line 2: not an lsblk row"]


def test_lsblk_pairs_dmsetup_sysctl_rpms_and_multipath():
    from sascheck.scanner.parsers.sos_commands import (
        installed_versions,
        parse_dmsetup_info,
        parse_lsblk_pairs,
        parse_multipath_ll,
        parse_sysctl_a,
    )

    rows, problems = parse_lsblk_pairs(
        'NAME="sasvg-saswork" KNAME="dm-3" MAJ_MIN="253:3" PKNAME="dm-0" TYPE="lvm" '
        'MODEL="" VENDOR="" SERIAL=""\nNAME="a\\x22b" MODEL="x"\n')
    assert [(r.kname, r.name, r.number, r.parent) for r in rows] == [
        ("dm-3", "sasvg-saswork", "253:3", "dm-0")]
    assert problems == ["line 2: no KNAME column"]
    # dmsetup info -c as device-mapper 1.02 prints it (insights-core's DmsetupInfo sample).
    info = parse_dmsetup_info(
        "Name               Maj Min Stat Open Targ Event  UUID\n"
        "VG00-tmp           253   8 L--w    1    1      0 LVM-gy9uAwD7LuTIApplr2sogbOx5iS0FTax\n"
        "mpatha             253   2 L--w    1    1      1 mpath-3600508b400105e210000900000490000\n")
    assert [(i.name, i.number, i.uuid) for i in info] == [
        ("VG00-tmp", "253:8", "LVM-gy9uAwD7LuTIApplr2sogbOx5iS0FTax"),
        ("mpatha", "253:2", "mpath-3600508b400105e210000900000490000")]
    assert parse_sysctl_a("vm.dirty_ratio = 40\nsysctl: permission denied on key 'x'\n"
                          "kernel.printk = 4\t4\t1\t7\n") == {
        "vm.dirty_ratio": "40", "kernel.printk": "4\t4\t1\t7"}
    assert installed_versions("tuned-2.21.0-1.el8_9.noarch   Tue 05 Dec 2023\n"
                              "device-mapper-multipath-0.8.4-41.el8.x86_64  Tue\n") == {
        "tuned": "2.21.0", "device-mapper-multipath": "0.8.4"}
    maps = parse_multipath_ll(
        "mpatha (3600508b400105e210000900000490000) dm-2 XtremIO ,XtremApp        \n"
        "size=500G features='0' hwhandler='0' wp=rw\n"
        "`-+- policy='service-time 0' prio=1 status=active\n"
        "  |- 1:0:0:1 sdb 8:16 active ready running\n"
        "  `- 2:0:0:1 sdc 8:32 active ready running\n")
    assert maps == {"dm-2": ("XtremIO", "XtremApp", ["sdb", "sdc"])}


def test_only_paths_sos_collects_count_as_gaps(tmp_path):
    """An error naming a SAS mount point and a sysfs file sos did not keep: the file is the
    gap, the mount point (never in a sosreport) is not; an error naming only files the
    sosreport holds stays an error."""
    from sascheck.scanner.results import Evidence, RuleResult, Verdict
    from sascheck.scanner.sources.sosreport import Sosreport

    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    (root / "proc/mounts").write_text("")
    report = Sosreport(path="sos.tar.xz", root=str(root))
    missing = RuleResult("r", "t", "high", Verdict.ERROR, "", "", [Evidence(
        "/sasdata", "/sys/block/sdq/queue/scheduler", "unreadable", Verdict.ERROR)],
        "/sasdata: /sys/block/sdq/queue/scheduler: missing", [])
    reframed = report.reframe(missing)
    assert reframed.result is Verdict.NOTCHECKED
    assert reframed.message == ("not in the sosreport: /sys/block/sdq/queue/scheduler "
                                "(sos did not record it)")
    held = RuleResult("r", "t", "high", Verdict.ERROR, "", "", [],
                      "/sasdata: /proc/mounts: binary content", [])
    assert report.reframe(held) is held


def test_the_multipath_plugins_multipath_t_gives_the_built_in_table(catalogue, tmp_path):
    """sos 3.7+ keeps `multipath -t` (sos/report/plugins/multipath.py): the installed build's
    own hardware table, which decides for an array multipath.conf does not name, here on a
    host whose release sascheck has no table for."""
    root = sas_host(tmp_path / "root", path_vendor="ACME", path_model="Box",
                    without_files=("/etc/os-release",),
                    extra_files={"/etc/redhat-release": RHEL5_REDHAT_RELEASE})
    top = sosreport_tree(root, tmp_path / "without")
    rule = {r["id"]: r for r in _scan_sosreport(catalogue, top, SAS_SETS)["rules"]}[
        "multipath_all_paths_active"]
    assert rule["result"] == "notchecked", rule
    top = sosreport_tree(root, tmp_path / "with")
    (top / "sos_commands/multipath/multipath_-t").write_text(MULTIPATH_T_094)
    scanned = _scan_sosreport(catalogue, top, SAS_SETS)
    rule = {r["id"]: r for r in scanned["rules"]}["multipath_all_paths_active"]
    assert rule["result"] == "pass", rule
    assert {e["source"] for e in rule["evidence"]} == {
        "/run/sascheck/multipath-t (multipath -t): ACME Box"}
    assert any(note.endswith("multipath_-t") for note in scanned["notes"])
