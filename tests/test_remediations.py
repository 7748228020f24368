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

from sascheck.rules import load_catalogue
from sascheck.scanner.scan import run_scan
from tests.support.example_roots import EXAMPLE_VALUES, EXAMPLES

from .support import tuned_loader
from .support.boot_samples import tuned02_installed
from .support.cases import named
from .support.hosts import BASELINE_SETS, SasFs, sas_host, tree_digest
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
from .test_verdicts import CASES

PERSISTENCE_RULES = ("thp_disabled_at_boot", "io_tuning_at_boot", "tuned_profile",
                     "dirty_ratio_at_boot", "mount_options_at_boot")
BAD = {"fail", "error"}
needs_ansible = pytest.mark.skipif(not ansible_available(), reason="ansible-core not installed")
CATALOGUE = load_catalogue()
# What the default profile selects (cpu_dma_latency belongs to the xtremio profile only).
DEFAULT_RULES = CATALOGUE.rules_of(CATALOGUE.profile("default"))


def verdicts(root: Path, sets: list[str]) -> dict[str, str]:
    result = run_scan(CATALOGUE, "default", sets, str(root), "auto").to_dict()
    return {rule["id"]: rule["result"] for rule in result["rules"]}


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


ROOTS = [(case.name, case.changes, case.sets) for case in CASES] + \
    [(f"example {name}", None, EXAMPLE_VALUES[name]) for name in sorted(EXAMPLES)]


def _build(tmp_path: Path, name: str, changes: dict | None) -> Path:
    root = tmp_path / "root"
    if name.startswith("example "):
        EXAMPLES[name.split(" ", 1)[1]](root)
    else:
        sas_host(root, **(changes or {}))
    return root


@pytest.mark.parametrize(("name", "changes", "sets"), ROOTS, ids=[r[0] for r in ROOTS])
def test_bash_fixes_offline_and_is_idempotent(tmp_path, name, changes, sets):
    root = _build(tmp_path, name, changes)
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
        root = _build(work / f"r{index}", name, changes)
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
    root = _build(tmp_path, name, changes)
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


def test_barriers_are_only_ever_turned_on(tmp_path):
    fs = [SasFs("sasdata", "/sasdata", "ext4", "rw,noatime,nobarrier"),
          SasFs("saswork", "/saswork"), SasFs("sasutil", "/sasutil")]
    fstab = ("/dev/mapper/sasvg-sasdata /sasdata ext4 defaults,noatime,nobarrier 0 0\n"
             "/dev/mapper/sasvg-saswork /saswork xfs defaults,noatime 0 0\n")
    for protected, expected in (("false", "defaults,noatime 0 0"),
                                ("true", "defaults,noatime,nobarrier 0 0")):
        root = sas_host(tmp_path / protected, filesystems=fs,
                        extra_files={"/etc/fstab": fstab})
        sets = [*BASELINE_SETS, f"storage_cache_protected={protected}"]
        script = generate("bash", tmp_path / f"fix-{protected}.sh", root, sets,
                          ["--all", "--rule", "barrier_requires_protected_cache"])
        run_bash(script, root)
        lines = (root / "etc/fstab").read_text().splitlines()
        assert lines[0].endswith(expected), lines
        assert "nobarrier" not in lines[1] and "barrier=0" not in lines[1]


HOSTILE_MOUNTS = ["/sas work", "/x$(touch PWNED)", "/q'uote\"d", "/b`touch PWNED2`"]


def _hostile_root(path: Path) -> Path:
    filesystems = [SasFs(f"lv{index}", point) for index, point in enumerate(HOSTILE_MOUNTS)]
    filesystems = [SasFs(f.lv, f.mountpoint, "xfs", "rw,relatime") for f in filesystems]
    fstab = "".join(f"/dev/mapper/sasvg-{f.lv} {f.mountpoint.replace(' ', chr(92) + '040')} "
                    f"xfs defaults,relatime 0 0\n" for f in filesystems)
    return sas_host(path, filesystems=filesystems, sas_local_cfg=None,
                    extra_files={"/etc/fstab": fstab}, tuned_active="balanced")


