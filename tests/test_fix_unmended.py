"""Nothing skipped in silence (issue 65): every rule the scan failed that a fix run leaves as
it is is named with why, at the end of the bash run and in the plan the playbook reads."""

from __future__ import annotations

import json

from .support.hosts import BASELINE_SETS, sas_host
from .support.remedy import generate, run_bash


def _unmended(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    if not any(line.startswith("not mended by this run") for line in lines):
        return []
    start = next(i for i, line in enumerate(lines) if line.startswith("not mended by this run"))
    return [line[4:] for line in lines[start + 1:] if line.startswith("  - ")]


def test_running_values_an_image_cannot_take_are_named(tmp_path):
    """THP 'always' and read-ahead 128 KiB on an image: neither running value can be set in
    an image, so both are named, in the dry run, the run and the plan alike."""
    root = sas_host(tmp_path / "root", thp_enabled="[always] madvise never", read_ahead_kb=128)
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS,
                      ["--rule", "thp_disabled", "--rule", "read_ahead"])
    expected = [f"{rule}: a running value: an offline image has no running kernel to set it in"
                for rule in ("thp_disabled", "read_ahead")]
    assert _unmended(run_bash(script, root, "--dry-run").stdout) == expected
    assert _unmended(run_bash(script, root).stdout) == expected
    plan = json.loads(run_bash(script, root, env={"SASCHECK_PLAN": "1"}).stdout)
    assert plan["unmended"] == expected


def test_a_failing_rule_the_run_finds_nothing_to_change_for_is_named(tmp_path):
    """The scan failed sas_accounts_nofile; before the fix runs, the site raises the limit
    itself: the run changes nothing for the rule and says so, rather than 'no changes'
    alone."""
    root = sas_host(tmp_path / "root", kernel="5.14.0-427.13.1.el9_4.x86_64", sas_limits=None)
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS,
                      ["--rule", "sas_accounts_nofile"])
    site = root / "etc/security/limits.d/50-site.conf"
    site.parent.mkdir(parents=True, exist_ok=True)
    site.write_text("sas - nofile 30000\n")
    ran = run_bash(script, root)
    assert _unmended(ran.stdout) == [
        "sas_accounts_nofile: failed when scanned, and this run found nothing to change for "
        "it (an earlier rule's change may have mended it: scan again)"]
    assert not (root / "etc/security/limits.d/99-sascheck-sas.conf").exists()


def test_a_rule_the_run_mends_or_hands_to_a_person_is_not_listed(tmp_path):
    """The same failing rule, mended by the run: nothing is listed; the list is not a copy of
    every rule the script holds."""
    root = sas_host(tmp_path / "root", kernel="5.14.0-427.13.1.el9_4.x86_64", sas_limits=None)
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS,
                      ["--rule", "sas_accounts_nofile"])
    ran = run_bash(script, root)
    assert "changes made" in ran.stdout and _unmended(ran.stdout) == []


def test_the_manifest_counts_what_the_run_left(tmp_path):
    """A run that changed something (the tuned profile) and left a running value (THP now)
    records both in its manifest: the change to undo, and the rule it did not mend as a
    comment; --revert reads past it and restores the image."""
    root = sas_host(tmp_path / "root", thp_enabled="[always] madvise never", tuned_active=None)
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS,
                      ["--rule", "thp_disabled", "--rule", "tuned_profile"])
    manifest = tmp_path / "run.manifest"
    ran = run_bash(script, root, env={"SASCHECK_MANIFEST": str(manifest)})
    assert "changes made" in ran.stdout
    comments = [line for line in manifest.read_text().splitlines()
                if line.startswith("# not mended by this run: ")]
    assert comments == ["# not mended by this run: thp_disabled: a running value: an offline "
                        "image has no running kernel to set it in"]
    reverted = run_bash(script, root, "--revert", str(manifest))
    assert "changes reverted" in reverted.stdout and "malformed" not in reverted.stderr



def test_a_hostile_rule_id_in_the_results_never_reaches_a_script(tmp_path, capsys):
    """The results file is host data: a failing 'rule' whose id is shell text (it would go
    into the script's FAILED_WHEN_SCANNED) makes the file refused, and no script is written."""
    import json

    from sascheck.cli import main

    root = sas_host(tmp_path / "root", kernel="5.14.0-427.13.1.el9_4.x86_64", sas_limits=None)
    results = tmp_path / "r.json"
    assert main(["scan", "--root", str(root), "--quiet", "--json", str(results),
                 *(f"--set={value}" for value in BASELINE_SETS)]) == 2
    data = json.loads(results.read_text())
    data["rules"].append(dict(data["rules"][0], id="x$(touch PWNED)", result="fail"))
    results.write_text(json.dumps(data))
    script = tmp_path / "fix.sh"
    capsys.readouterr()
    assert main(["fix", "--format", "bash", "--from", str(results), "-o", str(script)]) == 1
    assert str(results) in capsys.readouterr().err
    assert not script.exists() and not (tmp_path / "PWNED").exists()
