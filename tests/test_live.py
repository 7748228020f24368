"""Live scan of this machine's own kernel state, on loop devices the test makes itself.

Needs root, losetup and mkfs.{xfs,ext4,ext3}. It changes only the loop devices and
mounts it created (scheduler, read_ahead_kb) and removes them whatever happens; it
never touches host-wide settings. In CI (CI=true) a missing prerequisite fails
instead of skipping, so the live test cannot silently stop running.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from sascheck.cli import main

from .support.lab import LAB_HOST_ARGS, LAB_HOST_SETS, LabFs, make_fs, require_lab  # noqa: F401  (require_lab is autouse)

pytestmark = pytest.mark.live

def _set_queue(fs: LabFs, scheduler: str, read_ahead_kb: int) -> None:
    available = (fs.queue / "scheduler").read_text()
    if scheduler not in available.replace("[", " ").replace("]", " ").split():
        pytest.skip(f"{fs.device} offers no {scheduler} scheduler: {available.strip()}")
    (fs.queue / "scheduler").write_text(scheduler)
    (fs.queue / "read_ahead_kb").write_text(str(read_ahead_kb))


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[dict[str, LabFs]]:
    with ExitStack() as stack:
        filesystems = {
            # DATA: xfs, noatime, deadline, big read-ahead -> compliant
            "data": make_fs(stack, tmp_path, "sasdata", "xfs", "noatime", 320),
            # WORK: ext4, relatime, barriers off, bfq, small read-ahead -> fails several rules
            "work": make_fs(stack, tmp_path, "sas work", "ext4", "relatime,barrier=0", 64),
            # UTILLOC: ext3 (unfit), noatime, none, big read-ahead
            "utilloc": make_fs(stack, tmp_path, "sasutil", "ext3", "noatime", 64),
        }
        _set_queue(filesystems["data"], "mq-deadline", 4096)
        _set_queue(filesystems["work"], "bfq", 128)
        _set_queue(filesystems["utilloc"], "none", 8192)
        (filesystems["data"].mountpoint / "data").mkdir()
        yield filesystems


def _evidence_for(rule: dict, fs: LabFs) -> list[dict]:
    prefix = str(fs.mountpoint)
    return [e for e in rule["evidence"] if e["subject"].startswith(prefix)]


def test_live_scan_judges_each_lab_device(lab, tmp_path, capsys):
    config = tmp_path / "sasv9.cfg"
    config.write_text(f'/* lab */\n-WORK "{lab["work"].mountpoint}"\n'
                      f"-UTILLOC {lab['utilloc'].mountpoint}\n")
    report = tmp_path / "live.json"
    status = main(["scan", "--role", "bare_metal", "--quiet", "--json", str(report),
                   "--set", f"sas_data_dirs={lab['data'].mountpoint}/data",
                   "--set", f"sas_config_files={config}", *LAB_HOST_ARGS])
    import json
    result = json.loads(report.read_text())
    rules = {rule["id"]: rule for rule in result["rules"]}
    assert status == 2
    assert {(d["role"], d["source"]) for d in result["sas_dirs"]} == {
        ("DATA", "--set"), ("WORK", f"{config}:2"), ("UTILLOC", f"{config}:3")}

    expected = {
        # rule: {lab fs: verdict}
        "io_scheduler": {"data": "pass", "work": "fail", "utilloc": "pass"},
        "read_ahead": {"data": "pass", "work": "fail", "utilloc": "pass"},
        "barrier_requires_protected_cache": {"data": "pass", "work": "fail", "utilloc": "pass"},
        "sas_fs_noatime": {"data": "pass", "work": "fail", "utilloc": "pass"},
        "sas_fs_type": {"data": "pass", "work": "pass", "utilloc": "fail"},
        "sas_dirs_separate": {"data": "pass", "work": "pass", "utilloc": "pass"},
    }
    for rule_id, per_fs in expected.items():
        rule = rules[rule_id]
        for key, verdict in per_fs.items():
            items = _evidence_for(rule, lab[key])
            assert items, f"{rule_id}: no evidence for {lab[key].mountpoint}"
            assert {item["result"] for item in items} == {verdict}, (rule_id, key, items)
        assert rule["result"] == ("pass" if set(per_fs.values()) == {"pass"} else "fail")

    work = _evidence_for(rules["io_scheduler"], lab["work"])[0]
    assert work["actual"] == "bfq"
    assert work["source"].endswith("/queue/scheduler")
    barrier = _evidence_for(rules["barrier_requires_protected_cache"], lab["work"])[0]
    assert barrier["actual"] in ("nobarrier", "barrier=0")

    # The site declares a protected cache: barriers off is then accepted.
    status = main(["scan", "--role", "bare_metal", "--quiet", "--json", str(report),
                   "--set", f"sas_data_dirs={lab['data'].mountpoint}/data",
                   "--set", f"sas_config_files={config}", "--set", "storage_cache_protected=yes",
                   *LAB_HOST_ARGS])
    rules = {rule["id"]: rule for rule in json.loads(report.read_text())["rules"]}
    assert rules["barrier_requires_protected_cache"]["result"] == "pass"


def test_live_oscap_agrees_with_sascheck(lab, tmp_path):
    import json

    from .support.oscap import any_os_datastream, oscap_available, oscap_eval, tailor

    if not oscap_available():
        pytest.fail("oscap is not installed (scripts/setup --test installs it)")
    config = tmp_path / "sasv9.cfg"
    config.write_text(f"-WORK '{lab['work'].mountpoint}'\n-UTILLOC {lab['utilloc'].mountpoint}\n")
    sets = [f"sas_data_dirs={lab['data'].mountpoint}/data", f"sas_config_files={config}",
            *LAB_HOST_SETS]
    tailoring = tailor(Path("/"), sets, tmp_path / "tailoring.xml")
    report = tmp_path / "live.json"
    main(["scan", "--tailoring", str(tailoring), "--quiet", "--json", str(report)])
    ours = {rule["id"]: rule["result"] for rule in json.loads(report.read_text())["rules"]}
    theirs = oscap_eval(Path("/"), tailoring, tmp_path, datastream=any_os_datastream(tmp_path))
    # Auto-detected role: the device rules may not apply (in a container, say), the
    # file-system rules always do, and both engines must see the lab the same way.
    assert ours["sas_fs_type"] == "fail" and ours["sas_fs_noatime"] == "fail"
    differences = {rule: (ours[rule], theirs.get(rule)) for rule in ours
                   if ours[rule] != theirs.get(rule)}
    # The README's one difference a machine's own devices can bring: nothing striped under the
    # lab's file systems while another device (zram, an md set) publishes a stripe.
    if differences.get("sas_bufsize_matches_stripe") == ("notapplicable", "pass"):
        del differences["sas_bufsize_matches_stripe"]
    assert differences == {}, differences


LAB_RULES = ("io_scheduler", "read_ahead", "sas_fs_noatime")


def _lab_sets(lab, tmp_path: Path) -> list[str]:
    config = tmp_path / "sasv9.cfg"
    config.write_text(f"-WORK '{lab['work'].mountpoint}'\n-UTILLOC {lab['utilloc'].mountpoint}\n")
    return [f"sas_data_dirs={lab['data'].mountpoint}/data", f"sas_config_files={config}",
            *LAB_HOST_SETS]


def _lab_verdicts(sets: list[str]) -> dict[str, str]:
    from sascheck.rules import load_catalogue
    from sascheck.scanner.scan import run_scan

    result = run_scan(load_catalogue(), "default", sets, "/", "bare_metal").to_dict()
    return {rule["id"]: rule["result"] for rule in result["rules"]}


def _lab_fix(fmt: str, sets: list[str], output: Path) -> Path:
    from .support.remedy import generate

    # Only the rules whose fixes touch nothing but the lab's own devices and mounts.
    extra = ["--role", "bare_metal", "--all"]
    for rule in LAB_RULES:
        extra += ["--rule", rule]
    return generate(fmt, output, Path("/"), sets, extra)


@pytest.mark.parametrize("fmt", ["bash", "ansible"])
def test_live_remediation_of_the_lab(lab, tmp_path, fmt):
    from .support.remedy import (
        LAST_PLAYBOOK_OUTPUT,
        ansible_available,
        changed_tasks,
        run_bash,
        run_playbook,
    )

    if fmt == "ansible" and not ansible_available():
        pytest.fail("ansible-core is not installed (scripts/setup --test installs it)")
    sets = _lab_sets(lab, tmp_path)
    before = _lab_verdicts(sets)
    assert all(before[rule] == "fail" for rule in LAB_RULES), before
    fstab = Path("/etc/fstab").read_bytes() if Path("/etc/fstab").exists() else None
    queues = {name: _queue_values(fs) for name, fs in lab.items()}
    fix = _lab_fix(fmt, sets, tmp_path / f"fix.{fmt}")
    manifest = tmp_path / "lab.manifest"  # this test's own: a revert undoes only the lab
    if fmt == "bash":
        env = {"SASCHECK_MANIFEST": str(manifest)}
        first = run_bash(fix, None, env=env).stdout
        assert "changed:" in first
        assert run_bash(fix, None, env=env).stdout.rstrip().endswith("no changes")
    else:
        assert run_playbook(fix, None, "-e", f"sascheck_manifest={manifest}")["changed"] > 0
        again = run_playbook(fix, None, "-e", f"sascheck_manifest={manifest}")
        assert again["changed"] == 0, changed_tasks(LAST_PLAYBOOK_OUTPUT[0])
    after = _lab_verdicts(sets)
    assert {rule: after[rule] for rule in LAB_RULES} == dict.fromkeys(LAB_RULES, "pass")
    assert (lab["work"].queue / "read_ahead_kb").read_text().strip() == "2048"
    assert "[mq-deadline]" in (lab["work"].queue / "scheduler").read_text()
    # Nothing outside the lab: the host's fstab is as it was.
    assert (Path("/etc/fstab").read_bytes() if Path("/etc/fstab").exists() else None) == fstab

    # Revert: the runtime values the fix overwrote come back (the remount is listed only).
    if fmt == "bash":
        assert "changes reverted" in run_bash(fix, None, "--revert", str(manifest)).stdout
    else:
        assert run_playbook(fix, None, "--tags", "revert", "-e",
                            f"sascheck_manifest={manifest}")["changed"] == 1
    assert {name: _queue_values(fs) for name, fs in lab.items()} == queues
    reverted = _lab_verdicts(sets)
    assert reverted["io_scheduler"] == reverted["read_ahead"] == "fail"


def _queue_values(fs: LabFs) -> tuple[str, str]:
    """The selected scheduler and the read-ahead of a lab device."""
    scheduler = (fs.queue / "scheduler").read_text()
    return scheduler[scheduler.find("[") + 1:scheduler.find("]")], (
        fs.queue / "read_ahead_kb").read_text().strip()
