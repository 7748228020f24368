"""Where a sysctl fix persists its value (issue 51): "where the host's own tuning already
lives: a tuned profile when tuned is active, else /etc/sysctl.d, never both".

Whichever wins at the next boot decides, as tuned applies it (tuned/plugins/plugin_sysctl.py
at v2.25.1, _instance_apply_static lines 65-85 and _apply_system_sysctl lines 103-120): the
active profile's [sysctl] after systemd-sysctl, then, with reapply_sysctl (from 2.7, on by
default), /run/sysctl.d, /etc/sysctl.d and /etc/sysctl.conf again. So a value goes into
sascheck's tuned profile where tuned starts at boot and no file it re-applies sets the key
(or it re-applies nothing: before 2.7, reapply_sysctl = 0, the key excluded from 2.27);
otherwise the sysctl files hold it. Each case is fixed by the bash script on an image, judged
by the scanner after, run again (no changes) and reverted (the image as it was); tuned's own
loader (Debian's tuned 2.20) merges the profile written.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .support import tuned_loader
from .support.boot_samples import tuned_version_file
from .support.hosts import BASELINE_SETS, sas_host, tree_digest
from .support.remedy import (
    OURS_PROFILE,
    ansible_available,
    generate,
    profile_sysctl,
    run_bash,
    run_playbook,
    sysctl_d_keys,
)

RULE = "swappiness_at_boot"  # viya3: at most 1 (viya-ark's pre.swappiness_config)
SITE_FILE = "/etc/sysctl.d/90-site.conf"
SITE_LINE = "vm.swappiness = 30\n"
# A site's own profile named like sascheck's (no "written by sascheck" first line): kept.
SITE_NAMED_LIKE_OURS = "[main]\nsummary=Our SAS tuning\ninclude=throughput-performance\n"


@dataclass(frozen=True)
class Case:
    host: dict = field(default_factory=dict)
    home: str = "tuned"  # where the value goes: "tuned" or "sysctl"
    include: str | None = None  # a child profile's include= (None: sascheck's own profile edited)
    # the profile's line for an upper bound: "<1" (tuned 2.10 on: lowered only where above),
    # "1" where tuned reads no modifiers in [sysctl]
    line_value: str = "<1"


STOCK = {"tuned_active": "throughput-performance", "tuned_custom": {}}
CASES = {
    # tuned runs a shipped profile: a profile including it adds the one line
    "tuned runs throughput-performance": Case(STOCK, include="throughput-performance"),
    # tuned runs the profile an earlier sascheck fix wrote: its [sysctl] gains the line
    "tuned runs sascheck's profile": Case(),
    "tuned not started at boot": Case({**STOCK, "tuned_enabled": False}, home="sysctl"),
    # the site keeps swappiness in sysctl.d, which tuned re-applies after its profile
    "a sysctl.d file sets it, tuned re-applies": Case(
        {**STOCK, "extra_files": {SITE_FILE: SITE_LINE}}, home="sysctl"),
    # RHEL 7.2's tuned 2.5 re-applies nothing: throughput-performance's 10 beats the file
    "tuned 2.5 re-applies nothing": Case(
        {**STOCK, "extra_files": {SITE_FILE: SITE_LINE,
                                  **tuned_version_file((2, 5, 1), "python2.7")}},
        include="throughput-performance", line_value="1"),
    "reapply_sysctl = 0": Case(
        {**STOCK, "extra_files": {SITE_FILE: SITE_LINE, "/etc/tuned/tuned-main.conf":
                                  "daemon = 1\nreapply_sysctl = 0\n"}},
        include="throughput-performance"),
    # tuned 2.27's reapply_sysctl_exclude (commit 4e30052): fnmatch patterns of keys
    "reapply_sysctl_exclude names it": Case(
        {**STOCK, "extra_files": {SITE_FILE: SITE_LINE, **tuned_version_file((2, 27, 0)),
                                  "/etc/tuned/tuned-main.conf":
                                  "reapply_sysctl_exclude = kernel.*, vm.swap*\n"}},
        include="throughput-performance"),
    # Patterns are fnmatch's, not bash's: "+(p)" is literal to tuned, so the site file is
    # re-applied over the profile (bash's [[ == ]] read it as an extended glob matching the
    # key), and a nested pattern that made bash's matcher backtrack for minutes is read at
    # once (issue 63)
    "reapply_sysctl_exclude with extended-glob look-alikes": Case(
        {**STOCK, "extra_files": {SITE_FILE: SITE_LINE, **tuned_version_file((2, 27, 0)),
                                  "/etc/tuned/tuned-main.conf":
                                  "reapply_sysctl_exclude = *(*(*(*(?))))X, vm.swa+(p)iness\n"}},
        home="sysctl"),
    "the site's own sas-performance": Case(
        {"tuned_active": "sas-performance",
         "tuned_custom": {"sas-performance": SITE_NAMED_LIKE_OURS}}, home="sysctl"),
}


def _host(path: Path, case: Case) -> Path:
    return sas_host(path, swappiness=1, **case.host)  # running: 1, set by hand


def _verdict(scan, root: Path) -> str:
    return scan(root, profile="viya3")["by_id"][RULE]["result"]


def _fix(tmp_path: Path, root: Path, fmt: str = "bash", rule: str = RULE) -> Path:
    output = tmp_path / ("fix.sh" if fmt == "bash" else "fix.yml")
    return generate(fmt, output, root, BASELINE_SETS, ["--profile", "viya3", "--rule", rule])


@pytest.mark.parametrize("name", CASES)
def test_the_value_goes_where_it_wins_at_boot(tmp_path, scan, name):
    case = CASES[name]
    root = _host(tmp_path / "r", case)
    assert _verdict(scan, root) == "fail"
    site_file = root / SITE_FILE.lstrip("/")
    site_before = site_file.read_text() if site_file.exists() else None
    profile_before = (root / OURS_PROFILE).read_text() if (root / OURS_PROFILE).exists() else None
    digest = tree_digest(root, times=False)
    manifest = tmp_path / "fix.manifest"
    env = {"SASCHECK_MANIFEST": str(manifest)}
    script = _fix(tmp_path, root)
    run_bash(script, root, env=env)

    assert _verdict(scan, root) == "pass"
    in_files = sysctl_d_keys(root).get("vm.swappiness")
    in_profile = profile_sysctl(root).get("vm.swappiness")
    if case.home == "tuned":  # never both
        assert (in_profile, in_files) == (case.line_value, None)
        assert (site_file.read_text() if site_before else None) == site_before
        assert (root / "etc/tuned/active_profile").read_text() == "sas-performance\n"
        profile = (root / OURS_PROFILE).read_text()
        if case.include is None:  # sascheck's own: one line added, every other kept
            assert profile == profile_before + f"vm.swappiness={case.line_value}\n"
        else:
            assert f"\ninclude={case.include}\n" in profile
            assert profile.startswith("# sas-performance: a tuned profile for SAS, written by")
    else:
        assert (in_files, in_profile if profile_before is None else None) == ("1", None)
        assert ((root / OURS_PROFILE).read_text() if profile_before else None) == profile_before
        if site_before:  # the site's own line gets the value where it is
            assert site_file.read_text() == "vm.swappiness = 1\n"

    assert "no changes" in run_bash(script, root, env=env).stdout
    assert "changes reverted" in run_bash(script, root, "--revert", str(manifest),
                                          env=env).stdout
    assert tree_digest(root, times=False) == digest


@pytest.mark.parametrize("name", [name for name, case in CASES.items() if case.home == "tuned"])
def test_tuned_merges_the_profile_written(tmp_path, name):
    """tuned's loader takes the profile and its include: the SAS value, and the tuning the
    included profile gave (its governor, its other sysctl values) kept."""
    tuned_loader.require()
    root = _host(tmp_path / "r", CASES[name])
    run_bash(_fix(tmp_path, root), root)
    merged = tuned_loader.load(root, "sas-performance")
    assert "error" not in merged, merged
    assert merged["units"]["sysctl"]["vm.swappiness"] == CASES[name].line_value
    assert merged["units"]["sysctl"]["vm.dirty_ratio"] == "40"
    assert merged["units"]["cpu"]["governor"] == "performance"


def test_a_later_profile_fix_keeps_the_line(tmp_path, scan):
    """Under balanced, the swappiness fix adds a profile including balanced; the tuned_profile
    fix then writes sascheck's whole profile (balanced is no throughput profile) and keeps
    the [sysctl] line the earlier fix wrote: both rules pass."""
    root = _host(tmp_path / "r", Case({"tuned_active": "balanced", "tuned_custom": {}}))
    run_bash(_fix(tmp_path, root), root)
    assert profile_sysctl(root)["vm.swappiness"] == "<1"
    assert "\ninclude=balanced\n" in (root / OURS_PROFILE).read_text()
    assert scan(root, profile="viya3")["by_id"]["tuned_profile"]["result"] == "fail"
    run_bash(_fix(tmp_path, root, rule="tuned_profile"), root)
    assert profile_sysctl(root)["vm.swappiness"] == "<1"
    assert "\ninclude=balanced\n" not in (root / OURS_PROFILE).read_text()
    after = scan(root, profile="viya3")["by_id"]
    assert (after["tuned_profile"]["result"], after[RULE]["result"]) == ("pass", "pass")


@pytest.mark.skipif(not ansible_available(), reason="ansible-playbook not installed")
@pytest.mark.parametrize("name", ["tuned runs throughput-performance", "tuned not started at boot"])
def test_the_playbook_puts_it_where_bash_does(tmp_path, scan, name):
    """The playbook's planner decides as the script does: the same files, the same bytes."""
    by_bash = _host(tmp_path / "bash", CASES[name])
    run_bash(_fix(tmp_path, by_bash), by_bash)
    by_ansible = _host(tmp_path / "ansible", CASES[name])
    assert run_playbook(_fix(tmp_path, by_ansible, "ansible"), by_ansible)["failed"] == 0
    for path in (OURS_PROFILE, "etc/sysctl.d/99-zz-sascheck.conf", "etc/tuned/active_profile"):
        bash_file, ansible_file = by_bash / path, by_ansible / path
        assert (ansible_file.read_text() if ansible_file.exists() else None) == \
            (bash_file.read_text() if bash_file.exists() else None), path
    assert _verdict(scan, by_ansible) == "pass"


