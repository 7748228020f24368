"""The contributor docs work as written: docs/adding-a-rule.md is followed step by step in a
temporary copy of rules/ (its YAML blocks are the files it writes), then the new rule is
scanned, fixed by bash and Ansible together with a shipped one, collected by collect.sh and
judged by oscap; every path the docs name exists (adding-a-check-kind.md:
test_docs_check_kind)."""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from sascheck.content.build import compile_catalogue
from sascheck.content.tailoring import tailored_profile_id, write_tailoring
from sascheck.remediations.generate import (
    ansible_planner,
    ansible_playbook,
    bash_script,
    fix_input_from_result,
)
from sascheck.remediations.xccdf_fixes import xccdf_fix_texts
from sascheck.rules import Catalogue, load_catalogue
from sascheck.rules.loader import RULES_DIR
from sascheck.scanner.scan import run_scan, site_values
from sascheck.scanner.sources.collect_script import SCRIPT, with_current_layout
from sascheck.scanner.sources.snapshot import opened_snapshot

from .support.hosts import BASELINE_SETS, sas_host
from .support.oscap import oscap_available, oscap_eval
from .support.remedy import (
    ansible_available,
    profile_sysctl,
    run_bash,
    run_playbook,
    sysctl_d_keys,
)

DOCS = Path(__file__).resolve().parent.parent / "docs"
# A fenced YAML block whose first line names the file it belongs in.
BLOCK = re.compile(r"```yaml\n# rules/(?P<file>[\w./-]+)(?P<append> \(append\))?\n(?P<body>.*?)```",
                   re.S)


def _follow_adding_a_rule(directory: Path) -> list[str]:
    """Apply the doc's blocks to ``directory``; the new rules' ids, in the page's order."""
    new_rules = []
    for block in BLOCK.finditer((DOCS / "adding-a-rule.md").read_text(encoding="utf-8")):
        target = directory / block["file"]
        if block["append"]:
            target.write_text(target.read_text(encoding="utf-8") + block["body"],
                              encoding="utf-8")
        else:
            assert not target.exists(), f"the doc's example rule {target.name} exists already"
            target.write_text(block["body"], encoding="utf-8")
            new_rules.append(target.stem)
    assert len(new_rules) == 2, "adding-a-rule.md shows a rule of a site value and a constant"
    return new_rules


def _catalogue_with_the_pages_rules(tmp_path: Path) -> tuple[Catalogue, list[str]]:
    directory = tmp_path / "rules"
    shutil.copytree(RULES_DIR, directory, ignore=shutil.ignore_patterns(
        "*.py", "__pycache__", "validated.sha256"))
    rule_ids = _follow_adding_a_rule(directory)
    return load_catalogue(directory), rule_ids  # the full schema pass: not stamped


def _catalogue_as_the_doc_says(tmp_path: Path) -> tuple[Catalogue, str]:
    """The catalogue with the page's rules; the id of its rule of a site value."""
    catalogue, rule_ids = _catalogue_with_the_pages_rules(tmp_path)
    return catalogue, rule_ids[0]


@pytest.mark.parametrize(("value", "expected"), [(3000, "pass"), (1500, "fail")])
def test_adding_a_rule_as_the_doc_says(tmp_path, value, expected):
    catalogue, rule_id = _catalogue_as_the_doc_says(tmp_path)
    assert rule_id in catalogue.profile("default").rule_ids
    rule = catalogue.rules[rule_id]
    assert rule.values == ("dirty_expire_centisecs",)
    root = sas_host(tmp_path / "root",
                    extra_files={"/proc/sys/vm/dirty_expire_centisecs": f"{value}\n"})
    result = run_scan(catalogue, "default", BASELINE_SETS, str(root), "bare_metal").to_dict()
    verdict = {r["id"]: r for r in result["rules"]}[rule_id]
    assert verdict["result"] == expected, verdict
    assert verdict["references"][0]["citation"].startswith("Red Hat, Comparing the Performance")


# The guest image: both dirty ratios off the site's values.
DIRTY = {"/proc/sys/vm/dirty_expire_centisecs": "500\n"}
# (its vm.zone_reclaim_mode as the page's constant rule wants it: that rule passes there)
DIRTY["/proc/sys/vm/zone_reclaim_mode"] = "0\n"


def _verdicts(catalogue: Catalogue, root: Path) -> dict[str, str]:
    result = run_scan(catalogue, "default", BASELINE_SETS, str(root), "bare_metal").to_dict()
    return {r["id"]: r["result"] for r in result["rules"]}


def _fix_input(catalogue: Catalogue, root: Path, rule_id: str):
    result = run_scan(catalogue, "default", BASELINE_SETS, str(root), "bare_metal").to_dict()
    return fix_input_from_result(catalogue, result, profile=None, assignments=(),
                                 role="auto", everything=False,
                                 only=("vm_dirty_ratio", rule_id))


