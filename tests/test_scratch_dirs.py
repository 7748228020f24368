"""Throw-away scratch (#51): SAS WORK and the CAS cache on a cloud instance store, mounted
nobarrier, pass the barrier rules where the site names them in scratch_dirs, and only where
no SAS DATA shares the file system; the fixes leave them, both engines agree.

The layout is what SAS's viya4-iac-aws gives a node (files/custom-data/additional_userdata.sh
at commit 1530f50): the instance store as ext4 at /pv-disks/UUID with the fstab line
``UUID=... /pv-disks/UUID ext4 defaults,noatime,discard,nobarrier 1 2``, /nvme/disk a link to
it, and /nvme/disk/saswork and /nvme/disk/cache in it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .support.hosts import SasFs, sas_host
from .support.oscap import oscap_available, oscap_eval, tailor
from .support.remedy import ansible_available, generate, run_bash, run_playbook
from .support.rootbuilder import RootBuilder

STORE = "/pv-disks/6a1f0b2e-8c3d-4e5f-9a7b-2c4d6e8f0a1b"
SCRATCH = ["scratch_dirs=/nvme/disk/saswork,/nvme/disk/cache"]
RULES = ("barrier_requires_protected_cache", "mount_options_at_boot")


def scratch_host(path: Path, data_on_store: bool = False, data_nobarrier: bool = False) -> Path:
    data_options = "rw,noatime,attr2,inode64,noquota"
    filesystems = [
        SasFs("sasdata", "/sasdata", "ext4" if data_nobarrier else "xfs",
              "rw,noatime,nobarrier" if data_nobarrier else data_options),
        SasFs("sasutil", "/sasutil"),
        # /proc/mounts as ext4 shows the mount (discard and nobarrier kept, defaults gone)
        SasFs("store", STORE, "ext4", "rw,noatime,discard,nobarrier",
              fstab="defaults,noatime,discard,nobarrier")]
    dirs = (f"{STORE}/saswork", f"{STORE}/cache", *((f"{STORE}/sasdata",) if data_on_store
                                                     else ()))
    sas_host(path, filesystems=filesystems, sas_dirs=dirs,
             sas_local_cfg="-WORK /nvme/disk/saswork\n-UTILLOC /sasutil\n-BUFSIZE 64K\n")
    # The builder made the directory sasv9_local.cfg names; the node has the link instead.
    shutil.rmtree(path / "nvme/disk")
    RootBuilder(path).symlink("/nvme/disk", STORE)
    return path


def data_sets(data_on_store: bool) -> list[str]:
    return [f"sas_data_dirs=/sasdata{',/nvme/disk/sasdata' if data_on_store else ''}"]


def judged(scan, root: Path, sets: list[str]) -> dict[str, dict]:
    result = scan(root, *sets, baseline_sets=False)
    return {rule_id: result["by_id"][rule_id] for rule_id in RULES}


def store_evidence(rule: dict) -> dict:
    return next(e for e in rule["evidence"] if e["subject"].startswith(STORE))


def test_named_scratch_passes_and_says_why(tmp_path, scan):
    root = scratch_host(tmp_path / "r")
    rules = judged(scan, root, [*data_sets(False), *SCRATCH])
    assert {rule_id: rule["result"] for rule_id, rule in rules.items()} == dict.fromkeys(
        RULES, "pass")
    for rule in rules.values():
        assert "throw-away scratch (scratch_dirs names /nvme/disk/saswork)" in \
            store_evidence(rule)["note"], rule


def test_unnamed_scratch_fails(tmp_path, scan):
    root = scratch_host(tmp_path / "r")
    rules = judged(scan, root, data_sets(False))
    assert {rule_id: rule["result"] for rule_id, rule in rules.items()} == dict.fromkeys(
        RULES, "fail")


def test_data_on_the_scratch_file_system_keeps_the_rule(tmp_path, scan):
    root = scratch_host(tmp_path / "r", data_on_store=True)
    rules = judged(scan, root, [*data_sets(True), *SCRATCH])
    assert {rule_id: rule["result"] for rule_id, rule in rules.items()} == dict.fromkeys(
        RULES, "fail")
    assert "SAS DATA too" in store_evidence(rules["barrier_requires_protected_cache"])["note"]


# A scratch directory that is not there (a typo) lifts nothing: its path would otherwise
# fall on the file system above it, here the instance store holding WORK.
MISSING = [f"scratch_dirs={STORE}/saswrok"]


def test_a_scratch_directory_that_is_not_there_lifts_nothing(tmp_path, scan):
    root = scratch_host(tmp_path / "r")
    rules = judged(scan, root, [*data_sets(False), *MISSING])
    assert {rule_id: rule["result"] for rule_id, rule in rules.items()} == dict.fromkeys(
        RULES, "fail")


@pytest.mark.skipif(not oscap_available(), reason="oscap not installed")
@pytest.mark.parametrize(("data_on_store", "named"), [(False, True), (False, False),
                                                      (True, True), (False, None)],
                         ids=["named", "not named", "DATA there too", "named, not there"])
def test_oscap_agrees(tmp_path, scan, data_on_store, named):
    """oscap with the tailoring `sascheck tailor` writes (the link resolved, as the scanner
    resolves it): the same verdicts on both rules."""
    root = scratch_host(tmp_path / "r", data_on_store=data_on_store)
    sets = [*data_sets(data_on_store),
            *(SCRATCH if named else MISSING if named is None else [])]
    ours = {rule_id: rule["result"] for rule_id, rule in judged(scan, root, sets).items()}
    theirs = oscap_eval(root, tailor(root, sets, tmp_path / "tailoring.xml"), tmp_path)
    assert {rule_id: theirs[rule_id] for rule_id in RULES} == ours


def _fstab_line(root: Path, point: str) -> str:
    return next(line for line in (root / "etc/fstab").read_text().splitlines()
                if line.split()[1:2] == [point])


def test_the_bash_fix_mends_data_and_keeps_the_scratch_entry(tmp_path, scan):
    """DATA on ext4 with nobarrier fails; the fix takes nobarrier off DATA's fstab line and
    leaves the instance store's line as viya4-iac-aws wrote it."""
    root = scratch_host(tmp_path / "r", data_nobarrier=True)
    sets = [*data_sets(False), *SCRATCH]
    store_line, root_line = _fstab_line(root, STORE), _fstab_line(root, "/")
    script = generate("bash", tmp_path / "fix.sh", root, sets)
    run = run_bash(script, root)
    assert f"{STORE} is throw-away scratch (scratch_dirs names /nvme/disk/saswork)" in run.stdout
    assert _fstab_line(root, STORE) == store_line
    # WORK is reached through the /nvme/disk link: placed as the scanner places it, never
    # on the root file system holding the link (whose line once got noatime here)
    assert _fstab_line(root, "/") == root_line
    assert "nobarrier" not in _fstab_line(root, "/sasdata")
    assert judged(scan, root, sets)["mount_options_at_boot"]["result"] == "pass"


@pytest.mark.skipif(not ansible_available(), reason="ansible-playbook not installed")
def test_the_playbook_keeps_the_scratch_entry(tmp_path, scan):
    root = scratch_host(tmp_path / "r", data_nobarrier=True)
    sets = [*data_sets(False), *SCRATCH]
    store_line, root_line = _fstab_line(root, STORE), _fstab_line(root, "/")
    playbook = generate("ansible", tmp_path / "fix.yml", root, sets)
    run_playbook(playbook, root)
    assert _fstab_line(root, STORE) == store_line
    assert _fstab_line(root, "/") == root_line
    assert "nobarrier" not in _fstab_line(root, "/sasdata")
    assert judged(scan, root, sets)["mount_options_at_boot"]["result"] == "pass"