def test_the_tuned_format_carries_each_failing_sysctl(tmp_path, scan):
    """`--format tuned` is a profile to install by hand: it sets each failing sysctl of one
    value; installed as its header says, the rule passes. A passing one is left as the site
    has it, even with --all (a max_map_count above the minimum is not lowered to it)."""
    tuned_loader.require()
    root = _host(tmp_path / "r", Case({**STOCK, "extra_files": {
        "/proc/sys/vm/max_map_count": "500000\n",
        "/etc/sysctl.d/90-site.conf": "vm.max_map_count = 500000\n"}}))
    profile = generate("tuned", tmp_path / "p.conf", root, BASELINE_SETS,
                       ["--profile", "viya3", "--all"]).read_text()
    lines = profile.splitlines()
    assert "vm.swappiness=<1" in lines
    assert not [line for line in lines if line.startswith("vm.max_map_count")]
    (root / OURS_PROFILE).parent.mkdir(parents=True, exist_ok=True)
    (root / OURS_PROFILE).write_text(profile)
    (root / "etc/tuned/active_profile").write_text("sas-performance\n")
    assert tuned_loader.load(root, "sas-performance")["units"]["sysctl"]["vm.swappiness"] == "<1"
    after = scan(root, profile="viya3")["by_id"]
    assert (after[RULE]["result"], after["max_map_count_at_boot"]["result"]) == ("pass", "pass")