def _persisted_keys(root: Path) -> dict[str, str]:
    """The baseline host boots tuned with sascheck's profile and no sysctl file sets these
    keys: the fix keeps them in that profile, and nothing in /etc/sysctl.d (issue 51)."""
    assert sysctl_d_keys(root) == {}
    return profile_sysctl(root)


def test_the_pages_rule_is_fixed_by_bash_with_a_shipped_one(tmp_path):
    """Issue 47: the page's rule reads a new site value; the bash fix stopped with
    'DIRTY_EXPIRE_CENTISECS: unbound variable' before mending anything. Fixed offline with
    vm_dirty_ratio, both keys are persisted (one file, neither dropped) and a second run
    changes nothing."""
    catalogue, rule_id = _catalogue_as_the_doc_says(tmp_path)
    root = sas_host(tmp_path / "root", dirty_ratio=30, extra_files=DIRTY)
    before = _verdicts(catalogue, root)
    assert before[rule_id] == before["vm_dirty_ratio"] == "fail"
    script = tmp_path / "fix.sh"
    script.write_text(bash_script(catalogue, _fix_input(catalogue, root, rule_id)))
    run_bash(script, root)
    assert _persisted_keys(root) == {"vm.dirty_ratio": "40", "vm.dirty_expire_centisecs": "3000"}
    assert "no changes" in run_bash(script, root).stdout


def test_a_bad_site_value_for_the_pages_rule_is_refused(tmp_path):
    """The value a new rule reads is checked against its type as the shipped ones are: the
    environment the playbook's planner reads is untrusted."""
    catalogue, rule_id = _catalogue_as_the_doc_says(tmp_path)
    root = sas_host(tmp_path / "root", dirty_ratio=30, extra_files=DIRTY)
    planner = tmp_path / "planner.sh"
    planner.write_text(ansible_planner(catalogue, _fix_input(catalogue, root, rule_id)))
    env = {"SASCHECK_ROOT": str(root), "SASCHECK_PLAN": "1", "SASCHECK_DIRTY_RATIO": "40",
           "SASCHECK_READ_AHEAD_MIN_KB": "2048", "SASCHECK_STORAGE_CACHE_PROTECTED": "false",
           "SASCHECK_ALLOWED_SCHEDULERS": "deadline", "SASCHECK_ALLOWED_TUNED_PROFILES":
           "throughput-performance", "SASCHECK_SAS_DIRS": "/sasdata"}
    for bad in ("$(touch pwned)", "360001", "", "1e3"):
        ran = subprocess.run(["bash", str(planner)], env={
            **env, "SASCHECK_DIRTY_EXPIRE_CENTISECS": bad}, capture_output=True, text=True,
            cwd=tmp_path, timeout=60)
        assert ran.returncode == 1, ran.stdout + ran.stderr
        assert "site value DIRTY_EXPIRE_CENTISECS is not a whole number from 0 to 360000" \
            in ran.stderr
    assert not (tmp_path / "pwned").exists()
    ran = subprocess.run(["bash", str(planner)], env={
        **env, "SASCHECK_DIRTY_EXPIRE_CENTISECS": "3000"}, capture_output=True, text=True,
        timeout=60)
    assert ran.returncode == 0, ran.stderr


@pytest.mark.skipif(not ansible_available(), reason="ansible-core not installed")
def test_the_pages_rule_is_fixed_by_ansible_with_a_shipped_one(tmp_path):
    """The playbook failed before changing anything: its planner's environment lacked the
    new value. Its defaults and environment now come from the rules it fixes."""
    catalogue, rule_id = _catalogue_as_the_doc_says(tmp_path)
    root = sas_host(tmp_path / "root", dirty_ratio=30, extra_files=DIRTY)
    fix = _fix_input(catalogue, root, rule_id)
    playbook = tmp_path / "fix.yml"
    playbook.write_text(ansible_playbook(catalogue, fix, planner="fix.planner.sh"))
    (tmp_path / "fix.planner.sh").write_text(ansible_planner(catalogue, fix))
    assert "sascheck_dirty_expire_centisecs" in playbook.read_text()
    assert run_playbook(playbook, root)["failed"] == 0
    assert _persisted_keys(root) == {"vm.dirty_ratio": "40", "vm.dirty_expire_centisecs": "3000"}
    assert run_playbook(playbook, root)["changed"] == 0


