"""A fix never leaves a host with less tuning than it had: the tuned profile it writes is one
tuned will load on that host (tuned's own loader judges it), allowed schedulers and a site's
vm.dirty_bytes are left alone, a live revert runs the commands that undo what the fix ran,
and the script runs under RHEL 5's bash 3.2."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from sascheck.cli import main

from .support import tuned_loader
from .support.example_roots import EXAMPLES
from .support.fix_hosts import verdicts
from .support.hosts import BASELINE_SETS, sas_host
from .support.remedy import generate, run_bash

FIXTURES = Path(__file__).resolve().parent / "data"


def _tuned_2_11(*names: str) -> dict[str, str]:
    """Profiles as tuned 2.11.0 ships them (tests/data/tuned-2.11/README.md)."""
    return {name: (FIXTURES / "tuned-2.11" / name / "tuned.conf").read_text() for name in names}


# A RHEL 7 guest image with only the tuned package: balanced (active, as anaconda leaves a
# guest without virtual-guest) and throughput-performance; no enterprise-storage.
RHEL7_GUEST = {"kernel": "3.10.0-1160.el7.x86_64", "cpu_flags": "fpu vme de pse hypervisor",
               "tuned_active": "balanced", "tuned_custom": {},
               "tuned_shipped": _tuned_2_11("balanced", "throughput-performance"),
               "bls_options": None, "grub_cmdline": "crashkernel=auto rhgb quiet",
               "defrag_tmpfiles": False}


def _written_profile(root: Path) -> Path:
    found = [*root.glob("etc/tuned/sas-performance/tuned.conf"),
             *root.glob("etc/tuned/profiles/sas-performance/tuned.conf")]
    assert len(found) == 1, found
    return found[0]


def test_rhel7_guest_image_gets_a_profile_tuned_loads_and_passes(tmp_path):
    """The image ships no enterprise-storage: tuned's loader refuses a profile including it
    (as tuned did with the profile sascheck used to write); the fix includes
    throughput-performance instead, and the persistence rules pass after it."""
    tuned_loader.require()
    root = sas_host(tmp_path / "root", **RHEL7_GUEST)
    before = verdicts(root, BASELINE_SETS)
    assert before["tuned_profile"] == "fail" and before["thp_disabled_at_boot"] == "fail"
    legacy = root / "etc/tuned/legacy/tuned.conf"
    legacy.parent.mkdir(parents=True)
    legacy.write_text("[main]\ninclude=enterprise-storage\n")
    refused = tuned_loader.load(root, "legacy")
    assert "Cannot find profile 'enterprise-storage'" in refused["error"]
    legacy.unlink()
    legacy.parent.rmdir()

    run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS), root)
    profile = _written_profile(root).read_text()
    assert "include=throughput-performance\n" in profile
    loaded = tuned_loader.load(root, "sas-performance")
    assert loaded["units"]["vm"]["transparent_hugepages"] == "never"
    assert loaded["units"]["disk"]["readahead"] == ">4096"
    after = verdicts(root, BASELINE_SETS)
    for rule in ("tuned_profile", "io_tuning_at_boot", "thp_disabled_at_boot"):
        assert after[rule] == "pass", (rule, after[rule])


@pytest.mark.parametrize(("flags", "example", "include", "kept"), [
    ("fpu vme hypervisor", None, "virtual-guest", ("sysctl", "vm.swappiness", "30")),
    (None, "kvm-host", "virtual-host", ("sysctl", "vm.dirty_background_ratio", "5")),
])
def test_guests_and_kvm_hosts_keep_their_own_profile(tmp_path, flags, example, include, kept):
    """A guest includes virtual-guest and a KVM host virtual-host where shipped: what those
    profiles set survives in the profile tuned loads."""
    tuned_loader.require()
    root = tmp_path / "root"
    if example:
        EXAMPLES[example](root)
        sets: list[str] = ["sas_data_dirs=/var/lib/libvirt/images"]
    else:
        sas_host(root, cpu_flags=flags, tuned_active="balanced")
        sets = BASELINE_SETS
    run_bash(generate("bash", tmp_path / "fix.sh", root, sets, ["--rule", "tuned_profile",
                                                                  "--all"]), root)
    assert f"include={include}\n" in _written_profile(root).read_text()
    tuned_text = generate("tuned", tmp_path / "p.conf", root, sets, ["--all"]).read_text()
    assert f"include={include}\n" in tuned_text
    units = tuned_loader.load(root, "sas-performance")["units"]
    unit, key, value = kept
    assert units[unit][key].strip() == value


def test_no_shipped_candidate_changes_nothing_of_tuned(tmp_path, capsys):
    root = sas_host(tmp_path / "root", tuned_active="balanced", tuned_custom={},
                    tuned_shipped=_tuned_2_11("balanced"))
    done = run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS,
                             ["--rule", "tuned_profile"]), root)
    assert "none of the tuned profiles" in done.stderr and "manual:" in done.stderr
    assert not (root / "etc/tuned/sas-performance").exists()
    assert (root / "etc/tuned/active_profile").read_text() == "balanced\n"
    assert main(["scan", "--root", str(root), *[f"--set={s}" for s in BASELINE_SETS],
                 "--quiet", "--json", str(tmp_path / "r.json")]) == 2
    capsys.readouterr()
    assert main(["fix", "--from", str(tmp_path / "r.json"), "--format", "tuned", "-o",
                 str(tmp_path / "p.conf")]) != 0
    assert "none of the tuned profiles" in capsys.readouterr().err


def test_tuned_2_24_layout_gets_its_profile_where_tuned_looks(tmp_path):
    """tuned 2.24 loads /usr/lib/tuned/profiles and /etc/tuned/profiles only."""
    tuned_loader.require()
    root = sas_host(tmp_path / "root", tuned_active="balanced", tuned_custom={},
                    tuned_new_layout=True, tuned_shipped=_tuned_2_11("balanced",
                                                                     "throughput-performance"))
    assert verdicts(root, BASELINE_SETS)["tuned_profile"] == "fail"
    run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS), root)
    assert (root / "etc/tuned/profiles/sas-performance/tuned.conf").is_file()
    assert not (root / "etc/tuned/sas-performance").exists()
    assert "error" not in tuned_loader.load(root, "sas-performance")
    assert verdicts(root, BASELINE_SETS)["tuned_profile"] == "pass"


def test_an_allowed_scheduler_is_never_rewritten(tmp_path):
    """The KVM host's nvme0n1 runs [none] (allowed): no format writes a scheduler for it, and
    the tuned profile sets no elevator (tuned would give it to every disk)."""
    root = tmp_path / "root"
    EXAMPLES["kvm-host"](root)
    sets = ["sas_data_dirs=/var/lib/libvirt/images"]
    scheduler = (root / "sys/block/nvme0n1/queue/scheduler").read_text()
    assert scheduler.startswith("[none]")
    tuned_text = generate("tuned", tmp_path / "p.conf", root, sets, ["--all"]).read_text()
    assert not re.search(r"^\s*elevator", tuned_text, re.MULTILINE)
    run_bash(generate("bash", tmp_path / "fix.sh", root, sets, ["--all"]), root)
    rules = root / "etc/udev/rules.d/99-sascheck-io.rules"
    written = rules.read_text() if rules.exists() else ""
    assert "queue/scheduler" not in written, written
    assert (root / "sys/block/nvme0n1/queue/scheduler").read_text() == scheduler
    assert not re.search(r"^\s*elevator", _written_profile(root).read_text(), re.MULTILINE)


def test_a_scheduler_allowed_now_but_not_at_boot_is_kept_as_it_is(tmp_path):
    """RHEL 6 gives cfq at boot: a device running deadline keeps deadline through a rule
    (never another scheduler), in the bash fix and the udev format alike."""
    root = sas_host(tmp_path / "root", kernel="2.6.32-754.35.1.el6.x86_64",
                    tuned_active="balanced", mpath_scheduler="noop [deadline] cfq",
                    path_scheduler="noop [deadline] cfq")
    rules = generate("udev", tmp_path / "99.rules", root, BASELINE_SETS).read_text()
    run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS,
                      ["--rule", "io_tuning_at_boot"]), root)
    written = (root / "etc/udev/rules.d/99-sascheck-io.rules").read_text()
    for text in (rules, written):
        values = re.findall(r'ATTR\{queue/scheduler\}="([^"]+)"', text)
        assert values and set(values) == {"deadline"}, text
    assert verdicts(root, BASELINE_SETS)["io_tuning_at_boot"] == "pass"


def test_a_site_dirty_bytes_is_left_alone(tmp_path):
    root = sas_host(tmp_path / "root", dirty_ratio=0, tuned_active="balanced",
                    extra_files={"/proc/sys/vm/dirty_bytes": "4294967296\n",
                                 "/etc/sysctl.d/50-sas.conf": "vm.dirty_bytes = 4294967296\n"})
    done = run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS, ["--all"]), root)
    assert "vm.dirty_bytes" in done.stderr and "manual:" in done.stderr
    written = "".join(path.read_text() for path in (root / "etc/sysctl.d").glob("*.conf"))
    assert "dirty_ratio" not in written
    assert "vm.dirty_ratio" not in _written_profile(root).read_text()
    assert (root / "etc/sysctl.d/50-sas.conf").read_text() == "vm.dirty_bytes = 4294967296\n"


def test_a_site_dirty_background_bytes_is_left_alone(tmp_path):
    """The kernel keeps one of each ratio and its byte twin (writing one zeroes the other,
    mm/page-writeback.c): only vm.dirty_ratio's twin was minded, so `--all` zeroed a site's
    vm.dirty_background_bytes by writing the background ratio."""
    twin = "vm.dirty_background_bytes = 1073741824\n"
    root = sas_host(tmp_path / "root", tuned_active="balanced",
                    extra_files={"/proc/sys/vm/dirty_background_bytes": "1073741824\n",
                                 "/proc/sys/vm/dirty_background_ratio": "0\n",
                                 "/etc/sysctl.d/50-sas.conf": twin})
    done = run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS, ["--all"]), root)
    assert "manual: vm_dirty_background_ratio: the site sets vm.dirty_background_bytes" \
        in done.stderr
    written = "".join(path.read_text() for path in (root / "etc/sysctl.d").glob("*.conf"))
    assert "dirty_background_ratio" not in written
    assert "vm.dirty_background_ratio" not in _written_profile(root).read_text()
    assert (root / "etc/sysctl.d/50-sas.conf").read_text() == twin
    assert (root / "proc/sys/vm/dirty_background_bytes").read_text() == "1073741824\n"


def _stubs(tmp_path: Path, outputs: dict[str, str]) -> tuple[Path, Path]:
    """Commands that log their arguments (one call a line) and print OUTPUTS[name]."""
    bin_dir, log = tmp_path / "stubs", tmp_path / "calls.log"
    bin_dir.mkdir()
    for name in ("tuned-adm", "grubby", "lvchange", "systemctl", "chkconfig", "service"):
        stub = bin_dir / name
        stub.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\n'
                        f"cat <<'OUT'\n{outputs.get(name, '')}\nOUT\n")
        stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    return bin_dir, log


def test_live_revert_runs_the_recorded_undo_commands_last_first(tmp_path):
    """The playbook records each command with the one that undoes it (the script's
    SASCHECK_RECORD_KIND=undo); --revert runs them on the live host, last first, and runs
    nothing a manifest names that is not one of those shapes."""
    script = generate("bash", tmp_path / "fix.sh", sas_host(tmp_path / "root"), BASELINE_SETS)
    bin_dir, log = _stubs(tmp_path, {})
    manifest = tmp_path / "live.manifest"
    env = {"SASCHECK_MANIFEST": str(manifest), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    undo = ["systemctl disable --now tuned", "tuned-adm profile virtual-guest",
            "grubby --update-kernel=ALL --args=transparent_hugepage=always",
            "lvchange --readahead 256 sasvg/sasdata", "rm -rf /tmp/x", "tuned-adm off;reboot"]
    for datum in undo:
        run_bash(script, None, env={**env, "SASCHECK_RECORD_KIND": "undo",
                                    "SASCHECK_RECORD_DATUM": datum})
    reverted = run_bash(script, None, "--revert", str(manifest), env=env)
    calls = log.read_text().splitlines()
    assert calls == list(reversed(undo[:4])), calls
    assert reverted.stderr.count("does not run") == 2
    assert "4 changes reverted" in reverted.stdout


def test_live_plan_records_how_to_undo_the_kernel_argument(tmp_path):
    """Plan mode on this host (reads only): grubby's change carries the command that undoes
    it, read from the default entry before anything changes."""
    root = sas_host(tmp_path / "root")
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS,
                      ["--rule", "thp_disabled_at_boot", "--all"])
    bin_dir, log = _stubs(tmp_path, {"grubby": 'args="ro quiet transparent_hugepage=always"'})
    # written for an image, planned on this host on purpose: --any-host (plan mode reads only)
    planned = run_bash(script, None, env={"SASCHECK_PLAN": "1", "SASCHECK_ROLE": "bare_metal",
                                          "SASCHECK_ANY_HOST": "1",
                                          "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    actions = json.loads(planned.stdout)["actions"]
    grubby = [a for a in actions if a["kind"] == "command" and a["argv"][0] == "grubby"]
    assert grubby and grubby[0]["undo"] == ["grubby", "--update-kernel=ALL",
                                            "--args=transparent_hugepage=always"], grubby
    assert all(not line.startswith("grubby --update") for line in log.read_text().splitlines())


# Constructs bash 3.2 (RHEL 5) lacks, and bash < 4.4's nounset trap (an empty array).
BASH4 = {"associative array": r"\bdeclare\s+-[a-zA-Z]*A", "mapfile": r"\b(mapfile|readarray)\b",
         "case modification": r"\$\{[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?(,,|\^\^|,|\^)[}]",
         "case fallthrough": r";;?&", "pipe stderr": r"\|&", "coproc": r"\bcoproc\b",
         "append both": r"&>>", "negative index": r"\[-1\]", "nameref": r"\b(declare|local)\s+-n\b",
         "fd variable": r"\{[A-Za-z_]+\}[<>]", "wait -n": r"\bwait\s+-n\b",
         "printf time": r"%\([^)]*\)T", "BASHPID": r"\bBASHPID\b", "@ transform": r"\$\{[^}]*@[QEPAa]\}"}


def _bash4_constructs(text: str) -> list[str]:
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return [name for name, pattern in BASH4.items() if re.search(pattern, code)]


def test_no_bash4_construct_in_any_generated_script(tmp_path):
    """Checked mechanically on the script of a bare-metal host, a RHEL 6 host and a KVM host
    (every block) and the bash library itself; shellcheck keeps the rest honest."""
    texts = [generate("bash", tmp_path / "a.sh", sas_host(tmp_path / "a"), BASELINE_SETS,
                      ["--all"]).read_text(),
             generate("bash", tmp_path / "b.sh", sas_host(tmp_path / "b",
                      kernel="2.6.32-754.35.1.el6.x86_64"), BASELINE_SETS, ["--all"]).read_text()]
    for text in texts:
        assert _bash4_constructs(text) == []
    # The check itself can fail: each construct is recognised.
    samples = ["declare -A x=()", "mapfile -t a", "echo ${x,,}", "a) ;& ", "cmd |& cat",
               "coproc x", "echo &>> f", "${a[-1]}", "local -n r=x", "exec {fd}>f", "wait -n",
               "printf '%(%F)T'", "echo $BASHPID", "${x@Q}"]
    assert [len(_bash4_constructs(sample)) for sample in samples] == [1] * len(samples)


OLD_BASHES = [path for path in os.environ.get("SASCHECK_TEST_BASHES", "").split(":") if path]


@pytest.mark.skipif(not OLD_BASHES, reason="SASCHECK_TEST_BASHES names no old bash binaries "
                    "(README: how RHEL 5's bash 3.2 was verified)")
@pytest.mark.parametrize("bash", OLD_BASHES or ["none"])
def test_fix_and_revert_under_an_old_bash(tmp_path, bash):
    """Fix, re-run and revert an image under bash 3.2 (RHEL 5) or 4.2 (RHEL 7), built from
    GNU's sources: the same outcome as today's bash."""
    root = sas_host(tmp_path / "root", tuned_active="balanced", read_ahead_kb=128)
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS)
    manifest = tmp_path / "old.manifest"
    env = {**os.environ, "SASCHECK_ROOT": str(root), "SASCHECK_MANIFEST": str(manifest)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([bash, str(script), *args], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    assert "changes made" in run().stdout
    assert run().stdout.rstrip().endswith("no changes")
    assert verdicts(root, BASELINE_SETS)["tuned_profile"] == "pass"
    assert "changes reverted" in run("--revert", str(manifest)).stdout


def test_the_paths_of_a_multipath_map_keep_their_scheduler(tmp_path):
    """Only the request-based map's scheduler works (blk_insert_cloned_request): udev rules,
    written by the udev format and by the bash fix alike, set the maps' and leave the paths'
    bfq alone."""
    bfq = "mq-deadline kyber [bfq] none"
    root = sas_host(tmp_path / "root", tuned_active="balanced", mpath_scheduler=bfq,
                    path_scheduler=bfq)
    assert verdicts(root, BASELINE_SETS)["io_scheduler"] == "fail"
    rules = generate("udev", tmp_path / "99.rules", root, BASELINE_SETS).read_text()
    run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS,
                      ["--rule", "io_tuning_at_boot"]), root)
    written = (root / "etc/udev/rules.d/99-sascheck-io.rules").read_text()
    for text in (rules, written):
        scheduled = [line for line in text.splitlines()
                     if "ATTR{queue/scheduler}" in line and not line.startswith("#")]
        names = re.findall(r'ENV\{DM_NAME\}=="([^"]+)"', "\n".join(scheduled))
        assert len(scheduled) == 2 and sorted(names) == ["mpatha", "mpathb"], text
