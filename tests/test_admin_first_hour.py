"""What an administrator meets first: files are written before the table, and a closed pipe
loses neither them nor the exit status; a fix that leaves work to a human says so and does
not report success; a printed report shows every rationale, source and fix."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sascheck.cli import main

from .support.browser import browser_available, open_page
from .support.hosts import BASELINE_SETS, sas_host
from .support.remedy import ANSIBLE_BIN, ansible_available, generate, run_bash

SAS_FS_RULES = ("sas_fs_noatime", "sas_fs_type", "read_ahead", "io_scheduler")
TYPO = "sas_data_dirs=/sasdta"


def test_a_mistyped_sas_directory_is_an_error_named_at_the_top(tmp_path, capsys):
    """No SAS mounts and no SAS directories: walking up from any of them reaches /."""
    root = sas_host(tmp_path / "root", filesystems=[], sas_local_cfg=None)
    sets = [TYPO, "sas_work_dirs=/saswrk", "sas_utilloc_dirs=/sasutl"]
    assert main(["scan", "--root", str(root), *[f"--set={s}" for s in sets],
                 "--json", str(tmp_path / "r.json")]) == 2
    shown = capsys.readouterr()
    result = json.loads((tmp_path / "r.json").read_text())
    named = [p for p in result["problems"] if "/sasdta" in p]
    assert named and "does not exist" in named[0], result["problems"]
    assert "/sasdta" in shown.out + shown.err  # the table says it too
    by_id = {rule["id"]: rule for rule in result["rules"]}
    for rule_id in SAS_FS_RULES:
        assert by_id[rule_id]["result"] == "error", (rule_id, by_id[rule_id])
        assert "/sasdta" in json.dumps(by_id[rule_id]["evidence"])


def test_the_fix_never_reaches_the_root_file_system_through_a_typo(tmp_path):
    root = sas_host(tmp_path / "root", tuned_active="balanced")
    fstab = (root / "etc/fstab").read_text()
    sets = [TYPO, "sas_work_dirs=/saswork", "sas_utilloc_dirs=/sasutil"]
    script = generate("bash", tmp_path / "fix.sh", root, sets, ["--all"])
    done = subprocess.run(["bash", str(script)], env={**os.environ, "SASCHECK_ROOT": str(root)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 3), done.stdout + done.stderr
    assert "SAS directory /sasdta does not exist" in done.stderr
    root_line = next(line for line in (root / "etc/fstab").read_text().splitlines()
                     if line.split()[1:2] == ["/"])
    assert "noatime" not in root_line and root_line in fstab


def _sascheck(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A shell pipeline with sascheck on the left; PIPESTATUS[0] is sascheck's status."""
    script = f'{sys.executable} -m sascheck {command}; echo "status=${{PIPESTATUS[0]}}"'
    return subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "120"})


def test_a_closed_pipe_loses_no_file_and_no_status(tmp_path):
    root = sas_host(tmp_path / "root", tuned_active="balanced")
    sets = " ".join(f"--set {s}" for s in BASELINE_SETS)
    for reader in ("| head -1", "| grep -q fail", "| true"):
        for name in ("f.json", "f.html"):
            (tmp_path / name).unlink(missing_ok=True)
        ran = _sascheck(f"scan --root {root} {sets} --json f.json --html f.html {reader}",
                        tmp_path)
        assert "status=2" in ran.stdout, (reader, ran.stdout, ran.stderr)  # findings, not 1
        assert "Traceback" not in ran.stderr and "BrokenPipe" not in ran.stderr, ran.stderr
        assert json.loads((tmp_path / "f.json").read_text())["host"]["hostname"]
        assert "</html>" in (tmp_path / "f.html").read_text()
    piped = _sascheck(f"scan --root {root} {sets} --json - | head -c 100", tmp_path)
    assert piped.stdout.startswith("{") and "status=2" in piped.stdout


def test_work_left_to_a_human_is_summed_up_and_not_a_success(tmp_path):
    """tuned missing from an image: the bash fix lists it under "needs a human" before its
    count and exits 3; the playbook fails at its end unless sascheck_allow_manual=true."""
    root = sas_host(tmp_path / "root", tuned_installed=False)
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS)
    ran = subprocess.run(["bash", str(script)], env={**os.environ, "SASCHECK_ROOT": str(root)},
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    listed = lines[lines.index("needs a human (1):") + 1]
    assert listed.startswith("  - tuned_profile: tuned is not installed"), lines
    assert re.match(r"\d+ changes made$", lines[-2]) or lines[-1] == "no changes", lines
    if not ansible_available():
        return
    playbook = generate("ansible", tmp_path / "fix.yml", root, BASELINE_SETS)
    strict = subprocess.run(
        [str(ANSIBLE_BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e",
         f"ansible_python_interpreter={sys.executable}", "-e", f"sascheck_root={root}",
         "-e", "sascheck_allow_manual=false", "-e",
         f"sascheck_manifest={tmp_path / 'a.manifest'}", str(playbook)],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "ANSIBLE_NOCOLOR": "1", "PATH": f"{ANSIBLE_BIN}:{os.environ['PATH']}"})
    assert strict.returncode != 0 and "Work left to a human" in strict.stdout, strict.stdout[-3000:]
    assert "tuned is not installed" in strict.stdout


@pytest.mark.parametrize("tuned_installed", [False, True])
def test_the_governor_fix_says_when_nothing_keeps_it_after_a_reboot(tmp_path, tuned_installed):
    """The governor is a runtime setting that only tuned's profile ([cpu] governor) sets at
    boot: with tuned missing from the image, the fix lists it under "needs a human" instead
    of saying the profile keeps it; with tuned there, it says the profile does."""
    root = sas_host(tmp_path / "root", governor="ondemand", tuned_installed=tuned_installed)
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS)
    ran = run_bash(script, root)
    summary = ran.stdout.partition("needs a human")[2]
    governor_left = "\n  - cpu_governor_performance: tuned is not installed" in summary
    assert governor_left == (not tuned_installed), ran.stdout + ran.stderr
    said_kept = "skipped cpu_governor_performance: runtime setting; the tuned profile sets it" \
        in ran.stdout
    assert said_kept == tuned_installed, ran.stdout
    assert ran.returncode == (0 if tuned_installed else 3), ran.stdout + ran.stderr


def _pdf_pages(pdf: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page[^s]", pdf))


@pytest.mark.skipif(not browser_available(), reason="Chromium or playwright is missing")
def test_printing_a_host_report_shows_every_rationale_source_and_fix(tmp_path):
    """Chromium's print to PDF of the page as a reader leaves it (every <details> closed)
    has as many pages as with all of them opened, and more than with them removed; on
    screen they are closed again after printing."""
    root = sas_host(tmp_path / "root", tuned_active="balanced")
    report = tmp_path / "r.html"
    assert main(["scan", "--root", str(root), *[f"--set={s}" for s in BASELINE_SETS],
                 "--quiet", "--html", str(report)]) == 2
    with open_page(report) as (page, log):
        closed = page.evaluate("document.querySelectorAll('details:not([open])').length")
        assert closed > 10
        printed = _pdf_pages(page.pdf())
        assert page.evaluate("document.querySelectorAll('details:not([open])').length") == closed
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        opened = _pdf_pages(page.pdf())
        page.evaluate("document.querySelectorAll('details').forEach(d => d.remove())")
        without = _pdf_pages(page.pdf())
        assert log.console_errors == []
    assert printed == opened > without, (printed, opened, without)
