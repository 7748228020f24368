"""Snapshots: collect what a scan reads (in Python or with the standalone script), scan the
archive elsewhere with the same verdicts, and refuse hostile archives cleanly."""

from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from sascheck.cli import main
from sascheck.scanner.sources import snapshot
from sascheck.scanner.sources.collect_script import SCRIPT
from tests.support.example_roots import EXAMPLE_VALUES, EXAMPLES

from .support.hosts import BASELINE_SETS, sas_host
from .test_verdicts import CASES


def _verdicts(argv: list[str], sets: list[str], tmp_path: Path) -> dict[str, str]:
    out = tmp_path / f"r{len(list(tmp_path.glob('r*.json')))}.json"
    full = ["scan", *argv, "--quiet", "--json", str(out)]
    for assignment in sets:
        full += ["--set", assignment]
    main(full)
    return {rule["id"]: rule["result"] for rule in json.loads(out.read_text())["rules"]}


def _python_collect(root: Path, sets: list[str], output: Path) -> Path:
    argv = ["collect", "--root", str(root), "-o", str(output)]
    for assignment in sets:
        argv += ["--set", assignment]
    assert main(argv) == 0
    return output


def _script_collect(root: Path, output: Path, tmp_path: Path) -> Path:
    script = tmp_path / "collect.sh"
    script.write_text(SCRIPT)
    completed = subprocess.run(["sh", str(script), "-o", str(output)], capture_output=True,
                               text=True, env={**os.environ, "SASCHECK_ROOT": str(root)},
                               timeout=120)
    assert completed.returncode == 0, completed.stderr
    return output


ROOTS = [(case.name, case.changes, case.sets) for case in CASES] + \
    [(f"example {name}", None, EXAMPLE_VALUES[name]) for name in sorted(EXAMPLES)]


def _build(tmp_path: Path, name: str, changes: dict | None, sets: list[str]):
    root = tmp_path / "root"
    if changes is None:
        EXAMPLES[name.split(" ", 1)[1]](root)
        return root, list(sets)
    sas_host(root, **changes)
    return root, [*BASELINE_SETS, *sets]


@pytest.mark.parametrize(("name", "changes", "sets"), ROOTS, ids=[r[0] for r in ROOTS])
def test_python_snapshot_scans_like_the_root(tmp_path, name, changes, sets):
    root, sets = _build(tmp_path, name, changes, sets)
    archive = _python_collect(root, sets, tmp_path / "snap.tar.gz")
    direct = _verdicts(["--root", str(root)], sets, tmp_path)
    assert _verdicts(["--snapshot", str(archive)], sets, tmp_path) == direct


SCRIPT_ROOTS = [r for r in ROOTS if r[0].startswith("example") or r[0] in (
    "tuned disabled", "thp boot: BLS via grubenv kernelopts", "io boot: udev rule instead of tuned",
    "nested mounts", "mount point with a space", "io boot: rhel6 elevator= and blockdev in rc.local",
    "thp boot: rc.local not executable (as RHEL 7 ships it)",
    "thp boot: executable rc.local reached through /etc/rc.local",
    "thp boot: RHEL 7 grubby added it to the menu",
    "read-ahead: NFS SAS DATA with the default 128 KiB",
    "multipath: a conf.d entry gives that array group_by_prio")]


@pytest.mark.parametrize(("name", "changes", "sets"), SCRIPT_ROOTS, ids=[r[0] for r in SCRIPT_ROOTS])
def test_standalone_script_snapshot_scans_like_the_root(tmp_path, name, changes, sets):
    root, sets = _build(tmp_path, name, changes, sets)
    archive = _script_collect(root, tmp_path / "snap.tar.gz", tmp_path)
    direct = _verdicts(["--root", str(root)], sets, tmp_path)
    assert _verdicts(["--snapshot", str(archive)], sets, tmp_path) == direct


def test_snapshot_holds_only_what_the_scan_reads(tmp_path):
    root = sas_host(tmp_path / "root", extra_files={
        "/etc/shadow": "root:$6$secret:19000:0:99999:7:::\n",
        "/root/.ssh/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n",
        "/proc/1/environ": "PATH=/bin\0DB_PASSWORD=hunter2\0container=podman\0"})
    for archive in (_python_collect(root, BASELINE_SETS, tmp_path / "py.tar.gz"),
                    _script_collect(root, tmp_path / "sh.tar.gz", tmp_path)):
        with tarfile.open(archive) as tar:
            names = set(tar.getnames())
            assert "root/etc/shadow" not in names and "root/root/.ssh/id_rsa" not in names
            environ = tar.extractfile("root/proc/1/environ").read()
            assert environ.rstrip(b"\0") == b"container=podman"
            manifest = json.loads(tar.extractfile("manifest.json").read())
        assert manifest["schema"] == "sascheck-snapshot/1"
        assert manifest["host"]["hostname"] == "sastest"
        assert not any(name.startswith("root/usr/lib/tuned/balanced/x") for name in names)


