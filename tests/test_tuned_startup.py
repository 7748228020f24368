"""The profile tuned starts at boot (issue 35): with profile_mode auto, or no active profile,
tuned 2.9+ starts its recommended profile, not active_profile (tuned v2.27.0
tuned/daemon/daemon.py _get_startup_profile, tuned/utils/commands.py get_active_profile,
tuned/utils/profile_recommender.py recommend and process_config). The recommendations are
tuned's own (tests/data/tuned-2.27/recommend.conf, installed as recommend.d/50-tuned.conf);
/etc/system-release-cpe is what RHEL 7 and 9 write."""

from __future__ import annotations

from pathlib import Path

import pytest

from .support.hosts import BASELINE_SETS
from .support.oscap import oscap_available, oscap_verdict

RECOMMEND = (Path(__file__).parent / "data/tuned-2.27/recommend.conf").read_text()
SHIPPED = {"/usr/lib/tuned/recommend.d/50-tuned.conf": RECOMMEND}
RHEL9_CPE = {"/etc/system-release-cpe": "cpe:/o:redhat:enterprise_linux:9::baseos\n"}
RHEL7_CPE = {"/etc/system-release-cpe": "cpe:/o:redhat:enterprise_linux:7.9:ga:server\n"}


def mode(word: str) -> dict[str, str]:
    return {"/etc/tuned/profile_mode": word + "\n"}


# name: (files, the profile that boots, tuned_profile's verdict)
CASES = {
    # config management wrote active_profile and left the mode auto: RHEL 9's CPE names no
    # server, so tuned's recommendation for bare metal is balanced
    "auto on RHEL 9 bare metal": ({**SHIPPED, **RHEL9_CPE, **mode("auto")}, "balanced", "fail"),
    "manual on RHEL 9": ({**SHIPPED, **RHEL9_CPE, **mode("manual")}, "sas-performance", "pass"),
    # RHEL 7's CPE ends in "server": throughput-performance
    "auto on RHEL 7 server": ({**SHIPPED, **RHEL7_CPE, **mode("auto")},
                              "throughput-performance", "pass"),
    # a site's recommendation first (recommend.d in name order, /etc hides /usr/lib)
    "auto with a site recommend.d": ({**SHIPPED, **RHEL9_CPE, **mode("auto"),
                                      "/etc/tuned/recommend.d/10-sas.conf":
                                          "[sas-performance]\nsystem=.*enterprise_linux.*\n"},
                                     "sas-performance", "pass"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_profile_that_boots(host, scan, name):
    files, boots, verdict = CASES[name]
    result = scan(host(extra_files=files))
    rule = result["by_id"]["tuned_profile"]
    assert rule["result"] == verdict, rule
    active = next(e for e in rule["evidence"] if e["subject"] == "active profile")
    assert active["actual"] == boots
    auto = files.get("/etc/tuned/profile_mode") == "auto\n"
    assert active["source"].endswith("(profile_mode auto)") == auto


def test_auto_mode_is_said_with_what_it_replaces(host, scan):
    rule = scan(host(extra_files=CASES["auto on RHEL 9 bare metal"][0]))["by_id"]["tuned_profile"]
    active = next(e for e in rule["evidence"] if e["subject"] == "active profile")
    assert "at boot tuned starts its recommended profile, balanced, not sas-performance" \
        in active["note"]
    assert active["source"].startswith("/usr/lib/tuned/recommend.d/50-tuned.conf [balanced]")


def test_a_recommendation_files_cannot_show_is_not_guessed(host, scan):
    files = {**SHIPPED, **mode("auto"),
             "/etc/tuned/recommend.d/10-sas.conf": "[sas-performance]\nprocess=sas\n"}
    rule = scan(host(extra_files=files))["by_id"]["tuned_profile"]
    assert rule["result"] == "error"
    assert "running processes" in str(rule["evidence"])


def test_no_active_profile_boots_the_recommended_one(host, scan):
    rule = scan(host(tuned_active=None, extra_files={**SHIPPED, **RHEL7_CPE}))["by_id"][
        "tuned_profile"]
    active = next(e for e in rule["evidence"] if e["subject"] == "active profile")
    assert active["actual"] == "throughput-performance" and rule["result"] == "pass"


def test_a_profile_mode_tuned_refuses_is_an_error(host, scan):
    rule = scan(host(extra_files=mode("sometimes")))["by_id"]["tuned_profile"]
    assert rule["result"] == "error" and "neither auto nor manual" in str(rule["evidence"])


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
def test_oval_counts_no_active_profile_in_auto_mode(host, tmp_path):
    """OVAL cannot work the recommendation out: in auto mode it counts nothing the active
    profile sets (never a pass read from a profile that does not boot; README)."""
    auto = host(extra_files=CASES["auto on RHEL 7 server"][0])
    assert oscap_verdict(auto, "tuned_profile", tmp_path / "auto", BASELINE_SETS) == "fail"
    manual = host(extra_files=CASES["manual on RHEL 9"][0])
    assert oscap_verdict(manual, "tuned_profile", tmp_path / "manual", BASELINE_SETS) == "pass"