@pytest.mark.parametrize("fmt", ["bash", "ansible"])
def test_hostile_mount_names_stay_data(tmp_path, fmt, monkeypatch):
    if fmt == "ansible" and not ansible_available():
        pytest.skip("ansible-core not installed")
    root = _hostile_root(tmp_path / "root")
    sets = ["sas_data_dirs=" + ",".join(HOSTILE_MOUNTS)]
    output = generate(fmt, tmp_path / f"fix.{fmt}", root, sets)
    monkeypatch.chdir(tmp_path)
    if fmt == "bash":
        assert subprocess.run(["shellcheck", str(output)]).returncode == 0
        run_bash(output, root)
    else:
        assert lint_playbook(output).returncode == 0
        run_playbook(output, root)
    assert not list(tmp_path.rglob("PWNED*")) and not Path("/PWNED").exists()
    fstab = (root / "etc/fstab").read_text()
    assert fstab.count("defaults,noatime 0 0") == len(HOSTILE_MOUNTS), fstab
    assert "/sas\\040work" in fstab  # escapes kept as the kernel writes them
    rules = (root / "etc/udev/rules.d/99-sascheck-io.rules").read_text()
    assert "sasvg-lv1" in rules


def test_tuned_format_keeps_thp_on_a_kvm_host(tmp_path):
    EXAMPLES["kvm-host"](tmp_path / "kvm")
    text = generate("tuned", tmp_path / "kvm.conf", tmp_path / "kvm", [], ["--all"]).read_text()
    assert "transparent_hugepages=always" in text and "=never" not in text
    assert "include=virtual-host\n" in text  # tuned's own profile for the role, shipped there
    EXAMPLES["rhel6-defaults"](tmp_path / "rhel6")
    text = generate("tuned", tmp_path / "r6.conf", tmp_path / "rhel6",
                    EXAMPLE_VALUES["rhel6-defaults"], ["--all"]).read_text()
    assert "transparent_hugepages=never" in text
    # No elevator: tuned would give it to every disk, allowed ones included.
    assert not re.search(r"^\s*elevator", text, re.MULTILINE)
    # tuned 0.2 keeps no /usr/lib/tuned to list: the profile every tuned 2 package ships,
    # and never less read-ahead than its readahead=>4096.
    assert "include=throughput-performance\n" in text
    assert "readahead=>4096" in text and "vm.dirty_ratio=40" in text


@pytest.mark.parametrize(("sets", "include", "read_ahead"), [
    (["read_ahead_min_kb=16384"], "enterprise-storage", ">16384"),
    # A site's own profile may not exist here: the first one tuned ships is included.
    (["allowed_tuned_profiles=sas-site,throughput-performance"], "throughput-performance",
     ">4096"),
])
def test_tuned_profile_follows_the_site_values(tmp_path, sets, include, read_ahead):
    """The tuned format and the profile the bash script writes agree: the first allowed
    shipped profile included, read-ahead the larger of the site minimum and its own."""
    root = sas_host(tmp_path / "root", tuned_active="balanced")
    sets = [*BASELINE_SETS, *sets]
    text = generate("tuned", tmp_path / "p.conf", root, sets, ["--all"]).read_text()
    run_bash(generate("bash", tmp_path / "fix.sh", root, sets), root)
    written = (root / "etc/tuned/sas-performance/tuned.conf").read_text()
    for profile in (text, written):
        assert f"include={include}\n" in profile and f"readahead={read_ahead}\n" in profile
    assert verdicts(root, sets)["tuned_profile"] == "pass"


# Every multipath map and path runs bfq, which the site does not allow: each gets a rule.
NOT_ALLOWED_SCHEDULERS = {"mpath_scheduler": "mq-deadline kyber [bfq] none",
                          "path_scheduler": "mq-deadline kyber [bfq] none"}


def test_udev_format_matches_what_the_script_writes(tmp_path):
    root = sas_host(tmp_path / "root", read_ahead_kb=128, tuned_active="balanced",
                    **NOT_ALLOWED_SCHEDULERS)
    rules = generate("udev", tmp_path / "99.rules", root, BASELINE_SETS).read_text()
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS)
    run_bash(script, root)
    written = (root / "etc/udev/rules.d/99-sascheck-io.rules").read_text()

    def body(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith("ACTION")]

    # Schedulers: the two multipath maps (their paths' are passed over); read-ahead: the
    # three LVs.
    assert body(rules) == body(written) and len(body(rules)) == 2 + 3
    # Disks only (a partition has no queue/), as udev matches them.
    assert all('SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ' in line for line in body(rules))
    # The header says how to apply them to the running devices (udevadm's own options).
    assert "#   udevadm control --reload && udevadm trigger --subsystem-match=block " \
           "--action=change" in rules