def test_the_pages_rule_is_collected_by_collect_sh(tmp_path):
    """collect.sh copied the /proc/sys files it knew by name, so its snapshot said error
    where --root said fail. Its list now comes from the catalogue it is rendered with."""
    catalogue, rule_id = _catalogue_as_the_doc_says(tmp_path)
    root = sas_host(tmp_path / "root", dirty_ratio=30, extra_files=DIRTY)
    script = tmp_path / "collect.sh"
    script.write_text(with_current_layout(SCRIPT, catalogue))
    archive = tmp_path / "snap.tar.gz"
    ran = subprocess.run(["sh", str(script), "-o", str(archive)], capture_output=True,
                         text=True, env={"PATH": "/usr/bin:/bin", "SASCHECK_ROOT": str(root)},
                         timeout=120)
    assert ran.returncode == 0, ran.stderr
    direct = _verdicts(catalogue, root)
    with opened_snapshot(str(archive)) as snapshot:
        collected = _verdicts(catalogue, Path(snapshot.root))
    assert direct[rule_id] == "fail"
    assert collected == direct


def _tailoring(catalogue: Catalogue, root: Path, path: Path, **overrides: str) -> Path:
    values = site_values(catalogue, "default", BASELINE_SETS, str(root))
    text = write_tailoring(catalogue, "default", values, datetime.now(timezone.utc))
    for name, value in overrides.items():  # what a hand-edited tailoring file can say
        text = re.sub(rb'(<xccdf:set-value idref="[^"]*_value_' + name.encode()
                      + rb'">)[^<]*', rb"\g<1>" + value.encode(), text)
    path.write_bytes(text)
    return path


@pytest.mark.skipif(not oscap_available(), reason="oscap not installed")
def test_the_pages_rule_is_judged_by_oscap_as_by_the_scanner(tmp_path):
    """Both engines: the data stream built from the catalogue with the page's rule, run by
    oscap offline with a tailoring file of the same values, agrees with the scanner."""
    catalogue, rule_id = _catalogue_as_the_doc_says(tmp_path)
    datastream = tmp_path / "ds.xml"
    datastream.write_bytes(compile_catalogue(catalogue))
    for ratio, expected in (("500\n", "fail"), ("3000\n", "pass")):
        root = sas_host(tmp_path / f"root{ratio.strip()}", extra_files={
            "/proc/sys/vm/dirty_expire_centisecs": ratio})
        tailoring = _tailoring(catalogue, root, tmp_path / "tailoring.xml")
        oval = oscap_eval(root, tailoring, tmp_path, datastream=datastream, as_users_run_it=True)
        assert oval[rule_id] == _verdicts(catalogue, root)[rule_id] == expected


@pytest.mark.skipif(not oscap_available(), reason="oscap not installed")
@pytest.mark.parametrize(("tailored", "persisted"), [
    ("3000", {"vm.dirty_ratio": "40", "vm.dirty_expire_centisecs": "3000"}),
    ("360001", {"vm.dirty_ratio": "40"})])
def test_the_fix_oscap_assembles_sets_the_pages_value_in_its_block(tmp_path, tailored,
                                                                   persisted):
    """The script oscap assembles runs its set-up once: the page's rule sets and checks its
    own value in its block, from the tailoring file. A value out of its range refuses that
    block alone (said, exit 1); the blocks after it still run."""
    catalogue, rule_id = _catalogue_as_the_doc_says(tmp_path)
    datastream = tmp_path / "ds.xml"
    fixes, shared = xccdf_fix_texts(catalogue)
    datastream.write_bytes(compile_catalogue(catalogue, fixes=fixes, shared=shared))
    root = sas_host(tmp_path / "root", dirty_ratio=30, extra_files=DIRTY)
    tailoring = _tailoring(catalogue, root, tmp_path / "tailoring.xml",
                           dirty_expire_centisecs=tailored)
    assert oscap_eval(root, tailoring, tmp_path, datastream=datastream,
                      as_users_run_it=True)[rule_id] == "fail"
    script = tmp_path / "fix.sh"
    generated = subprocess.run([
        "oscap", "xccdf", "generate", "fix", "--fix-type", "bash", "--result-id",
        "xccdf_org.open-scap_testresult_" + tailored_profile_id("default"), "--tailoring-file",
        str(tailoring), "--output", str(script), str(tmp_path / "results-arf.xml")],
        capture_output=True, text=True, timeout=120)
    assert generated.returncode == 0, generated.stderr
    ran = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=300,
                         env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "SASCHECK_ROOT": str(root)},
                         cwd=tmp_path)  # its manifest goes to the working directory
    assert _persisted_keys(root) == persisted
    if tailored == "360001":
        assert ran.returncode == 1, ran.stdout + ran.stderr
        assert f"{rule_id}: refused (a site value is not of its type)" in ran.stdout
        assert "site value DIRTY_EXPIRE_CENTISECS is not a whole number" in ran.stderr
    else:
        assert ran.returncode in (0, 3), ran.stdout + ran.stderr


