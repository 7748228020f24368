"""A fix's revert: the manifest the bash script or the playbook wrote undoes exactly what it
changed, and a doctored manifest removes nothing outside the image."""

from __future__ import annotations

import os
import subprocess

import pytest

from .support.fix_hosts import (
    BAD,
    PERSISTENCE_RULES,
    needs_ansible,
    persistence_failing,
    rhel6_tuned02,
    verdicts,
)
from .support.hosts import BASELINE_SETS, sas_host, tree_digest
from .support.remedy import (
    generate,
    run_bash,
    run_playbook,
)


@pytest.mark.parametrize("case", ["every persistence rule failing", "RHEL 6 enterprise-storage"])
def test_fix_then_revert_leaves_the_image_as_it_was(tmp_path, case):
    """fix, then --revert with the manifest the fix wrote: every file, link, mode and owner
    is back (only modification times of directories and links differ); a second revert
    changes nothing."""
    if case == "RHEL 6 enterprise-storage":
        root = rhel6_tuned02(tmp_path / "root", "enterprise-storage")
    else:
        root = persistence_failing(tmp_path / "root")
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
    root = persistence_failing(tmp_path / "root")
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