def test_udev_rules_never_lower_read_ahead(tmp_path):
    root = sas_host(tmp_path / "root", read_ahead_kb=8192, tuned_active="balanced")
    rules = generate("udev", tmp_path / "99.rules", root, BASELINE_SETS).read_text()
    run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS), root)
    written = (root / "etc/udev/rules.d/99-sascheck-io.rules").read_text()
    for text in (rules, written):
        assert 'ATTR{queue/read_ahead_kb}="8192"' in text and '"2048"' not in text


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


def test_bash_fix_outlasts_a_ktune_that_turns_thp_on(tmp_path):
    """RHEL 6 boots with SysV init, and ktune turns THP on after the command line: the
    script leaves the ktune profile alone and adds the THP lines to rc.local (S99local runs
    last), keeping it executable, before its exit line."""
    changes = named(CASES, "thp boot: RHEL 6 enterprise-storage ktune over the command line").changes
    rc_local_as_shipped = {"/etc/rc.d/rc.local": "#!/bin/sh\ntouch /var/lock/subsys/local\n"
                                                 "exit 0\n"}
    root = sas_host(tmp_path / "root",
                    **{**changes, "extra_files": {**changes["extra_files"], **rc_local_as_shipped}})
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS)
    ran = run_bash(script, root)
    # Only advice: ktune's remount_partitions nobarrier is left to the site, and tuned 0.2's
    # tuned-adm, chkconfig and service are only run on the live host.
    advice = ran.stderr.splitlines()
    assert all(line.startswith("sascheck-fix: manual: ") for line in advice), advice
    assert [line for line in advice if "/etc/ktune.d/tunedadm.sh (ktune) remounts" in line]
    rc_local = root / "etc/rc.d/rc.local"
    lines = rc_local.read_text().splitlines()
    assert lines[-1] == "exit 0" and "touch /var/lock/subsys/local" in lines
    assert any("echo never > /sys/kernel/mm/redhat_transparent_hugepage/defrag" in line
               for line in lines)
    assert os.access(rc_local, os.X_OK)
    assert not (root / "etc/systemd").exists()  # no unit on a SysV host
    assert "enable_transparent_hugepages" in (root / "etc/ktune.d/tunedadm.sh").read_text()
    assert verdicts(root, BASELINE_SETS)["thp_disabled_at_boot"] == "pass"
    assert "systemctl" not in ran.stdout  # a SysV host: never systemd's tools
    rerun = run_bash(script, root)  # idempotent: nothing more to add
    assert rc_local.read_text().splitlines() == lines and "no changes" in rerun.stdout


RHEL6_HOST = {"kernel": "2.6.32-754.35.1.el6.x86_64", "rhel6_thp": True, "bls_options": None,
              "grub_cmdline": None, "tuned_active": None, "defrag_tmpfiles": False,
              "sas_local_cfg": "-WORK /saswork\n-UTILLOC /sasutil\n-BUFSIZE 64K\n"}


def _rhel6_tuned02(path: Path, active: str | None) -> Path:
    """A RHEL 6 image with tuned 0.2.22's profiles; ``active`` switched on by tuned-adm, or
    none (then ktune and tuned are not started either)."""
    files, links = tuned02_installed(active or "throughput-performance")
    if active is None:
        files.pop("/etc/tune-profiles/active-profile")
        links = {}
    rc_local = {"/etc/rc.d/rc.local": "#!/bin/sh\ntouch /var/lock/subsys/local\n"}
    return sas_host(path, **RHEL6_HOST, extra_files={**files, **rc_local}, extra_links=links)


def test_tuned_format_refuses_a_tuned_02_host(tmp_path, capsys):
    """RHEL 6's tuned 0.2 reads /etc/tune-profiles and no tuned.conf of tuned 2: a
    sas-performance profile written there would never load."""
    from sascheck.cli import main

    root = _rhel6_tuned02(tmp_path / "root", "throughput-performance")
    assert main(["fix", "--format", "tuned", "--root", str(root), "-o",
                 str(tmp_path / "tuned.conf"), *[f"--set={v}" for v in BASELINE_SETS]]) == 1
    assert "runs tuned 0.2" in capsys.readouterr().err
    assert not (tmp_path / "tuned.conf").exists()


