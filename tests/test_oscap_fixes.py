"""The fixes `oscap xccdf generate fix` assembles from an evaluation (issue 45): oscap has no
offline --remediate, so for an image this script or playbook is what people run. On a copy
of each example root: a dry run (bash --dry-run, ansible-playbook --check) changes nothing
and every rule's block runs; the real run leaves the tree sascheck's own fix leaves; a
second run changes nothing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sascheck.content.tailoring import tailored_profile_id
from sascheck.rules import load_catalogue

from .support.hosts import BASELINE_SETS, sas_host, tree_digest
from .support.oscap import PROJECT, oscap_available, oscap_eval, tailor
from .support.remedy import (
    ANSIBLE_BIN,
    ansible_available,
    generate,
    profile_sysctl,
    sysctl_d_keys,
)

ROOTS = PROJECT / "examples/roots"
pytestmark = pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
# Backups differ by when they were made: bash's NAME.sascheck-<time>.<random>.bak, Ansible's NAME.<pid>.<time>~
BACKUP = re.compile(r"\.sascheck-[0-9]+\.[A-Za-z0-9]+\.bak$|~$")


def _configuration(root: Path) -> dict[str, bytes]:
    """Every file and link of a tree but backups, by path inside it: what a fix leaves (a
    written file's header names the profile it was written from: 'default', or '(XCCDF)')."""
    found: dict[str, bytes] = {}
    for directory, _, files in os.walk(root):
        for name in files:
            path = Path(directory) / name
            if not BACKUP.search(name):
                found[str(path.relative_to(root))] = (
                    b"-> " + os.readlink(path).encode() if path.is_symlink() else
                    re.sub(rb"written by sascheck [^\n]*", b"", path.read_bytes()))
    return found


# Hosts with rules to mend: the shipped RHEL 6 example as installed, and a RHEL 8 SAS host
# left untuned (THP on at run time and at boot, balanced, read-ahead 128 KiB, dirty ratio 20)
UNTUNED_RHEL8 = {"tuned_active": "balanced", "read_ahead_kb": 128, "dirty_ratio": 20,
                 "thp_enabled": "[always] madvise never", "grub_cmdline": "crashkernel=auto",
                 "bls_options": "root=/dev/mapper/rhel-root ro"}
HOSTS = {"rhel6-defaults": [], "rhel8-untuned": list(BASELINE_SETS)}
MANUAL_RULES = {rule.id for rule in load_catalogue().rules.values() if rule.manual_fix}


def _copy(name: str, destination: Path) -> Path:
    if name == "rhel8-untuned":
        return sas_host(destination, **UNTUNED_RHEL8)
    shutil.copytree(ROOTS / name, destination, symlinks=True)
    return destination


def _assembled(root: Path, work: Path, fix_type: str, sets: list[str]) -> tuple[Path, int]:
    """oscap's fix of the rules that failed on ``root`` (the README's tailoring and
    evaluation), and how many rules' blocks it holds."""
    tailoring = tailor(root, sets, work / "tailoring.xml")
    oscap_eval(root, tailoring, work, as_users_run_it=True)
    output = work / ("fix.sh" if fix_type == "bash" else "fix.yml")
    result_id = ("xccdf_org.open-scap_testresult_"
                 + tailored_profile_id("default"))
    completed = subprocess.run(["oscap", "xccdf", "generate", "fix", "--fix-type", fix_type,
                                "--result-id", result_id, "--tailoring-file", str(tailoring),
                                "--output", str(output), str(work / "results-arf.xml")],
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    text = output.read_text()
    # A rule whose remedy is a person's work has fixtext and no <fix> (issue 66, as SSG):
    # oscap says its fix is missing, and the run's summary leaves it out.
    missing = re.findall(r"FIX FOR THIS RULE '[^']*_rule_([a-z0-9_]+)' IS MISSING", text)
    assert set(missing) <= MANUAL_RULES, missing
    blocks = len(re.findall(r"^# BEGIN fix \(", text, re.M)) - len(missing) \
        if fix_type == "bash" else \
        len(re.findall(r'^    - name: "Rule [a-z0-9_]+: plan the changes', text, re.M))
    assert blocks > 0
    return output, blocks


def _bash(script: Path, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SASCHECK_")}
    return subprocess.run(["bash", str(script), *args], cwd=script.parent, capture_output=True,
                          text=True, timeout=600, env={**environment, "SASCHECK_ROOT": str(root)})


@pytest.mark.parametrize("example", sorted(HOSTS))
def test_the_bash_oscap_assembles_dry_runs_runs_every_block_and_mends(tmp_path, example):
    """Each rule's <fix> was the whole script: oscap's concatenation lost --dry-run after the
    first block (blocks 2 and 3 wrote /etc/fstab, grub.conf, rc.local) and ended at the first
    rule needing a person. As blocks safe to concatenate, it runs as one script."""
    work = tmp_path / "work"
    work.mkdir()
    root = _copy(example, tmp_path / "root")
    script, blocks = _assembled(root, work, "bash", HOSTS[example])
    before = tree_digest(root)
    dry = _bash(script, root, "--dry-run")
    assert dry.returncode in (0, 3), dry.stderr  # 3: work left to a person, said
    assert tree_digest(root) == before, "a dry run changed the image"
    said = dry.stdout.split(f"rules ({blocks}):\n", 1)
    assert len(said) == 2, dry.stdout[-3000:]  # every block ran, and the summary names each
    assert len(said[1].splitlines()[:blocks]) == blocks
    assert all(line.startswith("  ") for line in said[1].splitlines()[:blocks])
    real = _bash(script, root)
    assert real.returncode in (0, 3), real.stderr
    ours = _copy(example, tmp_path / "ours")
    own = generate("bash", tmp_path / "own.sh", ours, HOSTS[example])
    assert _bash(own, ours).returncode in (0, 3)
    assert _configuration(root) == _configuration(ours)
    again = _bash(script, root)
    assert again.returncode in (0, 3) and "\nno changes\n" in again.stdout, again.stdout[-2000:]


@pytest.mark.skipif(not ansible_available(), reason="ansible-playbook is not installed")
@pytest.mark.parametrize("example", sorted(HOSTS))
def test_the_playbook_oscap_assembles_checks_mends_and_is_idempotent(tmp_path, example):
    """io_tuning_at_boot notified a handler the play oscap assembles does not have
    ("The requested handler 'Reload udev rules' was not found"): every rule after it never
    ran. Run with ansible-playbook on a copy of the image, -c local."""
    work = tmp_path / "work"
    work.mkdir()
    root = _copy(example, tmp_path / "root")
    playbook, _ = _assembled(root, work, "ansible", HOSTS[example])

    def play(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(ANSIBLE_BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
             "-e", f"ansible_python_interpreter={ANSIBLE_BIN / 'python'}",
             "-e", f"sascheck_root={root}", str(playbook), *args],
            capture_output=True, text=True, timeout=900,
            env={**os.environ, "ANSIBLE_NOCOLOR": "1",
                 "PATH": f"{ANSIBLE_BIN}:{os.environ['PATH']}"})
    before = tree_digest(root)
    check = play("--check")
    assert check.returncode == 0, check.stdout[-3000:]
    assert tree_digest(root) == before, "--check changed the image"
    real = play()
    assert real.returncode == 0, real.stdout[-3000:]
    ours = _copy(example, tmp_path / "ours")
    own = generate("bash", tmp_path / "own.sh", ours, HOSTS[example])
    assert _bash(own, ours).returncode in (0, 3)
    assert _configuration(root) == _configuration(ours)
    again = play()
    assert again.returncode == 0 and re.search(r"changed=0\s", again.stdout), again.stdout[-2000:]


HOSTILE_VALUES = ["/sas'$(touch PWNED)'work", "/sas{{ 7 * 7 }}", '/sas"work']


def test_oscap_copies_a_set_value_verbatim_into_the_fix_it_writes(tmp_path):
    """Why sascheck tailor refuses some values: oscap 1.3.7 puts a tailoring file's
    set-value into the generated script as it stands, so in a hand-edited file a ' closes
    the fix's quote and what follows is run (here by --dry-run already)."""
    root = _copy("rhel6-defaults", tmp_path / "root")
    tailoring = tailor(root, HOSTS["rhel6-defaults"], tmp_path / "t.xml")
    text = tailoring.read_text()
    hostile = "a'$(touch " + str(tmp_path / "PWNED") + ")'b"
    tailoring.write_text(re.sub(r"(value_allowed_tuned_profiles\">)[^<]*",
                                lambda m: m.group(1) + hostile, text))
    oscap_eval(root, tailoring, tmp_path, as_users_run_it=True)
    script = tmp_path / "fix.sh"
    subprocess.run(["oscap", "xccdf", "generate", "fix", "--fix-type", "bash", "--result-id",
                    "xccdf_org.open-scap_testresult_" + tailored_profile_id("default"),
                    "--tailoring-file", str(tailoring), "--output", str(script),
                    str(tmp_path / "results-arf.xml")], check=True, capture_output=True,
                   timeout=120)
    assert f"<<< '{hostile}'" in script.read_text()  # verbatim: the ' ends the quote
    _bash(script, root, "--dry-run")
    assert (tmp_path / "PWNED").exists()  # the hazard is oscap's; sascheck never writes it


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_sascheck_tailor_never_writes_a_value_oscap_would_make_code(tmp_path, value, capsys):
    """A SAS directory named by a host's sasv9.cfg (host data) or by --set, holding a ', "
    or {{ }}, would be code in oscap's generated bash or playbook: sascheck tailor says
    which value and writes nothing."""
    from sascheck.cli import main

    for where, root in (("--set", sas_host(tmp_path / "set")),
                        ("sasv9.cfg", sas_host(tmp_path / "cfg", sas_local_cfg=(
                            f"-WORK \"{value}\"\n" if '"' not in value else
                            f"-WORK '{value}'\n")))):
        output = tmp_path / f"{where}.xml"
        argv = ["tailor", "--root", str(root), "-o", str(output), *(
            ["--set", f"sas_data_dirs={value}"] if where == "--set" else
            ["--set", "sas_data_dirs=/sasdata"])]
        status = main(argv)
        err = capsys.readouterr().err
        if where == "sasv9.cfg" and status == 0:  # SAS's own reader did not take the name
            assert value not in output.read_text()
            continue
        assert status == 1, (where, err)
        assert "oscap xccdf generate fix would copy verbatim" in err, err
        assert not output.exists()


def test_the_fix_oscap_assembles_starts_tuned_before_the_sysctl_fixes(tmp_path):
    """oscap runs the fixes in the data stream's order: the tuned group first, so on a host
    whose tuned is off at boot the sysctl fixes find it started and keep their values in its
    profile alone, as sascheck's own script does (issue 51: never both)."""
    work = tmp_path / "work"
    work.mkdir()
    root = sas_host(tmp_path / "root", dirty_ratio=20, swappiness=60, tuned_enabled=False,
                    tuned_active="throughput-performance", tuned_custom={})
    script, _ = _assembled(root, work, "bash", BASELINE_SETS)
    order = re.findall(r"^# BEGIN fix \(\d+ / \d+\) for '[^']*?_rule_([a-z0-9_]+)'",
                       script.read_text(), re.M)
    assert order[0] == "tuned_profile", order
    assert {"dirty_ratio_at_boot", "swappiness_at_boot"} <= set(order)
    assert _bash(script, root).returncode in (0, 3)
    assert sysctl_d_keys(root) == {}
    assert {key: profile_sysctl(root).get(key) for key in ("vm.dirty_ratio", "vm.swappiness")} \
        == {"vm.dirty_ratio": "40", "vm.swappiness": "<10"}  # at most 10: tuned's "<"
