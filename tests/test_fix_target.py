"""A fix acts on the host it was written for, with the values the site gave (issue 36): the
inventory's values reach the Ansible fix, a printed next step names its target, and a fix
refuses another host (host name, machine-id) or an unnamed one unless --any-host says so."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sascheck.cli import main

from .support.fix_hosts import ROOTS, build_root
from .support.hosts import BASELINE_SETS, sas_host, tree_digest
from .support.lab import require
from .support.remedy import ANSIBLE_BIN, ansible_available, generate, run_bash, run_playbook

MACHINE_ID = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"


def image(path: Path, hostname: str = "sastest", machine_id: str = MACHINE_ID) -> Path:
    """A host whose tuned has no profile active (tuned_profile fails; the fix writes
    sas-performance), with systemd's machine-id."""
    root = sas_host(path, tuned_active=None)
    (root / "etc/hostname").write_text(hostname + "\n")
    (root / "etc/machine-id").write_text(machine_id + "\n")
    return root


def run_fix(script: Path, root: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SASCHECK_ROOT": str(root) if root else ""}
    return subprocess.run(["bash", str(script), *args], env=env, capture_output=True,
                          text=True, timeout=120, cwd=script.parent)


def test_a_fix_refuses_another_host_by_name(tmp_path):
    first = image(tmp_path / "sasprod1", hostname="sasprod1")
    fix = generate("bash", tmp_path / "fix.sh", first, BASELINE_SETS)
    other = tmp_path / "sasprod2"
    shutil.copytree(first, other, symlinks=True)
    (other / "etc/hostname").write_text("sasprod2\n")
    before = tree_digest(other)
    ran = run_fix(fix, other)
    assert ran.returncode == 4, ran.stdout + ran.stderr
    assert "refused: the target is sasprod2, not sasprod1" in ran.stderr
    assert tree_digest(other) == before
    anyway = run_fix(fix, other, "--any-host")
    assert anyway.returncode in (0, 3), anyway.stderr
    assert tree_digest(other) != before


def test_a_fix_refuses_a_clone_with_another_machine_id(tmp_path):
    first = image(tmp_path / "a")
    fix = generate("bash", tmp_path / "fix.sh", first, BASELINE_SETS)
    clone = tmp_path / "b"
    shutil.copytree(first, clone, symlinks=True)
    (clone / "etc/machine-id").write_text("1" * 32 + "\n")
    before = tree_digest(clone), tree_digest(first)
    ran = run_fix(fix, clone)
    assert ran.returncode == 4 and "machine-id" in ran.stderr
    assert tree_digest(clone) == before[0]
    assert run_fix(fix, first).returncode in (0, 3)  # its own image: fixed
    assert tree_digest(first) != before[1]


def test_an_images_fix_needs_its_target_named(tmp_path):
    # --dry-run: were the check broken, this machine would only be read, never changed.
    root = image(tmp_path / "root")
    fix = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS)
    ran = run_fix(fix, None, "--dry-run")
    assert ran.returncode == 4, ran.stdout + ran.stderr
    assert "written for an offline image; name the target: SASCHECK_ROOT=DIR" in ran.stderr


