"""Fix day across a fleet (issue 48): one fix written from a fleet's results directory plans
each host from its own results, keyed by inventory name. Run with the real consumers:
ansible-playbook against several local images under one inventory (group_vars, --limit
@FILE, no -e), and the per-host bash scripts an admin's loop runs from the manifest."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from sascheck.cli import main
from sascheck.reports.identity import FLEET_MARKER, FLEET_MARKER_TEXT

from .support.hosts import BASELINE_SETS, sas_host, tree_digest
from .support.lab import require
from .support.remedy import ANSIBLE_BIN, ansible_available, lint_playbook
from .test_reports import _scan_json

pytestmark = [pytest.mark.slow, pytest.mark.ansible]

THP_ON = "[always] madvise never"
# name: (what differs from the baseline host, where the inventory points it)
# (THP at run time is not written in an offline image: the tuned profile is what changes.)
FLEET = {
    "sas01": {"tuned_active": None},
    "sas02": {"tuned_active": None, "thp_enabled": THP_ON},
    "sas03": {},
    "sas05": {"tuned_active": None},  # its results are stale
    "sas06": {"tuned_active": None},  # the inventory points at a clone with another id
}

def _machine_id(name: str) -> str:
    return (name.encode().hex() * 8)[:32]

def _fleet(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    """Images of FLEET and their results in a fleet directory, as fleet-scan.yml leaves it."""
    results = tmp_path / "results"
    results.mkdir()
    (results / FLEET_MARKER).write_text(FLEET_MARKER_TEXT)
    roots = {}
    for name, changes in FLEET.items():
        roots[name] = sas_host(tmp_path / "roots" / name, **changes, extra_files={
            "/etc/hostname": f"{name}\n", "/etc/machine-id": f"{_machine_id(name)}\n"})
        _scan_json(roots[name], BASELINE_SETS, results / f"{name}.json")
    old = time.time() - 30 * 86400
    os.utime(results / "sas05.json", (old, old))  # the controller wrote it a month ago
    clone = tmp_path / "roots" / "sas06-rebuilt"
    shutil.copytree(roots["sas06"], clone, symlinks=True)
    (clone / "etc/machine-id").write_text(f"{_machine_id('other')}\n")
    roots["sas06"] = clone
    roots["sas04"] = sas_host(tmp_path / "roots" / "sas04", extra_files={
        "/etc/hostname": "sas04\n"})  # in the inventory, never scanned
    return results, roots

def _inventory(tmp_path: Path, roots: dict[str, Path]) -> None:
    lines = ["[sas]"] + [f"{name} sascheck_root={root} sascheck_manifest="
                         f"{tmp_path / (name + '.manifest')}" for name, root in sorted(roots.items())]
    lines += ["[sas:vars]", "ansible_connection=local",
              f"ansible_python_interpreter={sys.executable}"]
    (tmp_path / "inventory.ini").write_text("\n".join(lines) + "\n")
    (tmp_path / "group_vars").mkdir(exist_ok=True)
    # the names the fleet scan takes: one set for both playbooks
    (tmp_path / "group_vars/sas.yml").write_text(
        "sascheck_sets:\n  sas_data_dirs: [/sasdata]\nsascheck_allow_manual: true\n")

def _play(tmp_path: Path, playbook: Path, *args: str) -> tuple[int, str, dict[str, str]]:
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_HOST_KEY_CHECKING": "0",
           "PATH": f"{ANSIBLE_BIN}:{os.environ['PATH']}"}
    ran = subprocess.run([str(ANSIBLE_BIN / "ansible-playbook"), "-i", "inventory.ini",
                          str(playbook), *args], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=900)
    recap = dict(re.findall(r"^(sas\d\d)\s+:\s+(.*)$", ran.stdout, re.MULTILINE))
    return ran.returncode, ran.stdout + ran.stderr, recap

def _verdict(root: Path, rule: str, tmp_path: Path) -> str:
    out = _scan_json(root, BASELINE_SETS, tmp_path / "rescan.json")
    return next(r["result"] for r in json.loads(out.read_text())["rules"] if r["id"] == rule)

def test_one_playbook_fixes_each_failing_host_from_its_own_results(tmp_path, capsys):
    require(None if ansible_available() else "ansible-playbook is not installed", "ansible")
    results, roots = _fleet(tmp_path)
    _inventory(tmp_path, roots)
    assert main(["fix", "--format", "ansible", "--fleet", str(results),
                 "-o", str(tmp_path / "fix")]) == 0
    err = capsys.readouterr().err
    assert "ansible fix for 4 hosts, 1 refused" in err
    assert re.search(r"refused sas05: its results are from .*older than --max-age", err)
    assert main(["report", "--failing", "tuned_profile", *map(str, results.glob("*.json"))]) == 0
    failing = capsys.readouterr().out
    assert failing.splitlines() == ["sas01", "sas02", "sas05", "sas06"]
    (tmp_path / "failing.txt").write_text("sas01\nsas02\n")  # the two fixed first
    untouched = {name: tree_digest(root) for name, root in roots.items()}
    sas01_before = tree_digest(roots["sas01"], times=False)

    linted = lint_playbook(tmp_path / "fix/sascheck-fix.yml")
    assert linted.returncode == 0, linted.stdout[-3000:]
    rc, out, recap = _play(tmp_path, tmp_path / "fix/sascheck-fix.yml", "--limit", "@failing.txt")
    assert rc == 0, out[-4000:]
    assert sorted(recap) == ["sas01", "sas02"], out[-3000:]
    assert all("failed=0" in line and "changed=0" not in line for line in recap.values()), recap
    # sas02's THP is 'always' now: a running value an image has nowhere to take, named in
    # the play's output rather than skipped in silence (issue 65)
    assert "thp_disabled: a running value: an offline image has no running kernel" in out
    assert _verdict(roots["sas01"], "tuned_profile", tmp_path) == "pass"
    assert _verdict(roots["sas02"], "tuned_profile", tmp_path) == "pass"

    rc, out, recap = _play(tmp_path, tmp_path / "fix/sascheck-fix.yml")
    assert rc == 2, out[-4000:]
    assert "failed=0" in recap["sas03"] and "changed=0" in recap["sas03"], recap
    assert "changed=0" in recap["sas01"] and "changed=0" in recap["sas02"], recap  # idempotent
    for name in ("sas04", "sas05", "sas06"):
        assert "failed=1" in recap[name], (name, out[-4000:])
        assert tree_digest(roots[name]) == untouched[name], name
    assert tree_digest(roots["sas03"]) == untouched["sas03"]
    assert "refused: no results of this inventory host" in out
    assert re.search(r"refused: its results are from .*older than --max-age allows", out)
    assert "the target's /etc/machine-id is not that of sas06" in out

    # Revert ends green on a host the fix changed (back as it was) and on one it never
    # changed, which has no manifest: nothing to revert (issue 65)
    assert not (tmp_path / "sas03.manifest").exists()
    rc, out, recap = _play(tmp_path, tmp_path / "fix/sascheck-fix.yml", "--limit", "sas01,sas03",
                           "--tags", "revert")
    assert rc == 0, out[-4000:]
    assert "failed=0" in recap["sas03"] and "changed=0" in recap["sas03"], recap
    assert "changed=1" in recap["sas01"], recap
    assert tree_digest(roots["sas01"], times=False) == sas01_before

def test_bash_scripts_per_host_with_a_manifest_an_admins_loop_reads(tmp_path, capsys):
    results, roots = _fleet(tmp_path)
    out = tmp_path / "fix"
    assert main(["fix", "--format", "bash", "--fleet", str(results), "--max-age", "0",
                 "-o", str(out)]) == 0
    rows = [line.split("\t") for line in (out / "manifest.tsv").read_text().splitlines()]
    assert [row[:2] for row in rows] == [[name, f"{name}.sh"] for name in
                                        ("sas01", "sas02", "sas03", "sas05", "sas06")]
    assert dict((row[0], row[2]) for row in rows)["sas03"] == "-"
    assert "tuned_profile" in dict((row[0], row[2]) for row in rows)["sas02"]
    assert (out / "refused.tsv").read_text() == ""
    # the admin's loop, as the printed next step shows it, against the images
    loop = ("while IFS=$'\\t' read -r host script rules scanned; do "
            "SASCHECK_ROOT=\"$ROOTS/$host\" bash \"$FIX/$script\" >/dev/null || echo \"$host $?\"; "
            "done < \"$FIX/manifest.tsv\"")
    ran = subprocess.run(["bash", "-c", loop], env={**os.environ, "ROOTS": str(tmp_path / "roots"),
                         "FIX": str(out), "SASCHECK_MANIFEST": str(tmp_path / "m")},
                         capture_output=True, text=True, timeout=300)
    # every script on its own image; a script on another host refuses it
    assert ran.stdout.strip() == "", ran.stdout + ran.stderr
    assert _verdict(roots["sas02"], "tuned_profile", tmp_path) == "pass"
    other = subprocess.run(["bash", str(out / "sas01.sh")], capture_output=True, text=True,
                           env={**os.environ, "SASCHECK_ROOT": str(roots["sas03"])}, timeout=120)
    assert other.returncode == 4 and "refused: the target is sas03, not sas01" in other.stderr

def test_a_fleet_fix_refuses_what_it_cannot_plan_and_an_old_directory(tmp_path, capsys):
    results, _ = _fleet(tmp_path)
    (results / "sas07.arf.xml").write_text("<x/>")
    (results / "sas08.failed.json").write_text("{}")
    (results / "sas01.json").write_text("{not json")
    assert main(["fix", "--format", "bash", "--fleet", str(results), "-o",
                 str(tmp_path / "fix")]) == 0
    refused = dict(line.split("\t") for line in
                   (tmp_path / "fix/refused.tsv").read_text().splitlines())
    assert sorted(refused) == ["sas01", "sas05", "sas07", "sas08"]
    assert refused["sas07"].startswith("only oscap results (ARF)")
    assert refused["sas08"].startswith("its last scan failed")
    assert refused["sas01"].startswith("its results cannot be used")
    assert not (tmp_path / "fix/sas01.sh").exists()
    capsys.readouterr()
    # a second fix into the same directory could leave an old plan behind: refused
    assert main(["fix", "--format", "bash", "--fleet", str(results), "-o",
                 str(tmp_path / "fix")]) == 1
    assert "it is not empty" in capsys.readouterr().err
    # an inventory name Ansible would template never reaches the playbook's variables
    hostile = "{{ lookup('pipe', 'touch /tmp/pwned-by-sascheck') }}"
    shutil.copy(results / "sas03.json", results / (quote(hostile, safe="") + ".json"))
    assert main(["fix", "--format", "ansible", "--fleet", str(results), "-o",
                 str(tmp_path / "fix3")]) == 0
    assert "lookup(" not in (tmp_path / "fix3/sascheck-fix.yml").read_text()
    assert repr(hostile) in (tmp_path / "fix3/refused.tsv").read_text()
    # results outside a fleet directory name hosts by their own word: refused
    (results / FLEET_MARKER).unlink()
    assert main(["fix", "--format", "ansible", "--fleet", str(results), "-o",
                 str(tmp_path / "fix2")]) == 1
    assert "not a fleet results directory" in capsys.readouterr().err


def _one_host_inventory(tmp_path: Path, root: Path, group_vars: str) -> None:
    (tmp_path / "inventory.ini").write_text(
        f"[sas]\nsas01 ansible_connection=local ansible_python_interpreter={sys.executable}\n")
    (tmp_path / "group_vars").mkdir(exist_ok=True)
    (tmp_path / "group_vars/sas.yml").write_text(
        f"sascheck_root: {json.dumps(str(root))}\n"
        f"sascheck_manifest: {json.dumps(str(tmp_path / 'fix.manifest'))}\n{group_vars}")


NOBARRIER = "/dev/mapper/sasvg-sasdata /sasdata ext4 defaults,noatime,nobarrier 0 0\n"


def test_the_fix_reads_site_values_by_the_scans_names_and_refuses_others(tmp_path):
    """The fleet scan's sascheck_sets reaches the fix (a cache the site declared protected
    keeps its nobarrier); a per-value variable of earlier releases fails the play, naming
    sascheck_sets, and changes nothing."""
    require(None if ansible_available() else "ansible-playbook is not installed", "ansible")
    from .support.hosts import SasFs

    root = sas_host(tmp_path / "root", extra_files={"/etc/fstab": NOBARRIER, "/etc/hostname":
                                                    "sas01\n"},
                    filesystems=[SasFs("sasdata", "/sasdata", "ext4", "rw,noatime,nobarrier")])
    assert main(["fix", "--format", "ansible", "--root", str(root), "--set", BASELINE_SETS[0],
                 "--all", "--rule", "barrier_requires_protected_cache",
                 "-o", str(tmp_path / "fix.yml")]) == 0
    before = tree_digest(root)
    _one_host_inventory(tmp_path, root, "sascheck_storage_cache_protected: true\n")
    rc, out, recap = _play(tmp_path, tmp_path / "fix.yml")
    assert rc == 2 and "failed=1" in recap["sas01"], out[-3000:]
    assert ("sascheck_storage_cache_protected is not a variable of sascheck's playbooks; use "
            "sascheck_sets (storage_cache_protected=...)") in out
    assert tree_digest(root) == before
    _one_host_inventory(tmp_path, root, "sascheck_sets: storage_cache_protected=yes\n")
    rc, out, recap = _play(tmp_path, tmp_path / "fix.yml")
    assert rc == 0, out[-3000:]
    assert "nobarrier" in (root / "etc/fstab").read_text()
    _one_host_inventory(tmp_path, root, "")  # the fix's own default: barriers back on
    rc, out, recap = _play(tmp_path, tmp_path / "fix.yml")
    assert rc == 0, out[-3000:]
    assert "nobarrier" not in (root / "etc/fstab").read_text()


def test_a_check_run_reports_work_left_to_a_human_without_failing(tmp_path):
    require(None if ansible_available() else "ansible-playbook is not installed", "ansible")
    from .support.hosts import SasFs

    root = sas_host(tmp_path / "root", extra_files={"/etc/hostname": "sas01\n"},  # ext3: by hand
                    filesystems=[SasFs("sasdata", "/sasdata", "ext3")])
    assert main(["fix", "--format", "ansible", "--root", str(root), "--set", BASELINE_SETS[0],
                 "-o", str(tmp_path / "fix.yml")]) == 0
    _one_host_inventory(tmp_path, root, "")
    before = tree_digest(root)
    rc, out, recap = _play(tmp_path, tmp_path / "fix.yml", "--check")
    assert rc == 0 and "failed=0" in recap["sas01"], out[-3000:]
    assert "add -e sascheck_allow_manual=true" in out
    assert tree_digest(root) == before
    rc, out, recap = _play(tmp_path, tmp_path / "fix.yml")
    assert rc == 2 and "failed=1" in recap["sas01"], out[-3000:]


def test_both_playbooks_check_the_same_variables():
    """fleet-scan.yml carries the check task the fix playbooks render, current with the
    catalogue (run scripts/update-generated after adding a site value)."""
    from sascheck.remediations.inventory_vars import FLEET_SCAN, check_task, with_current_variables
    from sascheck.rules import load_catalogue

    names = list(load_catalogue().variables)
    text = FLEET_SCAN.read_text()
    assert text == with_current_variables(text, names), "run scripts/update-generated"
    assert check_task(names) in text
    assert "sascheck_storage_cache_protected: \"sascheck_sets (storage_cache_protected=...)\"" in text
