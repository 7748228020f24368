"""Remediations: generated from a scan, checked by shellcheck / ansible-lint, run for real
on built roots (offline, SASCHECK_ROOT) and proven by a re-scan."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.example_roots import EXAMPLE_VALUES, EXAMPLES

from .support import tuned_loader
from .support.fix_hosts import (
    BAD,
    DEFAULT_RULES,
    PERSISTENCE_RULES,
    ROOTS,
    build_root,
    needs_ansible,
    verdicts,
)
from .support.hosts import BASELINE_SETS, sas_host, tree_digest
from .support.oscap import DATASTREAM, oscap_available
from .support.remedy import (
    ansible_available,
    covering,
    generate,
    lint_playbook,
    playbook_parts,
    run_bash,
    run_playbook,
    script_lines,
)
from .test_discovery import ROLE_CASES


def _offers_an_allowed_scheduler(root: Path, sets: list[str]) -> bool:
    allowed = next((s.split("=", 1)[1].split(",") for s in sets
                    if s.startswith("allowed_schedulers=")), None)
    if allowed is None:
        return True
    offered = {word.strip("[]") for path in root.glob("sys/block/*/queue/scheduler")
               for word in path.read_text().split()}
    return bool(offered & set(allowed))


def _fixable(rule_id: str, root: Path, sets: list[str]) -> bool:
    """Offline, tuned cannot be installed: its rule stays failing without it. A RHEL 6 ktune
    script that remounts nobarrier or lowers read-ahead is not rewritten (the fix says what
    to do), and without tuned 0.2's throughput-performance there is no profile to switch to."""
    if rule_id == "mount_options_at_boot" and any(root.glob("etc/rc.d/rc[2-5].d/S27ktune")) \
            and not (root / "etc/tune-profiles/throughput-performance").is_dir():
        return False
    inittab = root / "etc/inittab"
    level = re.search(r"^[^#:]*:(\d):initdefault:", inittab.read_text(), re.MULTILINE) \
        if inittab.exists() else None
    if rule_id == "thp_disabled_at_boot" and level and not any(
            root.glob(f"etc/rc.d/rc{level.group(1)}.d/S[0-9][0-9]local")):
        return False  # rc.local does not run at that run level: the fix says to link it
    backups = root / "etc/lvm/backup"
    if rule_id == "io_tuning_at_boot" and backups.is_dir() and any(
            "read_ahead = 256" in backup.read_text() for backup in backups.iterdir()):
        return False  # LVM's metadata is changed with lvchange on the live host only
    ktune = root / "etc/ktune.d/tunedadm.sh"
    if rule_id == "io_tuning_at_boot" and ktune.exists() and re.search(
            r"^start\(\) \{[^}]*multiply_disk_readahead 0\.", ktune.read_text(), re.MULTILINE):
        return False  # a ktune script that lowers read-ahead is left to the administrator
    if rule_id == "io_tuning_at_boot" and not _offers_an_allowed_scheduler(root, sets):
        return False  # no device offers what the site allows: nothing a fix can set
    sysctl_d = root / "etc/sysctl.d"
    if rule_id == "dirty_ratio_at_boot" and sysctl_d.is_dir() and any(
            "vm.dirty_bytes" in conf.read_text() for conf in sysctl_d.glob("*.conf")):
        return False  # the site chose dirty_bytes too: which one wins is left to it (manual)
    if rule_id == "tuned_profile" and not (root / "usr/lib/systemd/system").is_dir():
        return False  # SysV (RHEL 5, 6): tuned-adm 0.2 is only run live
    if rule_id == "tuned_profile" and _site_sas_performance(root):
        return False  # a sas-performance sascheck did not write is the site's: kept (issue 48)
    return not (rule_id == "tuned_profile" and not (root / "usr/sbin/tuned").exists())


def _site_sas_performance(root: Path) -> bool:
    return any(not path.read_text().startswith("# sas-performance: a tuned profile for SAS, "
                                               "written by sascheck ")
               for path in root.glob("etc/tuned/**/sas-performance/tuned.conf"))


def _assert_fixed(before: dict[str, str], after: dict[str, str], root: Path,
                  sets: list[str]) -> None:
    for rule_id in PERSISTENCE_RULES:
        if before[rule_id] in BAD and _fixable(rule_id, root, sets):
            assert after[rule_id] == "pass", (rule_id, before[rule_id], after[rule_id])
    worse = {r: (before[r], after[r]) for r in before
             if after[r] in BAD and before[r] not in BAD}
    assert worse == {}


def _tuned_profiles(root: Path) -> dict[Path, str]:
    return {path: path.read_text() for path in [
        *root.glob("etc/tuned/sas-performance/tuned.conf"),
        *root.glob("etc/tuned/profiles/sas-performance/tuned.conf")]}