def test_fix_says_what_it_wrote_what_to_run_and_what_it_would_replace(tmp_path, capsys):
    from sascheck.cli import main

    root = sas_host(tmp_path / "root", tuned_active="balanced", extra_files={
        "/etc/tuned/sas-performance/tuned.conf": "[main]\nsummary=the site's own\n"})
    output = tmp_path / "tuned.conf"
    assert main(["fix", "--format", "tuned", "--root", str(root), "-o", str(output),
                 *[f"--set={v}" for v in BASELINE_SETS]]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{output}: tuned fix for ")
    assert err[1].startswith("warning: the host already has a tuned profile named "
                             "sas-performance")
    assert err[2] == (f"next: install -D -m 0644 {output} /etc/tuned/sas-performance/"
                      "tuned.conf && tuned-adm profile sas-performance")
    assert main(["fix", "--format", "udev", "--root", str(root), "-o",
                 str(tmp_path / "99.rules"), *[f"--set={v}" for v in BASELINE_SETS]]) == 0
    err = capsys.readouterr().err
    assert "warning" not in err and "udevadm trigger --subsystem-match=block" in err


def test_bash_fix_uses_sysv_tools_on_rhel6(tmp_path):
    """A RHEL 6 image with tuned 0.2 but no active profile: no systemd unit or command; the
    files tuned-adm would change are changed (a profile without nobarrier: the cache is not
    declared protected), and the script says which chkconfig commands to run on the host."""
    root = _rhel6_tuned02(tmp_path / "root", None)
    ran = run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS), root)
    assert ran.returncode == 3  # done, with the chkconfig commands left to a human
    assert "manual: tuned_profile: on the running host: chkconfig tuned on; chkconfig ktune on" \
        in ran.stderr.replace("\n", " ")
    assert (root / "etc/tune-profiles/active-profile").read_text() == "throughput-performance\n"
    assert os.readlink(root / "etc/ktune.d/tunedadm.sh") == \
        "/etc/tune-profiles/throughput-performance/ktune.sh"
    assert not (root / "etc/systemd").exists() and "systemctl" not in ran.stdout


def test_rhel6_enterprise_storage_gives_way_to_a_profile_that_keeps_barriers(tmp_path):
    """tuned 0.2's enterprise-storage remounts every SAS file system nobarrier at each boot.
    Unless the cache is declared protected, the fix switches to throughput-performance as
    tuned-adm would (the links it makes), keeps the read-ahead enterprise-storage multiplied
    with a udev rule, and every persistence rule then passes; a second run changes nothing."""
    root = _rhel6_tuned02(tmp_path / "root", "enterprise-storage")
    before = verdicts(root, BASELINE_SETS)
    assert before["mount_options_at_boot"] == "fail" and before["tuned_profile"] == "pass"
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS)
    run_bash(script, root)
    profiles = "/etc/tune-profiles/throughput-performance"
    assert {link: os.readlink(root / link.lstrip("/")) for link in (
        "/etc/ktune.d/tunedadm.sh", "/etc/ktune.d/tunedadm.conf", "/etc/sysconfig/ktune",
        "/etc/tuned.conf")} == {
        "/etc/ktune.d/tunedadm.sh": f"{profiles}/ktune.sh",
        "/etc/ktune.d/tunedadm.conf": f"{profiles}/sysctl.ktune",
        "/etc/sysconfig/ktune": f"{profiles}/ktune.sysconfig",
        "/etc/tuned.conf": f"{profiles}/tuned.conf"}
    after = verdicts(root, BASELINE_SETS)
    assert {rule: after[rule] for rule in PERSISTENCE_RULES} == dict.fromkeys(
        PERSISTENCE_RULES, "pass")
    assert "udev" in str(list((root / "etc/udev/rules.d").iterdir()))
    assert "no changes" in run_bash(script, root).stdout
    # A protected cache may keep enterprise-storage and its barriers off.
    kept = _rhel6_tuned02(tmp_path / "kept", "enterprise-storage")
    sets = [*BASELINE_SETS, "storage_cache_protected=true"]
    run_bash(generate("bash", tmp_path / "kept.sh", kept, sets), kept)
    assert (kept / "etc/ktune.d/tunedadm.sh").resolve() == \
        kept / "etc/tune-profiles/enterprise-storage/ktune.sh"


