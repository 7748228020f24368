"""Issue 34, the controller: one host must not hide, replace or stop another. Each attack is
made with the real consumer (`sascheck report --fleet`, `scan-snapshots`, ansible-playbook)
and shown inert."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from sascheck.cli import main
from sascheck.reports.loading import load
from sascheck.rules import load_catalogue
from sascheck.scanner.batch_pool import run_jobs
from sascheck.scanner.sources import tree_copy
from sascheck.scanner.sources.snapshot import SnapshotError

from .support.browser import fleet_index, fleet_text
from .support.hosts import BASELINE_SETS, sas_host
from .support.oscap import oscap_available, oscap_eval, tailor

SASCHECK = str(Path(sys.executable).with_name("sascheck"))


def _scan(root: Path, output: Path) -> None:
    main(["scan", "--root", str(root), "--quiet", "--json", str(output),
          *[f"--set={s}" for s in BASELINE_SETS]])


def _named(root: Path, name: str) -> Path:
    for path in ("etc/hostname", "proc/sys/kernel/hostname"):
        (root / path).write_text(name + "\n")
    return root


def _fleet_directory(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    results.mkdir()
    (results / ".sascheck-fleet").write_text("written by fleet-scan.yml\n")
    return results


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
def test_a_host_claiming_anothers_name_neither_hides_nor_replaces_it(tmp_path):
    """victim's oscap results fail THP; evil's sascheck results pass and claim victim's host
    name, dated in the future. Keyed by what hosts claim, victim's failing row was merged
    into evil's passing one; keyed by inventory name, both stay, and evil is flagged."""
    results = _fleet_directory(tmp_path)
    victim = _named(sas_host(tmp_path / "victim", thp_enabled="[always] madvise never"),
                    "sasvictim")
    work = tmp_path / "work"
    work.mkdir()
    oscap_eval(victim, tailor(victim, BASELINE_SETS, work / "t.xml"), work, as_users_run_it=True)
    shutil.copy(work / "results-arf.xml", results / "victim.arf.xml")
    claimed = load(str(results / "victim.arf.xml"), load_catalogue()).claimed
    assert claimed == "sasvictim"
    _scan(_named(sas_host(tmp_path / "evil"), claimed), results / "evil.json")
    forged = json.loads((results / "evil.json").read_text())
    forged["scanned_at"] = "2099-01-01T00:00:00+00:00"
    (results / "evil.json").write_text(json.dumps(forged))
    page = tmp_path / "fleet.html"
    main(["report", "--fleet", str(results), "-o", str(page)])
    hosts = {row["n"]: row for row in fleet_index(page.read_text())["hosts"]}
    assert sorted(hosts) == ["evil", "victim"]
    assert "f" in hosts["victim"]["r"]  # its failure is still on the page, under its name
    text = fleet_text(page.read_text())
    assert "the host calls itself &#39;sasvictim&#39;" in text or \
        "the host calls itself 'sasvictim'" in text


def _snapshot(root: Path, output: Path) -> Path:
    assert main(["collect", "--root", str(root), "-o", str(output)]) == 0
    return output


def test_a_non_utf8_file_name_in_one_host_costs_neither_it_nor_the_batch(tmp_path):
    odd = sas_host(tmp_path / "odd")
    rules = os.path.join(os.fsencode(odd), b"etc/udev/rules.d")
    os.makedirs(rules, exist_ok=True)
    with open(os.path.join(rules, b"60-\xff\xfe.rules"), "w") as handle:
        handle.write('ACTION=="add", KERNEL=="sd*", ATTR{queue/scheduler}="deadline"\n')
    archives = tmp_path / "archives"
    archives.mkdir()
    _snapshot(odd, archives / "odd.tar.gz")
    _snapshot(sas_host(tmp_path / "plain"), archives / "plain.tar.gz")
    out = tmp_path / "out"
    completed = subprocess.run([SASCHECK, "scan-snapshots", "-d", str(out), "--quiet",
                                str(archives)], capture_output=True, text=True, timeout=300)
    assert completed.returncode in (0, 2), completed.stderr
    for host in ("odd", "plain"):
        data = json.loads((out / f"{host}.json").read_text(encoding="utf-8"))
        assert data["schema"] == "sascheck-result/1" and data["host"]["inventory_name"] == host
    assert "60-\\udcff\\udcfe.rules" in (out / "odd.json").read_text(encoding="utf-8")
    direct = subprocess.run([SASCHECK, "scan", "--root", str(odd), "--quiet", "--json", "-"],
                            capture_output=True, timeout=300)
    assert direct.returncode in (0, 2), direct.stderr
    json.loads(direct.stdout.decode("utf-8"))  # valid UTF-8 JSON, the name escaped


def _sleep_or_hog(job: str) -> str:
    if job == "hang":
        time.sleep(3600)
    if job == "hog":
        return f"hogged {len(bytearray(1 << 32))}"  # 4 GiB, past the limit
    if job == "die":
        os._exit(9)
    return f"scanned {job}"


def test_a_host_that_hangs_hogs_or_kills_its_worker_is_one_failure_row():
    jobs = ["a", "hang", "b", "hog", "c", "die", "d"]
    outcomes = list(run_jobs(jobs, 2, _sleep_or_hog, lambda job, why: f"{job} failed: {why}",
                             seconds=3, memory=2 << 30))
    assert sorted(outcomes) == sorted([
        "scanned a", "scanned b", "scanned c", "scanned d",
        "hang failed: its scan took longer than 3 s and was stopped",
        "hog failed: its scan process ended unexpectedly (exit status 1); please report it",
        "die failed: its scan process ended unexpectedly (exit status 9); please report it"])


def test_a_1100_deep_snapshot_is_refused_and_leaves_nothing_behind(tmp_path):
    archive = tmp_path / "deep.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        manifest = json.dumps({"schema": "sascheck-snapshot/1"}).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(manifest)
        import io
        tar.addfile(info, io.BytesIO(manifest))
        for depth in range(1, 1101):
            member = tarfile.TarInfo("root/" + "/".join(["d"] * depth))
            member.type = tarfile.DIRTYPE
            tar.addfile(member)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    completed = subprocess.run([SASCHECK, "scan", "--snapshot", str(archive), "--quiet"],
                               capture_output=True, text=True, timeout=300,
                               env={**os.environ, "TMPDIR": str(scratch)})
    assert completed.returncode == 1
    assert "nested more than 64 deep" in completed.stderr
    assert completed.stderr.count("\n") == 1
    assert list(scratch.iterdir()) == []


def test_the_copy_budget_counts_bytes_read_not_sizes_listed(tmp_path, monkeypatch):
    """A file that grows after it was listed (as one being appended to while a sosreport is
    copied) is counted as read: listed as nothing here, it is still refused past the budget."""
    source = tmp_path / "tree"
    source.mkdir()
    for name in ("a", "b", "c"):
        (source / name).write_bytes(b"x" * (600 << 10))
    monkeypatch.setattr(tree_copy, "MAX_TOTAL_BYTES", 1 << 20)
    monkeypatch.setattr(tree_copy._Budget, "size", lambda self, name, size: None)
    with pytest.raises(SnapshotError, match="over the size limits"):
        tree_copy.copy_tree(str(source), str(tmp_path / "copy" / "root"), lambda name: "/" + name)
    copied = sum(path.stat().st_size for path in (tmp_path / "copy").rglob("*") if path.is_file())
    assert copied <= (1 << 20) + 1