# A fenced block of the check-kind page: its first line names the file it is in.
def test_docs_cite_nothing_outside_the_repository():
    """A reader of a clone has the repository only (issue 24, item 10): no path above it.
    A page in docs/ may point up to the repository's own files (../README.md), never past
    it; and whatever it points to exists."""
    docs = Path(__file__).resolve().parent.parent / "docs"
    project = docs.parent
    for page in sorted(docs.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        assert "shared/" not in text and "../../" not in text, page.name
        for path in re.findall(r"\]\(([^)#\s]+)\)", text):  # the page's links
            if re.match(r"[a-z]+:", path):
                continue
            target = (docs / path).resolve()
            assert target.is_relative_to(project), f"{page.name}: {path}"
            assert target.exists(), f"{page.name}: {path}"


# A repository path in backquotes: `scanner/tuned/chain.py`, `remediations/templates/bash/lib/*.sh`.
NAMED_PATH = re.compile(r"`((?:scanner|rules|reports|content|remediations|iotest|sascheck|scripts|tests|"
                        r"deploy|packaging|examples|docs)/[\w./*-]*)`")


def test_every_file_the_docs_name_exists():
    """A newcomer follows the docs' file names (issue 46): after files move, each path a page
    or the README names in backquotes still exists (a glob matches at least one file)."""
    project = DOCS.parent
    missing = []
    for page in [project / "README.md", *sorted(DOCS.glob("*.md"))]:
        for named in NAMED_PATH.findall(page.read_text(encoding="utf-8")):
            if not any(project.glob(named.rstrip("/"))):
                missing.append(f"{page.name}: {named}")
    assert not missing, "\n".join(missing)


# The page's constant rule (issue 67: a constant needed an invented site value)
RECLAIM = "/proc/sys/vm/zone_reclaim_mode"


@pytest.mark.parametrize(("value", "expected"), [("0\n", "pass"), ("1\n", "fail")])
def test_the_pages_constant_rule_needs_no_site_value(tmp_path, value, expected):
    catalogue, (_, rule_id) = _catalogue_with_the_pages_rules(tmp_path)
    rule = catalogue.rules[rule_id]
    assert rule.values == () and rule.params["value"] == 0
    root = sas_host(tmp_path / "root", extra_files={RECLAIM: value})
    result = run_scan(catalogue, "default", BASELINE_SETS, str(root), "bare_metal").to_dict()
    verdict = {r["id"]: r for r in result["rules"]}[rule_id]
    assert verdict["result"] == expected and verdict["expected"] == "vm.zone_reclaim_mode = 0"


def test_the_pages_constant_rule_is_fixed_with_its_number(tmp_path):
    """The bash fix writes the rule's own number (no site value to set or check) where the
    host keeps sysctl values, and a second run changes nothing."""
    catalogue, (_, rule_id) = _catalogue_with_the_pages_rules(tmp_path)
    root = sas_host(tmp_path / "root", extra_files={RECLAIM: "1\n"})
    assert _verdicts(catalogue, root)[rule_id] == "fail"
    result = run_scan(catalogue, "default", BASELINE_SETS, str(root), "bare_metal").to_dict()
    fix = fix_input_from_result(catalogue, result, profile=None, assignments=(), role="auto",
                                everything=False, only=(rule_id,))
    script = tmp_path / "fix.sh"
    script.write_text(bash_script(catalogue, fix))
    assert "ZONE_RECLAIM" not in script.read_text()
    run_bash(script, root)
    assert _persisted_keys(root) == {"vm.dirty_ratio": "40", "vm.zone_reclaim_mode": "0"}
    assert "no changes" in run_bash(script, root).stdout


@pytest.mark.skipif(not oscap_available(), reason="oscap not installed")
def test_the_pages_constant_rule_is_judged_by_oscap_as_by_the_scanner(tmp_path):
    """The constant is an OVAL constant_variable; the XCCDF rule exports no value."""
    catalogue, (_, rule_id) = _catalogue_with_the_pages_rules(tmp_path)
    datastream = tmp_path / "ds.xml"
    datastream.write_bytes(compile_catalogue(catalogue))
    assert b"vm.zone_reclaim_mode as the rule states it" in datastream.read_bytes()
    for value, expected in (("1\n", "fail"), ("0\n", "pass")):
        root = sas_host(tmp_path / f"root{value.strip()}", extra_files={RECLAIM: value})
        tailoring = _tailoring(catalogue, root, tmp_path / "tailoring.xml")
        oval = oscap_eval(root, tailoring, tmp_path, datastream=datastream, as_users_run_it=True)
        assert oval[rule_id] == _verdicts(catalogue, root)[rule_id] == expected