def _assert_tuned_loads(root: Path, before: dict[Path, str]) -> None:
    """Whatever profile the fix wrote, tuned's own loader loads it against the image's
    profile directories (a missing include would make tuned start with no tuning)."""
    written = [path for path, text in _tuned_profiles(root).items() if before.get(path) != text]
    if written and tuned_loader.available():
        loaded = tuned_loader.load(root, "sas-performance")
        assert "error" not in loaded, loaded


@pytest.mark.parametrize(("name", "changes", "sets"), ROOTS, ids=[r[0] for r in ROOTS])
def test_bash_fixes_offline_and_is_idempotent(tmp_path, name, changes, sets):
    root = build_root(tmp_path, name, changes)
    sets = [*BASELINE_SETS, *sets] if changes is not None else list(sets)
    script = generate("bash", tmp_path / "fix.sh", root, sets)  # shellcheck: below
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    before = verdicts(root, sets)
    untouched = tree_digest(root)
    profiles = _tuned_profiles(root)
    dry = run_bash(script, root, "--dry-run")
    assert tree_digest(root) == untouched, "--dry-run changed the root"
    first = run_bash(script, root)
    assert first.stdout.count("changed:") == dry.stdout.count("would:")
    _assert_fixed(before, verdicts(root, sets), root, sets)
    _assert_tuned_loads(root, profiles)
    second = run_bash(script, root)
    assert second.stdout.rstrip().endswith("no changes"), second.stdout


def _every_root_fix(work: Path, half: int, fmt: str, suffix: str) -> list[Path]:
    """The ``fmt`` fix of every other test root (``half`` picks which), each root built
    under work/rN (covering() sets those paths aside)."""
    fixes = []
    for index, (name, changes, sets) in list(enumerate(ROOTS))[half::2]:
        root = build_root(work / f"r{index}", name, changes)
        sets = [*BASELINE_SETS, *sets] if changes is not None else list(sets)
        fixes.append(generate(fmt, work / f"fix{index:02d}.{suffix}", root, sets))
    return fixes