def test_bash_fix_says_how_to_raise_lvm_read_ahead(tmp_path):
    """An LV whose metadata keeps a low read_ahead: offline, the exact lvchange line."""
    changes = named(CASES, "io boot: LVM read_ahead of one LV below the minimum, over udev").changes
    root = sas_host(tmp_path / "root", **changes)
    ran = run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS), root)
    assert "lvchange --readahead 4096 sasvg/sasdata" in ran.stderr.replace("\n", " ")
    assert "sasvg/saswork" not in ran.stderr  # read_ahead auto: nothing to raise


def test_udev_matches_by_serial_where_there_is_no_wwid(tmp_path):
    """A disk without a SCSI wwid but with a serial (virtio-blk: udev's ID_SERIAL comes from
    it) is matched by ENV{ID_SERIAL}, in the udev format and in the script alike; a serial a
    rule cannot carry falls back to the kernel name, with a note."""
    # Bio-based maps (queue_mode bio: no scheduler of their own) leave it to their paths.
    root = sas_host(tmp_path / "root", read_ahead_kb=128, tuned_active="balanced",
                    mpath_scheduler="none", path_scheduler="mq-deadline kyber [bfq] none")
    (root / "sys/block/sdb/serial").write_text("QM00005-sas-01\n")
    (root / "sys/block/sdc/serial").write_text('x", RUN+="/bin/sh\n')
    rules = generate("udev", tmp_path / "99.rules", root, BASELINE_SETS).read_text()
    ran = run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS), root)
    written = (root / "etc/udev/rules.d/99-sascheck-io.rules").read_text()
    # the script says, as the udev format's note does, that a kernel name may change
    assert "can change at the next boot" in rules
    assert "sdc: no device-mapper name or UUID, wwid or serial a rule can carry: matched" \
        in ran.stderr
    for text in (rules, written):
        assert 'ENV{ID_SERIAL}=="QM00005-sas-01", ATTR{queue/scheduler}' in text
        assert 'KERNEL=="sdc", ATTR{queue/scheduler}' in text and "RUN" not in text


def test_hostile_ktune_script_name_never_reaches_the_terminal(tmp_path):
    """A ktune script named with terminal escapes: the advice names its directory instead."""
    changes = named(CASES, "boot mounts: RHEL 6 ktune remounts nobarrier").changes
    root = sas_host(tmp_path / "root", **changes)
    for suffix in (".sh", ".conf"):  # ktune.init runs X.sh beside X.conf
        (root / f"etc/ktune.d/tunedadm{suffix}").rename(
            root / f"etc/ktune.d/\x1b]0;owned\x07x{suffix}")
    ran = run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS), root)
    assert "\x1b" not in ran.stderr + ran.stdout
    assert "manual: a script in /etc/ktune.d (ktune) remounts" in ran.stderr


def test_numa_off_leaves_every_boot_source_and_other_arguments_stay(tmp_path):
    """numa=off is taken out of the BLS entry, /etc/default/grub and /etc/kernel/cmdline;
    numa=noacpi and the rest of each line are kept; the running kernel's is only reported."""
    root = sas_host(tmp_path / "root",
                    bls_options="root=/dev/mapper/rhel-root ro numa=off transparent_hugepage=never",
                    grub_cmdline="crashkernel=auto numa=off transparent_hugepage=never numa=noacpi",
                    proc_cmdline="BOOT_IMAGE=/vmlinuz ro numa=off",
                    extra_files={"/etc/kernel/cmdline": "root=/dev/mapper/rhel-root numa=off\n"})
    sets = [*BASELINE_SETS]
    assert verdicts(root, sets)["numa_enabled"] == "fail"
    script = generate("bash", tmp_path / "fix.sh", root, sets, ["--rule", "numa_enabled"])
    done = run_bash(script, root)
    assert "reboot for NUMA to take effect" in done.stderr
    entry = next((root / "boot/loader/entries").glob("*.conf")).read_text()
    assert "options root=/dev/mapper/rhel-root ro transparent_hugepage=never\n" in entry
    assert 'GRUB_CMDLINE_LINUX="crashkernel=auto transparent_hugepage=never numa=noacpi"' in (
        root / "etc/default/grub").read_text()
    assert (root / "etc/kernel/cmdline").read_text() == "root=/dev/mapper/rhel-root\n"
    (root / "proc/cmdline").write_text("BOOT_IMAGE=/vmlinuz ro\n")  # after the reboot
    assert verdicts(root, sets)["numa_enabled"] == "pass"
    assert run_bash(script, root).stdout.rstrip().endswith("no changes")


