"""The reports' copy buttons copy what runs (issue 24, item 8): on the host page and in a
fleet page's host section (built by its script), the one command that writes the rule's whole
bash fix, library included, and runs it, for the root the report is of. Tested by running the
copied text with bash on an image whose path is hostile: the fix lands there and nothing in
the path is run."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from sascheck.cli import main

from .support.browser import browser_available, open_page
from .support.hosts import BASELINE_SETS, NO_THP_ON_CMDLINE, sas_host

VENV_BIN = Path(__file__).resolve().parent.parent / ".venv" / "bin"
needs_browser = pytest.mark.skipif(not browser_available(), reason="chromium/playwright missing")


def _verdict(root: Path, rule: str, out: Path) -> str:
    main(["scan", "--root", str(root), "--quiet", "--json", str(out),
          *[f"--set={s}" for s in BASELINE_SETS]])
    return next(r["result"] for r in json.loads(out.read_text())["rules"] if r["id"] == rule)


def _copied_from_host_page(page) -> str:
    button = page.locator("article#host-thp_disabled_at_boot button.copy").first
    return page.locator(f"[id='{button.get_attribute('data-target')}']").text_content()


def _copied_from_fleet_page(page) -> str:
    page.locator("#matrix-rows a").first.click()  # the script builds the host's section
    article = page.locator("section#h0 article#h0-thp_disabled_at_boot")
    article.locator("summary").click()
    button = article.locator("button.copy").first
    return page.locator(f"[id='{button.get_attribute('data-target')}']").text_content()


@needs_browser
@pytest.mark.parametrize("report", [[], ["--fleet"]], ids=["host page", "fleet page"])
def test_the_copied_fix_runs_on_the_image_and_the_rule_passes(tmp_path, report):
    root = sas_host(tmp_path / "img $(touch PWNED) it's", **NO_THP_ON_CMDLINE)
    results = tmp_path / "before.json"
    assert _verdict(root, "thp_disabled_at_boot", results) == "fail"
    page_file = tmp_path / "report.html"
    assert main(["report", *report, str(results), "-o", str(page_file)]) == 0
    with open_page(page_file) as (page, log):
        copied = (_copied_from_fleet_page if report else _copied_from_host_page)(page)
        assert not log.console_errors
    assert copied.startswith("sascheck fix --format bash --rule thp_disabled_at_boot")
    work = tmp_path / "run"
    work.mkdir()
    done = subprocess.run(["bash", "-c", copied], cwd=work, capture_output=True, text=True,
                          env={**os.environ, "PATH": f"{VENV_BIN}:{os.environ['PATH']}"},
                          timeout=300)
    assert done.returncode in (0, 3), done.stdout + done.stderr
    assert "dry run" in done.stdout and "would: write" in done.stdout, done.stdout
    assert not (work / "PWNED").exists() and not (tmp_path / "PWNED").exists()
    # Issue 48: the copied step is the terminal's, a dry run first: nothing changed yet.
    assert copied.endswith("--dry-run  # then the same without --dry-run, as root")
    assert _verdict(root, "thp_disabled_at_boot", tmp_path / "dry.json") == "fail"
    real = subprocess.run(["bash", "-c", copied.split("  #")[0].removesuffix(" --dry-run")
                           .split(" && ", 1)[1]], cwd=work, capture_output=True, text=True,
                          timeout=300)
    assert real.returncode in (0, 3), real.stdout + real.stderr
    assert "thp_disabled_at_boot" in real.stdout, real.stdout  # the fix ran and said so
    assert not (work / "PWNED").exists() and not (tmp_path / "PWNED").exists()
    assert _verdict(root, "thp_disabled_at_boot", tmp_path / "after.json") == "pass"


@needs_browser
@pytest.mark.parametrize("report", [[], ["--fleet"]], ids=["host page", "fleet page"])
def test_a_results_file_with_control_characters_gets_no_command_to_paste(tmp_path, report):
    """Pastejack (issue 34): a doctored results file's root holds Ctrl-U, a command and a
    carriage return. shlex.quote keeps them inside its quotes, and an interactive bash
    without bracketed paste (RHEL 7 and 8) kills the line and runs the command as it is
    pasted. Such a host is given no command to copy: what a button copies holds no control
    character and nothing of the doctored value."""
    root = sas_host(tmp_path / "img", **NO_THP_ON_CMDLINE)
    results = tmp_path / "before.json"
    _verdict(root, "thp_disabled_at_boot", results)
    data = json.loads(results.read_text())
    data["host"]["root"] = f"{root}\x15touch {tmp_path}/PWNED\r"
    results.write_text(json.dumps(data))
    page_file = tmp_path / "report.html"
    assert main(["report", *report, str(results), "-o", str(page_file)]) == 0
    with open_page(page_file) as (page, log):
        copied = (_copied_from_fleet_page if report else _copied_from_host_page)(page)
        assert not log.console_errors
    assert not any(ord(c) < 32 and c != "\n" for c in copied)
    assert "PWNED" not in copied, copied
    assert not copied.startswith("sascheck fix")


@needs_browser
@pytest.mark.parametrize("report", [[], ["--fleet"]], ids=["host page", "fleet page"])
def test_work_for_a_person_is_text_with_nothing_to_copy(tmp_path, report):
    """Issue 36: a manual rule's advice (sas_fs_type on ext3) reads as text, not as a
    shell-quoted warn line, and has no copy button: no command does it."""
    from .support.hosts import SasFs

    root = sas_host(tmp_path / "root", filesystems=[SasFs("sasdata", "/sasdata", "ext3")])
    results = tmp_path / "results.json"
    assert _verdict(root, "sas_fs_type", results) == "fail"
    page_file = tmp_path / "report.html"
    assert main(["report", *report, str(results), "-o", str(page_file)]) == 0
    with open_page(page_file) as (page, log):
        if report:
            page.locator("#matrix-rows a").first.click()
            article = page.locator("section#h0 article#h0-sas_fs_type")
        else:
            article = page.locator("article#host-sas_fs_type")
        article.locator("summary").click()
        text = article.text_content()
        assert article.locator("button.copy").count() == 0
        assert not log.console_errors
    assert "What to do (by hand; no command does it): A file system's type cannot change" \
        in " ".join(text.split())
    assert "'\"'\"'" not in text


def test_a_snapshots_fix_is_written_from_the_archive_and_named_for_its_host(tmp_path):
    """A snapshot is a copy of another host: its copy command writes the fix from the
    archive (--snapshot, not --root, which would read the archive as a directory) and says
    which host to run it on, running nothing here."""
    from sascheck.reports.fix_command import fix_command
    from sascheck.reports.loading import load
    from sascheck.rules import load_catalogue

    root = sas_host(tmp_path / "img", **NO_THP_ON_CMDLINE)
    archive = tmp_path / "host 1.tar.gz"
    assert main(["collect", "--root", str(root), "-o", str(archive)]) == 0
    results = tmp_path / "snap.json"
    main(["scan", "--snapshot", str(archive), "--quiet", "--json", str(results),
          *[f"--set={s}" for s in BASELINE_SETS]])
    host = load(str(results), load_catalogue())
    command = fix_command(host, "thp_disabled_at_boot")
    assert command is not None
    assert f"--snapshot '{archive}'" in command and "--root" not in command
    assert command.endswith(f"  # then, as root on {host.name}: bash "
                            "sascheck-fix-thp_disabled_at_boot.sh --dry-run, then without")
    work = tmp_path / "run"
    work.mkdir()
    done = subprocess.run(["bash", "-c", command], cwd=work, capture_output=True, text=True,
                          env={**os.environ, "PATH": f"{VENV_BIN}:{os.environ['PATH']}"},
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert (work / "sascheck-fix-thp_disabled_at_boot.sh").read_text().startswith("#!")