def test_the_printed_next_step_names_the_image_and_runs(tmp_path, capsys):
    root = image(tmp_path / "my image $(touch PWNED)")
    output = tmp_path / "fix.sh"
    assert main(["fix", "--format", "bash", "--root", str(root), "--set", BASELINE_SETS[0],
                 "-o", str(output)]) == 0
    hint = next(line for line in capsys.readouterr().err.splitlines()
                if line.startswith("next"))
    assert f"SASCHECK_ROOT={shlex.quote(str(root))} bash" in hint
    dry_run = hint.split(": ", 1)[1].split(", then ")[0]
    ran = subprocess.run(["bash", "-c", dry_run], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert ran.returncode in (0, 3), ran.stderr
    assert "offline image" in ran.stdout and not (tmp_path / "PWNED").exists()
    assert main(["fix", "--format", "ansible", "--root", str(root), "--set", BASELINE_SETS[0],
                 "-o", str(tmp_path / "fix.yml")]) == 0
    hint = capsys.readouterr().err
    assert shlex.quote(json.dumps({"sascheck_root": str(root)})) in hint


def test_the_scans_role_travels_with_its_results(tmp_path):
    root = image(tmp_path / "root")
    results = tmp_path / "results.json"
    assert main(["scan", "--root", str(root), "--role", "kvm_host", "--set", BASELINE_SETS[0],
                 "--json", str(results)]) in (0, 1, 2)
    fix = tmp_path / "fix.sh"
    assert main(["fix", "--format", "bash", "--from", str(results), "-o", str(fix)]) == 0
    text = fix.read_text()
    assert "FORCED_ROLE=kvm_host" in text and ", role kvm_host." in text
    ran = run_fix(fix, root, "--dry-run")
    assert "role kvm_host" in ran.stdout, ran.stdout + ran.stderr


def test_inventory_values_reach_the_ansible_fix(tmp_path):
    """group_vars give sascheck_root, and no -e: play vars would have fixed the controller
    (the planner's target check refuses that too, so this machine is never changed)."""
    require(None if ansible_available() else "ansible-playbook is not installed", "ansible")
    root = image(tmp_path / "root")
    assert not (root / "etc/tuned/active_profile").exists()
    playbook = generate("ansible", tmp_path / "fix.yml", root, BASELINE_SETS)
    (tmp_path / "inventory.ini").write_text(
        f"[sas]\nlocalhost ansible_connection=local ansible_python_interpreter={sys.executable}\n")
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "group_vars/sas.yml").write_text(
        f"sascheck_root: {json.dumps(str(root))}\nsascheck_allow_manual: true\n"
        f"sascheck_manifest: {json.dumps(str(tmp_path / 'fix.manifest'))}\n")
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "PATH": f"{ANSIBLE_BIN}:{os.environ['PATH']}"}
    ran = subprocess.run([str(ANSIBLE_BIN / "ansible-playbook"), "-i", "inventory.ini",
                          playbook.name], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert re.search(r"localhost\s+:.*failed=0", ran.stdout)
    # as tuned-adm writes it, final newline and all (the bash fix's write)
    assert (root / "etc/tuned/active_profile").read_text() == "sas-performance\n"


# A backup's name holds the time it was made: bash's FILE.sascheck-<time>.<random>.bak,
# Ansible's FILE.<pid>.<date>@<time>~ (ansible.builtin.copy backup=true).
BACKUP = re.compile(r"\.sascheck-[0-9]{14}\.[A-Za-z0-9]+\.bak$|\.[0-9]+\.[0-9-]+@[0-9:]+~$")
SAME_TREE_ROOTS = [root for root in ROOTS if root[0] in (
    "example rhel6-defaults", "boot mounts: fstab lacks noatime (remounted by hand)",
    "boot mounts: fstab turns barriers off")]


def _tree(root: Path) -> dict[str, tuple[object, ...]]:
    """Every entry but backups: a link's target, a file's bytes and mode, a directory."""
    entries: dict[str, tuple[object, ...]] = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if BACKUP.search(name):
            continue
        if path.is_symlink():
            entries[name] = ("link", os.readlink(path))
        elif path.is_file():
            entries[name] = ("file", path.read_bytes(), path.stat().st_mode & 0o7777)
        else:
            entries[name] = ("dir",)
    return entries


@pytest.mark.parametrize(("name", "changes", "sets"), SAME_TREE_ROOTS,
                         ids=[root[0] for root in SAME_TREE_ROOTS])
def test_bash_and_ansible_leave_the_same_image(tmp_path, name, changes, sets):
    require(None if ansible_available() else "ansible-playbook is not installed", "ansible")
    sets = [*BASELINE_SETS, *sets] if changes is not None else list(sets)
    by_bash = build_root(tmp_path / "bash", name, changes)
    by_ansible = build_root(tmp_path / "ansible", name, changes)
    untouched = _tree(by_bash)
    run_bash(generate("bash", tmp_path / "fix.sh", by_bash, sets), by_bash)
    run_playbook(generate("ansible", tmp_path / "fix.yml", by_ansible, sets), by_ansible)
    bash_tree, ansible_tree = _tree(by_bash), _tree(by_ansible)
    assert bash_tree != untouched
    assert {k for k in bash_tree.keys() | ansible_tree.keys()
            if bash_tree.get(k) != ansible_tree.get(k)} == set()


def test_the_playbook_runs_its_planner_from_beside_it(tmp_path):
    """Issue 36: the bash library ships once, as the planner file beside the playbook (run on
    each host by ansible.builtin.script), not as a copy inside the playbook's variables."""
    root = image(tmp_path / "root")
    playbook = generate("ansible", tmp_path / "fix.yml", root, BASELINE_SETS)
    planner = tmp_path / "fix.planner.sh"
    assert planner.is_file() and os.access(planner, os.X_OK)
    text = playbook.read_text()
    assert "check_target() {" in planner.read_text() and "check_target() {" not in text
    assert "ansible.builtin.script:" in text and "cmd: \"{{ sascheck_planner }}\"" in text
    assert "sascheck_planner_name: !unsafe \"fix.planner.sh\"" in text


def test_a_revert_ends_green_though_a_human_has_work_left(tmp_path):
    """Issue 36: the 'work left to a human' tasks do not run under --tags revert, so a revert
    that restored everything exits 0 even with sascheck_allow_manual false."""
    require(None if ansible_available() else "ansible-playbook is not installed", "ansible")
    from .support.hosts import SasFs

    root = sas_host(tmp_path / "root", tuned_active=None,
                    filesystems=[SasFs("sasdata", "/sasdata", "ext3")])  # sas_fs_type: manual
    before = tree_digest(root, times=False)
    playbook = generate("ansible", tmp_path / "fix.yml", root, BASELINE_SETS)
    manifest = tmp_path / "fix.manifest"
    run_playbook(playbook, root, "-e", f"sascheck_manifest={manifest}")
    assert tree_digest(root, times=False) != before
    undone = run_playbook(playbook, root, "--tags", "revert", "-e",
                          f"sascheck_manifest={manifest}", "-e", "sascheck_allow_manual=false")
    assert undone["failed"] == 0 and undone["changed"] == 1
    assert tree_digest(root, times=False) == before


# /etc/hostname as people leave it, and the name systemd sets from it (hostname-setup.c
# read_etc_hostname_stream: first line neither blank nor "#", then hostname_cleanup).
HOSTNAME_FILES = [("sas host01\n", "sashost01"), ("# set by kickstart\n\n  sas01  \n", "sas01"),
                  ("sas01\r\n", "sas01"), ("sas\u00e901.example.com\n", "sas01.example.com"),
                  ("\n\t\n", "")]


@pytest.mark.parametrize(("content", "name"), HOSTNAME_FILES)
def test_the_fix_reads_the_host_name_as_the_scan_does(tmp_path, content, name):
    """Issue 48: the scan kept inner blanks the fix's check removed, so a fix refused the
    very image it was written from. Both now read it one way (host_layout.host_name)."""
    root = image(tmp_path / "root")
    (root / "etc/hostname").write_text(content)
    (root / "proc/sys/kernel").mkdir(parents=True, exist_ok=True)
    (root / "proc/sys/kernel/hostname").write_text("kernelname\n")
    results = tmp_path / "results.json"
    main(["scan", "--root", str(root), "--quiet", "--json", str(results), "--set",
          BASELINE_SETS[0]])
    assert json.loads(results.read_text())["host"]["hostname"] == (name or "kernelname")
    fix = tmp_path / "fix.sh"
    assert main(["fix", "--format", "bash", "--from", str(results), "-o", str(fix)]) == 0
    ran = run_fix(fix, root, "--dry-run")
    assert ran.returncode in (0, 3), ran.stderr
    (root / "etc/hostname").write_text(content.replace("sas", "sbs") if name else "other\n")
    refused = run_fix(fix, root, "--dry-run")
    assert refused.returncode == 4 and "refused: the target is" in refused.stderr