@pytest.mark.parametrize(("read_ahead_kb", "low"), [(128, True), (16384, False)])
def test_nfs_read_ahead_is_found_on_its_bdi(tmp_path, read_ahead_kb, low):
    """The fix finds an NFS SAS mount's bdi through mountinfo (the runtime write itself is
    live-only, as for block devices) and says how to keep the value across mounts."""
    from .support.verdict_hosts import nfs_data

    root = sas_host(tmp_path / "root", filesystems=[
        nfs_data(read_ahead_kb), SasFs("saswork", "/saswork"), SasFs("sasutil", "/sasutil")])
    sets = [*BASELINE_SETS, "allowed_fs_types=xfs,ext4,nfs4"]
    script = generate("bash", tmp_path / "fix.sh", root, sets, ["--rule", "read_ahead", "--all"])
    done = run_bash(script, root)
    assert ("NFS sets read-ahead again at every mount" in done.stderr) == low, done.stderr


def _persistence_failing(path: Path) -> Path:
    """A host whose settings hold now but not after a reboot, and noatime missing."""
    return sas_host(path, tuned_active="balanced", read_ahead_kb=128,
                    bls_options="root=/dev/mapper/rhel-root ro", grub_cmdline="",
                    dirty_ratio=20, defrag_tmpfiles=False,
                    filesystems=[SasFs("sasdata", "/sasdata", options="rw,relatime"),
                                 SasFs("saswork", "/saswork"), SasFs("sasutil", "/sasutil")])


@pytest.mark.parametrize("case", ["every persistence rule failing", "RHEL 6 enterprise-storage"])
def test_fix_then_revert_leaves_the_image_as_it_was(tmp_path, case):
    """fix, then --revert with the manifest the fix wrote: every file, link, mode and owner
    is back (only modification times of directories and links differ); a second revert
    changes nothing."""
    if case == "RHEL 6 enterprise-storage":
        root = _rhel6_tuned02(tmp_path / "root", "enterprise-storage")
    else:
        root = _persistence_failing(tmp_path / "root")
    before = verdicts(root, BASELINE_SETS)
    assert sum(before[rule] in BAD for rule in PERSISTENCE_RULES) >= 2, before
    digest = tree_digest(root, times=False)
    manifest = tmp_path / "fix.manifest"
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS)
    env = {"SASCHECK_MANIFEST": str(manifest)}
    run_bash(script, root, env=env)
    assert tree_digest(root, times=False) != digest
    assert verdicts(root, BASELINE_SETS) != before
    lines = [line for line in manifest.read_text().splitlines() if not line.startswith("#")]
    assert {line.split("\t")[0] for line in lines} >= {"file", "new"}
    undone = run_bash(script, root, "--revert", str(manifest), env=env)
    assert "changes reverted" in undone.stdout
    assert tree_digest(root, times=False) == digest
    assert verdicts(root, BASELINE_SETS) == before
    again = run_bash(script, root, "--revert", str(manifest), env=env)
    assert "nothing to revert" in again.stdout
    assert tree_digest(root, times=False) == digest