def test_one_run_starts_tuned_first_and_keeps_the_value_there(tmp_path, scan):
    """tuned installed but off at boot: tuned_profile and the sysctl rules fail together. The
    script runs in the fix order's steps (the tuned profile first), so the sysctl fixes find
    tuned started and keep their values in its profile alone, dirty_ratio included (the
    profile's own line), never also in /etc/sysctl.d."""
    root = _host(tmp_path / "r", Case({**STOCK, "tuned_enabled": False, "dirty_ratio": 20}))
    before = scan(root, profile="viya3")["by_id"]
    assert {rule: before[rule]["result"] for rule in ("tuned_profile", "dirty_ratio_at_boot",
                                                      RULE)} == dict.fromkeys(
        ("tuned_profile", "dirty_ratio_at_boot", RULE), "fail")
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS, ["--profile", "viya3"])
    text = script.read_text()
    first = text.index("rule_begin tuned_profile")
    assert first < text.index("rule_begin vm_dirty_ratio") < text.index(f"rule_begin {RULE}")
    run_bash(script, root)
    assert sysctl_d_keys(root) == {}
    assert {key: profile_sysctl(root).get(key) for key in ("vm.dirty_ratio", "vm.swappiness")} \
        == {"vm.dirty_ratio": "40", "vm.swappiness": "<1"}
    after = scan(root, profile="viya3")["by_id"]
    assert {rule: after[rule]["result"] for rule in ("tuned_profile", "dirty_ratio_at_boot",
                                                     RULE)} == dict.fromkeys(
        ("tuned_profile", "dirty_ratio_at_boot", RULE), "pass")


def test_an_exclude_pattern_is_never_expanded_against_files(tmp_path, scan):
    """reapply_sysctl_exclude's "vm.swap*" is a pattern for keys: run from a directory holding
    a file it would match as a shell glob, the fix still sees the key excluded."""
    root = _host(tmp_path / "r", CASES["reapply_sysctl_exclude names it"])
    script = _fix(tmp_path, root)
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / "vm.swapfile").write_text("")
    ran = subprocess.run(["bash", str(script)], cwd=tmp_path / "cwd", capture_output=True,
                         text=True, timeout=300, env={**os.environ, "SASCHECK_ROOT": str(root)})
    assert ran.returncode in (0, 3), ran.stderr
    assert (profile_sysctl(root).get("vm.swappiness"), sysctl_d_keys(root)) == ("<1", {})
    assert _verdict(scan, root) == "pass"


@pytest.mark.parametrize("active", ["$(touch PWNED)", "throughput-performance\ninclude=x",
                                    "../../../../etc/passwd"])
def test_a_hostile_active_profile_name_is_never_written(tmp_path, active):
    """active_profile is the host's: a name that is not a plain profile name the host has
    never reaches include= (nor a shell); the whole profile is written instead, including a
    profile the host has."""
    root = _host(tmp_path / "r", Case(STOCK))
    (root / "etc/tuned/active_profile").write_text(active + "\n")
    ran = subprocess.run(["bash", str(_fix(tmp_path, root))], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env={**os.environ, "SASCHECK_ROOT": str(root)})
    assert ran.returncode in (0, 3), ran.stderr
    assert not (tmp_path / "PWNED").exists()
    includes = [line for line in (root / OURS_PROFILE).read_text().splitlines()
                if line.startswith("include=")]
    assert includes in (["include=enterprise-storage"], ["include=throughput-performance"])
    assert profile_sysctl(root)["vm.swappiness"] == "<1"