def test_manifest_lists_what_could_not_be_read(tmp_path):
    root = sas_host(tmp_path / "root")
    (root / "proc/sys/vm/dirty_ratio").unlink()
    os.mkfifo(root / "proc/sys/vm/dirty_ratio")
    archive = _python_collect(root, BASELINE_SETS, tmp_path / "py.tar.gz")
    with tarfile.open(archive) as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())
    assert {"path": "/proc/sys/vm/dirty_ratio",
            "reason": "/proc/sys/vm/dirty_ratio: not a regular file"} in manifest["unreadable"]


def test_tailor_and_fix_take_a_snapshot(tmp_path):
    root = sas_host(tmp_path / "root", tuned_active="balanced")
    archive = _python_collect(root, BASELINE_SETS, tmp_path / "snap.tar.gz")
    assert main(["tailor", "--snapshot", str(archive), "-o", str(tmp_path / "t.xml")]) == 0
    assert "/saswork" in (tmp_path / "t.xml").read_text()
    assert main(["fix", "--format", "bash", "--snapshot", str(archive), "--set",
                 "sas_data_dirs=/sasdata", "-o", str(tmp_path / "fix.sh")]) == 0
    assert "rule_begin tuned_profile" in (tmp_path / "fix.sh").read_text()


# -- hostile archives ----------------------------------------------------------------------
def _archive(path: Path, members: list[tarfile.TarInfo], manifest: bool = True) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        if manifest:
            data = json.dumps({"schema": "sascheck-snapshot/1"}).encode()
            info = tarfile.TarInfo("manifest.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for member in members:
            content = b"x" * member.size if member.isreg() else None
            tar.addfile(member, io.BytesIO(content) if content is not None else None)
    return path


def _member(name: str, kind: bytes = tarfile.REGTYPE, size: int = 1, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, size if kind == tarfile.REGTYPE else 0, link
    return info


HOSTILE = {
    "absolute name": ([_member("/etc/passwd")], "absolute name"),
    "climbs out": ([_member("root/../../escape")], "climbs out"),
    "outside root/": ([_member("other/file")], "outside root/"),
    "link out": ([_member("root/sys/x", tarfile.SYMTYPE, link="../../../../etc")], "points outside"),
    "hard link": ([_member("root/a"), _member("root/b", tarfile.LNKTYPE, link="root/a")], "hard link"),
    "device": ([_member("root/dev/sda", tarfile.BLKTYPE)], "device or FIFO"),
    "fifo": ([_member("root/fifo", tarfile.FIFOTYPE)], "device or FIFO"),
    "through a link": ([_member("root/a", tarfile.SYMTYPE, link="."),
                        _member("root/a/b")], "through a link"),
    "no manifest": ([_member("root/etc/hostname")], "no sascheck-snapshot/1 manifest"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_archives_are_refused_and_leave_nothing(tmp_path, monkeypatch, capsys, case):
    members, message = HOSTILE[case]
    archive = _archive(tmp_path / "evil.tar.gz", members, manifest=case != "no manifest")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(scratch))
    assert main(["scan", "--snapshot", str(archive), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert list(scratch.iterdir()) == []
    assert not (tmp_path / "escape").exists()


def test_limits_on_members_and_size(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshot, "MAX_MEMBERS", 5)
    archive = _archive(tmp_path / "many.tar.gz", [_member(f"root/f{i}") for i in range(10)])
    with pytest.raises(snapshot.SnapshotError, match="more than 5 members"):
        snapshot.extract(str(archive), str(tmp_path / "out1"))
    assert not (tmp_path / "out1").exists()
    monkeypatch.setattr(snapshot, "MAX_TOTAL_BYTES", 100)
    archive = _archive(tmp_path / "big.tar.gz", [_member("root/big", size=500)])
    with pytest.raises(snapshot.SnapshotError, match="size limits"):
        snapshot.extract(str(archive), str(tmp_path / "out2"))
    garbage = tmp_path / "garbage.tar.gz"
    garbage.write_bytes(b"\x1f\x8b not really gzip")
    with pytest.raises(snapshot.SnapshotError, match=r"garbage\.tar\.gz"):
        snapshot.extract(str(garbage), str(tmp_path / "out3"))


def test_absolute_links_inside_the_snapshot_stay_inside(tmp_path):
    archive = _archive(tmp_path / "abs.tar.gz", [
        _member("root/usr/lib/systemd/system/tuned.service"),
        _member("root/etc/systemd/system/multi-user.target.wants/tuned.service", tarfile.SYMTYPE,
                link="/usr/lib/systemd/system/tuned.service")])
    snapshot.extract(str(archive), str(tmp_path / "out"))
    link = tmp_path / "out/root/etc/systemd/system/multi-user.target.wants/tuned.service"
    assert not os.readlink(link).startswith("/")
    assert link.resolve() == (tmp_path / "out/root/usr/lib/systemd/system/tuned.service").resolve()


def test_collect_script_is_printed_and_shellcheck_clean(tmp_path, capsys):
    assert main(["collect", "--script"]) == 0
    printed = capsys.readouterr().out
    assert printed == SCRIPT and printed.startswith("#!/bin/sh")
    (tmp_path / "c.sh").write_text(printed)
    assert subprocess.run(["shellcheck", "-s", "sh", str(tmp_path / "c.sh")]).returncode == 0


def test_collect_needs_an_output(capsys):
    assert main(["collect"]) == 1
    assert "collect needs -o" in capsys.readouterr().err


def test_both_collectors_keep_every_sas_configuration_layout(tmp_path):
    """SAS 9.4 server contexts and SAS Viya's SPRE files reach the snapshot, so a scan of
    it finds the same SAS directories as a scan of the root."""
    context, spre = "/opt/sas/config/Lev1/SASApp", "/opt/sas/viya/config/etc/spre/default"
    root = sas_host(tmp_path / "root", sas_local_cfg=None, extra_files={
        f"{context}/sasv9.cfg": f'-config "{context}/sasv9_usermods.cfg"\n',
        f"{context}/sasv9_usermods.cfg": "-WORK /saswork\n",
        f"{spre}/sasv9.cfg": f"-CONFIG {spre}/sasv9_deployment.cfg\n",
        f"{spre}/sasv9_deployment.cfg": "-MEMSIZE 2G\n",
        f"{spre}/sasv9_usermods.cfg": "-UTILLOC /sasutil\n"})
    sets = ["sas_data_dirs=/sasdata"]

    def sas_dirs(argv: list[str]) -> set[tuple[str, str, str]]:
        out = tmp_path / "dirs.json"
        main(["scan", *argv, "--quiet", "--json", str(out), "--set", sets[0]])
        return {(d["role"], d["path"], d["source"]) for d in json.loads(out.read_text())["sas_dirs"]}

    direct = sas_dirs(["--root", str(root)])
    assert ("WORK", "/saswork", f"{context}/sasv9_usermods.cfg:1") in direct
    assert ("UTILLOC", "/sasutil", f"{spre}/sasv9_usermods.cfg:1") in direct
    for archive in (_python_collect(root, sets, tmp_path / "py.tar.gz"),
                    _script_collect(root, tmp_path / "sh.tar.gz", tmp_path)):
        assert sas_dirs(["--snapshot", str(archive)]) == direct, archive.name


def test_scan_snapshots_drops_the_results_of_an_archive_that_is_gone(tmp_path, capsys):
    """Issue 48: a host's archive removed from the fleet directory takes its results (or its
    scan's failure record) with it on the next run; results of any other kind stay."""
    fleet = tmp_path / "results"
    fleet.mkdir()
    for name in ("sas01", "sas02"):
        root = sas_host(tmp_path / name, extra_files={"/etc/hostname": f"{name}\n"})
        assert main(["collect", "--root", str(root), "-o", str(fleet / f"{name}.tar.gz")]) == 0
    (fleet / "sas03.tar.gz").write_bytes(b"not an archive")
    (fleet / "sas04.json").write_text(json.dumps({"schema": "sascheck-result/1"}))  # fetched
    main(["scan-snapshots", "-d", str(fleet), "--quiet", str(fleet)])
    assert {p.name for p in fleet.glob("*.json")} == {"sas01.json", "sas02.json", "sas03.json",
                                                      "sas04.json"}
    (fleet / "sas02.tar.gz").unlink()
    (fleet / "sas03.tar.gz").unlink()
    capsys.readouterr()
    main(["scan-snapshots", "-d", str(fleet), str(fleet)])
    assert {p.name for p in fleet.glob("*.json")} == {"sas01.json", "sas04.json"}
    err = capsys.readouterr().err
    assert "removed sas02.json (its archive" in err and "removed sas03.json" in err