@needs_ansible
def test_playbook_then_its_revert_tag_leaves_the_image_as_it_was(tmp_path):
    """The playbook records what its modules change (backups, new files, directories,
    links) in the bash script's manifest; --tags revert undoes it, and again changes
    nothing."""
    root = _persistence_failing(tmp_path / "root")
    before = verdicts(root, BASELINE_SETS)
    digest = tree_digest(root, times=False)
    manifest = tmp_path / "ansible.manifest"
    playbook = generate("ansible", tmp_path / "fix.yml", root, BASELINE_SETS)
    checked = run_playbook(playbook, root, "--check", "-e", f"sascheck_manifest={manifest}")
    assert checked["changed"] > 0 and not manifest.exists()  # check mode records nothing
    run_playbook(playbook, root, "-e", f"sascheck_manifest={manifest}")
    assert tree_digest(root, times=False) != digest
    assert verdicts(root, BASELINE_SETS) != before
    kinds = {line.split("\t")[0] for line in manifest.read_text().splitlines()
             if not line.startswith("#")}
    assert {"file", "new", "dir"} <= kinds, kinds
    undone = run_playbook(playbook, root, "--tags", "revert", "-e",
                          f"sascheck_manifest={manifest}")
    assert undone["changed"] == 1
    assert tree_digest(root, times=False) == digest
    assert verdicts(root, BASELINE_SETS) == before
    again = run_playbook(playbook, root, "--tags", "revert", "-e",
                         f"sascheck_manifest={manifest}")
    assert again["changed"] == 0 and tree_digest(root, times=False) == digest


def test_revert_refuses_a_manifest_that_points_outside_the_image(tmp_path):
    """A doctored manifest naming a file outside the image: nothing there is removed."""
    root = sas_host(tmp_path / "root")
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    manifest = tmp_path / "evil.manifest"
    manifest.write_text("new\t" + str(victim).encode().hex() + "\t\n"
                        + "new\t$(touch pwned)\t\n")
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS)
    ran = subprocess.run(["bash", str(script), "--revert", str(manifest)], cwd=tmp_path,
                         env={**os.environ, "SASCHECK_ROOT": str(root)},
                         capture_output=True, text=True, timeout=60)
    assert victim.read_text() == "keep me\n" and not (tmp_path / "pwned").exists()
    assert "refused" in ran.stderr and "malformed" in ran.stderr



def test_persisting_a_sysctl_keeps_the_other_keys_sascheck_persisted(tmp_path):
    """Issue 47: persist_sysctl rewrote 99-zz-sascheck.conf with its one key, so a second
    sysctl rule (fixed in the same run or an earlier one) lost its line. The file an
    earlier run left with vm.swappiness keeps it; vm.dirty_ratio's line is replaced in
    place; a second run changes nothing."""
    root = sas_host(tmp_path / "root", dirty_ratio=20)
    ours = root / "etc/sysctl.d/99-zz-sascheck.conf"
    ours.parent.mkdir(parents=True, exist_ok=True)
    ours.write_text("# Written by sascheck\nvm.swappiness = 10\nvm.dirty_ratio = 20\n")
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS,
                      ["--rule", "vm_dirty_ratio"])
    run_bash(script, root)
    assert ours.read_text() == "# Written by sascheck\nvm.swappiness = 10\nvm.dirty_ratio = 40\n"
    again = run_bash(script, root)
    assert "no changes" in again.stdout
    assert ours.read_text() == "# Written by sascheck\nvm.swappiness = 10\nvm.dirty_ratio = 40\n"


def test_a_rhel6_fix_says_when_rc_local_does_not_run_at_the_boot_run_level(tmp_path):
    """The THP fix writes rc.local on RHEL 6; where /etc/inittab's run level has no S??local
    link, rc.local does not run there: the fix says so, naming the link to make, and with
    the link made the rule passes."""
    from .support.hosts import RHEL6_INITTAB, RHEL6_RC_LOCAL

    root = sas_host(tmp_path / "root", **RHEL6_HOST, without_files=("/etc/rc.d/rc3.d/S99local",),
                    extra_files={"/etc/inittab": RHEL6_INITTAB.format(level=3),
                                 "/etc/rc.d/rc.local": "#!/bin/sh\n" + RHEL6_RC_LOCAL})
    sets = [*BASELINE_SETS]
    assert verdicts(root, sets)["thp_disabled_at_boot"] == "fail"
    script = generate("bash", tmp_path / "fix.sh", root, sets)
    ran = run_bash(script, root)
    assert ("manual: thp_disabled_at_boot: rc.local does not run at run level 3" in ran.stdout
            + ran.stderr) and "ln -s ../rc.local /etc/rc.d/rc3.d/S99local" in ran.stdout + ran.stderr
    (root / "etc/rc.d/rc3.d/S99local").symlink_to("../rc.local")
    assert verdicts(root, sets)["thp_disabled_at_boot"] == "pass"