@pytest.mark.parametrize("half", [0, 1])
def test_bash_fixes_of_every_test_root_pass_shellcheck(tmp_path, half):
    """Every test root's script, in two halves: shellcheck reads, in one run, a few that hold
    every distinct line of them all, data aside (script_lines): the same template output is
    checked once, not once per root that renders it (#67)."""
    scripts = _every_root_fix(tmp_path, half, "bash", "sh")
    check = subprocess.run(["shellcheck", *map(str, covering(scripts, tmp_path, script_lines))],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout[-3000:]


ANSIBLE_ROOTS = [r for r in ROOTS if r[0] in (
    "example rhel6-defaults", "example kvm-host", "tuned disabled", "thp boot: nothing",
    "io boot: balanced profile", "relatime")]


@needs_ansible
@pytest.mark.parametrize(("name", "changes", "sets"), ANSIBLE_ROOTS,
                         ids=[r[0] for r in ANSIBLE_ROOTS])
def test_playbook_fixes_offline_and_is_idempotent(tmp_path, name, changes, sets):
    root = build_root(tmp_path, name, changes)
    sets = [*BASELINE_SETS, *sets] if changes is not None else list(sets)
    playbook = generate("ansible", tmp_path / "fix.yml", root, sets)
    before = verdicts(root, sets)
    untouched = tree_digest(root)
    check = run_playbook(playbook, root, "--check")
    assert tree_digest(root) == untouched, "--check changed the root"
    first = run_playbook(playbook, root)
    # Check mode plans every rule against the untouched system: a file that two rules edit
    # (a runtime rule's fstab or sysctl.d line and its *_at_boot companion) counts for each
    # there, once in the real run, where the second rule finds it done.
    assert first["failed"] == 0 and first["changed"] <= check["changed"]
    _assert_fixed(before, verdicts(root, sets), root, sets)
    assert run_playbook(playbook, root)["changed"] == 0


@needs_ansible
@pytest.mark.parametrize("half", [0, 1])
def test_playbooks_of_every_test_root_pass_syntax_check_and_lint(tmp_path, half):
    """Every test root's playbook, in two halves: one ansible-lint run over many playbooks
    shares its start-up, and ansible-lint uses one core, so the halves run on both. Every
    playbook passes --syntax-check; ansible-lint reads a few that hold every distinct task
    text of them all (covering)."""
    from .support.remedy import ANSIBLE_BIN

    playbooks = _every_root_fix(tmp_path, half, "ansible", "yml")
    check = subprocess.run([str(ANSIBLE_BIN / "ansible-playbook"), "--syntax-check", "-i",
                            "localhost,", *map(str, playbooks)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout[-2000:] + check.stderr[-2000:]
    env = {**os.environ, "PATH": f"{ANSIBLE_BIN}:{os.environ['PATH']}", "NO_COLOR": "1"}
    every = subprocess.run([str(ANSIBLE_BIN / "ansible-lint"), "--offline", "-f", "pep8",
                            *map(str, covering(playbooks, tmp_path, playbook_parts))],
                           cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=900)
    assert every.returncode == 0, every.stdout[-3000:]


@needs_ansible
def test_playbook_passes_syntax_check_and_ansible_lint(tmp_path):
    EXAMPLES["rhel6-defaults"](tmp_path / "root")
    playbook = generate("ansible", tmp_path / "fix.yml", tmp_path / "root",
                        EXAMPLE_VALUES["rhel6-defaults"], ["--all"])
    lint = lint_playbook(playbook)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    text = playbook.read_text()
    assert "ansible.builtin." in text
    modules = {line.split(":")[0].strip() for line in text.splitlines()
               if line.strip().startswith("ansible.")}
    assert all(module.startswith("ansible.builtin.") for module in modules), modules


def test_fix_from_results_json(tmp_path):
    root = sas_host(tmp_path / "root", tuned_active="balanced")
    from sascheck.cli import main
    assert main(["scan", "--root", str(root), "--set", "sas_data_dirs=/sasdata", "--quiet",
                 "--json", str(tmp_path / "r.json")]) == 2
    script = generate("bash", tmp_path / "fix.sh", None, [],
                      ["--from", str(tmp_path / "r.json")])
    text = script.read_text()
    assert "rule_begin tuned_profile" in text and "rule_begin read_ahead" not in text
    assert "SAS_DIRS=(/sasdata /saswork /sasutil)" in text


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
def test_oscap_generate_fix_from_the_datastream(tmp_path):
    profile = "xccdf_org.sascheck.content_profile_default"
    for fix_type, name in (("bash", "fix.sh"), ("ansible", "fix.yml")):
        completed = subprocess.run(["oscap", "xccdf", "generate", "fix", "--fix-type", fix_type,
                                    "--profile", profile, "--output", str(tmp_path / name),
                                    str(DATASTREAM)], capture_output=True, text=True)
        assert completed.returncode == 0, completed.stderr
        assert "skipped" not in completed.stderr
    text = (tmp_path / "fix.sh").read_text()
    # every rule of the profile but those whose remedy is a person's work (fixtext only)
    fixed = [rule for rule in DEFAULT_RULES if not rule.manual_fix]
    assert len(fixed) < len(DEFAULT_RULES)
    assert len(re.findall(r"^rule_begin [a-z]", text, re.MULTILINE)) == len(fixed)
    assert "READ_AHEAD_MIN_KB='2048'" in text  # the XCCDF value, substituted
    assert subprocess.run(["bash", "-n", str(tmp_path / "fix.sh")]).returncode == 0
    if ansible_available():
        from .support.remedy import ANSIBLE_BIN
        check = subprocess.run([str(ANSIBLE_BIN / "ansible-playbook"), "--syntax-check", "-i",
                                "localhost,", str(tmp_path / "fix.yml")],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr


def test_fix_bad_inputs(tmp_path, capsys):
    from sascheck.cli import main
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "other"}')
    assert main(["fix", "--format", "bash", "--from", str(bad), "-o", str(tmp_path / "x")]) == 1
    assert "not a sascheck-result/1 file" in capsys.readouterr().err
    bad.write_text('{"schema": "sascheck-result/1", "values": {}}')
    assert main(["fix", "--format", "bash", "--from", str(bad), "-o", str(tmp_path / "x")]) == 1
    assert ("malformed sascheck results (missing host, role, profile, sas_dirs, summary, rules)"
            in capsys.readouterr().err)
    assert main(["fix", "--format", "bash", "--root", str(tmp_path), "--rule", "nope",
                 "-o", str(tmp_path / "x")]) == 1
    assert "unknown rule(s): nope" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    shutil.rmtree(tmp_path)


def test_bash_role_detection_agrees_with_the_scanner(tmp_path):
    """The fix script decides the role itself (its blocks are guarded by it): on every
    role-evidence root it must decide as the scanner does."""
    script = generate("bash", tmp_path / "fix.sh", sas_host(tmp_path / "base"), BASELINE_SETS,
                      ["--all"])
    for index, (case, (files, links, role)) in enumerate(sorted(ROLE_CASES.items())):
        root = sas_host(tmp_path / f"root{index}", extra_files=files, extra_links=links)
        plan = json.loads(run_bash(script, root, env={"SASCHECK_PLAN": "1"}).stdout)
        assert plan["role"] == role, case
