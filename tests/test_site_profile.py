"""A fix never replaces the site's own tuned profile (issue 35): tuned 2's sas-performance
includes it, so what it tunes stays and sascheck's settings come after it (tuned applies an
include first, then the including profile: tuned/profiles/loader.py). RHEL 6's tuned 0.2,
which has no include, is tests/test_veritas.py (seed 003's sas-xtremio)."""

from __future__ import annotations

from .support.hosts import BASELINE_SETS, sas_host
from .support.remedy import generate, run_bash

# A site's profile as tuned-adm loads it from /etc/tuned: low C-state latency for SAS's
# short jobs, and nothing else the throughput profiles give.
SITE_PROFILE = "[main]\nsummary=Site SAS latency\n\n[cpu]\nforce_latency=1\n"


def test_sas_performance_includes_the_sites_own_profile(tmp_path, scan):
    root = sas_host(tmp_path / "root", tuned_active="site-sas",
                    tuned_custom={"site-sas": SITE_PROFILE})
    before = scan(root, profile="xtremio")
    assert before["by_id"]["tuned_profile"]["result"] == "fail"
    assert before["host"]["tuned_site_profile"] == "site-sas"
    run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS,
                      ["--profile", "xtremio"]), root)
    written = (root / "etc/tuned/sas-performance/tuned.conf").read_text()
    assert "\ninclude=site-sas\n" in written
    after = scan(root, profile="xtremio")
    assert after["by_id"]["tuned_profile"]["result"] == "pass"
    worse = [rule for rule, outcome in before["by_id"].items()
             if outcome["result"] == "pass" and after["by_id"][rule]["result"] != "pass"]
    assert worse == []
    # the site's force_latency=1 still reaches the boot, through the include
    assert before["by_id"]["cpu_dma_latency"]["result"] == "pass"
    assert after["by_id"]["cpu_dma_latency"]["result"] == "pass"


def test_a_shipped_profile_is_not_the_sites_own(tmp_path, scan):
    root = sas_host(tmp_path / "root", tuned_active="balanced")
    assert "tuned_site_profile" not in scan(root)["host"]


# Issue 48: an image holding the site's own sas-performance (not active), as an admin wrote
# it: tuned.conf(5) sections, [sysctl] values tuned writes with sysctl.
SITE_SAS_PERFORMANCE = ("[main]\nsummary=Our SAS tuning\ninclude=throughput-performance\n\n"
                        "[sysctl]\nvm.swappiness=10\nkernel.numa_balancing=0\n")


def test_a_fix_never_replaces_a_profile_it_did_not_write(tmp_path, scan):
    from .support.remedy import ansible_available, run_playbook

    for fmt in ("bash", "ansible") if ansible_available() else ("bash",):
        root = sas_host(tmp_path / fmt, tuned_active=None,
                        tuned_custom={"sas-performance": SITE_SAS_PERFORMANCE})
        profile = root / "etc/tuned/sas-performance/tuned.conf"
        assert profile.read_text() == SITE_SAS_PERFORMANCE
        assert scan(root)["by_id"]["tuned_profile"]["result"] == "fail"
        fix = generate(fmt, tmp_path / f"fix-{fmt}.{'sh' if fmt == 'bash' else 'yml'}", root,
                       BASELINE_SETS)
        if fmt == "bash":
            ran = run_bash(fix, root)
            assert ran.returncode == 3
            assert ("/etc/tuned/sas-performance/tuned.conf is a sas-performance profile "
                    "sascheck did not write: kept, not replaced") in ran.stdout + ran.stderr
        else:
            run_playbook(fix, root)
        assert profile.read_text() == SITE_SAS_PERFORMANCE, fmt
        assert not list(profile.parent.glob("*.bak")), fmt
