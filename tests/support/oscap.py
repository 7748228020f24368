"""Running the real oscap on a root, offline, the way the README tells users to."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import warnings
from pathlib import Path

from sascheck.cli import main
from sascheck.content.tailoring import tailored_profile_id
from sascheck.content.xccdf import profile_id
from sascheck.reports.arf import read_arf
from sascheck.rules import load_catalogue
from sascheck.rules.check_kinds import KINDS

PROJECT = Path(__file__).resolve().parents[2]
DATASTREAM = PROJECT / "content" / "sascheck-ds.xml"
# Rules whose kind OVAL cannot express (xtremio_paths_per_lun): the XCCDF rule has no check,
# so oscap says notchecked where its platform holds.
BEYOND_OVAL = frozenset(rule.id for rule in load_catalogue().rules.values()
                        if not KINDS[rule.kind].oval)


def oscap_available() -> bool:
    return shutil.which("oscap") is not None


def tailor(root: Path, sets: list[str], output: Path, profile: str = "default") -> Path:
    argv = ["tailor", "--root", str(root), "--profile", profile, "-o", str(output)]
    for assignment in sets:
        argv += ["--set", assignment]
    assert main(argv) == 0
    return output


def oscap_eval(root: Path, tailoring: Path | None, workdir: Path, profile: str = "default",
               datastream: Path = DATASTREAM, *, as_users_run_it: bool = False
               ) -> dict[str, str]:
    """oscap xccdf eval with OSCAP_PROBE_ROOT=root (the data stream's own profile where no
    tailoring is given); rule id -> result.

    The verdicts are what a test compares, so by default oscap skips validating the data
    stream and the tailoring (test_content validates both with the schemas oscap uses) and
    writes XCCDF results rather than a 3-4 MB ARF: a third of each run's time, over some 400
    runs a suite (#67). ``as_users_run_it`` runs the README's command: validated, ARF out."""
    env = dict(os.environ)
    if str(root) != "/":
        env["OSCAP_PROBE_ROOT"] = str(root)
    chosen = (["--tailoring-file", str(tailoring), "--profile", tailored_profile_id(profile)]
              if tailoring else ["--profile", profile_id(profile)])
    if as_users_run_it:
        out = workdir / "results-arf.xml"
        written = ["--results-arf", str(out)]
    else:
        out = workdir / "results-xccdf.xml"
        written = ["--skip-valid", "--results", str(out)]
    argv = ["oscap", "xccdf", "eval", *chosen, *written, str(datastream)]
    out.unlink(missing_ok=True)
    completed = run_oscap(argv, env)
    # 0: all pass, 2: some rule failed; anything else is oscap itself failing.
    assert completed.returncode in (0, 2), (
        f"oscap exited {completed.returncode}\nstderr: {completed.stderr[-4000:]}\n"
        f"stdout: {completed.stdout[-2000:]}")
    # read_arf takes the rule results wherever they are: an ARF's or an XCCDF results file's.
    return read_arf(str(out)).results


def any_os_datastream(workdir: Path) -> Path:
    """The data stream without the benchmark's platforms, for the lab tests on this machine
    (CI runs Debian, which the benchmark does not apply to): sascheck judges it only with
    judge_any_os=true, oscap only with the platforms gone."""
    from lxml import etree

    tree = etree.parse(str(DATASTREAM))
    for platform in tree.iterfind(".//{http://checklists.nist.gov/xccdf/1.2}Benchmark/"
                                  "{http://checklists.nist.gov/xccdf/1.2}platform"):
        platform.getparent().remove(platform)
    copy = workdir / "sascheck-ds-any-os.xml"
    tree.write(str(copy), xml_declaration=True, encoding="UTF-8")
    return copy


# Each attempt's limit: an evaluation takes about a second here and a few on a loaded CI
# machine, so a deadlocked first run is cut at 20 s rather than costing the suite 90 s; the
# last attempt is given two minutes, so a slow machine is never taken for a hung oscap.
ATTEMPT_SECONDS = (20, 40, 120)


def run_oscap(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run oscap, at most three times, past the two ways oscap 1.3.7 (Debian 12) fails on its
    own, rarely and never twice in a row here: a deadlock between its probe threads (every
    thread in pthread_cond_wait; fixed upstream by OpenSCAP PR #2033), and a crash of the
    oscap process itself, seen as death by a signal with nothing on stderr (OpenSCAP issue
    #1199: random aborts in pthread_mutex_unlock). A verdict is only ever read from a run
    that ended by itself."""
    for attempt, seconds in enumerate(ATTEMPT_SECONDS, start=1):
        last = attempt == len(ATTEMPT_SECONDS)
        try:
            completed = subprocess.run(argv, env=env, capture_output=True, text=True,
                                       timeout=seconds)
        except subprocess.TimeoutExpired:
            if last:
                raise
            warnings.warn(f"oscap hung past {seconds} s on attempt {attempt}; run again",
                          stacklevel=2)
            continue
        if completed.returncode >= 0 or last:
            return completed
        warnings.warn(f"oscap died by signal {-completed.returncode} on attempt {attempt}; "
                      "run again", stacklevel=2)
    raise AssertionError("unreachable: the last attempt returns or raises")


def oscap_verdict(root: Path, rule: str, workdir: Path, sets: list[str],
                  profile: str = "default") -> str:
    """oscap's verdict on one rule for ``root``, tailored with ``sets`` (for the tests that
    assert a listed OVAL difference on one rule rather than a whole parity comparison)."""
    workdir.mkdir(parents=True, exist_ok=True)
    tailoring = tailor(root, sets, workdir / "tailoring.xml", profile)
    return oscap_eval(root, tailoring, workdir, profile)[rule]


# Where no SAS directory is named, sascheck says notchecked with that reason and the OVAL
# errs (content/judgeable.py): neither judges, and both are said so.
NO_SAS_DIRS_NOTE = "no SAS directory is known"


def sascheck_results(root: Path, tailoring: Path, workdir: Path, profile: str
          ) -> tuple[dict[str, str], set[str]]:
    """Each rule's result, and the rules notchecked because no SAS directory is known."""
    out = workdir / "sascheck.json"
    main(["scan", "--root", str(root), "--tailoring", str(tailoring), "--json", str(out),
          "--quiet"])
    data = json.loads(out.read_text())
    assert data["profile"] == profile
    unnamed = {rule["id"] for rule in data["rules"] if rule["result"] == "notchecked"
               and rule["message"].startswith(NO_SAS_DIRS_NOTE)}
    return {rule["id"]: rule["result"] for rule in data["rules"]}, unnamed


# The baseline's array is known to RHEL 8's multipath hardware table; sascheck reads the
# release for that table, so on another release it may not judge that rule.
JUDGED_BY_RELEASE = frozenset({"multipath_all_paths_active"})


def assert_judged_alike(ours: dict[str, str], theirs: dict[str, str]) -> None:
    """Both engines judged a root of a system the guidance is for, whatever its release,
    with the same verdicts (rules OVAL cannot express and the release's table aside)."""
    same = BEYOND_OVAL | JUDGED_BY_RELEASE
    assert "pass" in ours.values() and set(theirs.values()) != {"notapplicable"}
    assert {r: v for r, v in ours.items() if r not in same} == {
        r: v for r, v in theirs.items() if r in ours and r not in same}
