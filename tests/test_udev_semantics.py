"""udev rules as udev runs them (issue 23, "udev GOTO as udev runs it"): a rule whose
matches all hold jumps to its LABEL (systemd src/udev/udev-rules.c: a GOTO is resolved to the
next LABEL of that name in the same file, else ignored), so an unconditional GOTO leaves the
rules up to its LABEL to the devices that jumped there, and a guard skips every device its
matches hold for. A rule counts for io_tuning_at_boot only where it can reach a SAS device."""

from __future__ import annotations

from pathlib import Path

import pytest

from sascheck.scanner.parsers.udev_rules import parse_udev_rules

from .support.hosts import BASELINE_SETS, sas_host
from .support.oscap import oscap_available, oscap_verdict
from .test_parity import _compare

# mdadm's udev-md-raid-assembly.rules (installed as 64-md-raid-assembly.rules) as the
# md-raid-utilities/mdadm repository has it (commit 08dca0d9), BINDIR left unsubstituted.
MDADM_ASSEMBLY = (Path(__file__).parent / "data/udev/64-md-raid-assembly.rules").read_text()


def _disk(signature: str) -> dict[str, str]:
    return {"ACTION": "add", "SUBSYSTEM": "block", "KERNEL": "sdb", "ENV{DEVTYPE}": "disk",
            "ENV{ID_FS_TYPE}": signature, "ENV{ANACONDA}": "", "ENV{SYSTEMD_READY}": "",
            "ENV{nodmraid}": "", "ENV{noiswmd}": ""}


def test_mdadms_assembly_rules_reach_only_array_members():
    rules = parse_udev_rules(MDADM_ASSEMBLY)
    incremental = next(r for r in rules if "--incremental" in str(r.pairs))
    for member in ("linux_raid_member", "ddf_raid_member", "isw_raid_member"):
        assert incremental.may_reach(_disk(member)), member
    for other in ("xfs", "LVM2_member", ""):
        assert not incremental.may_reach(_disk(other)), other
    # the unconditional GOTO="md_inc_end" leaves nothing reachable between it and md_inc
    lines = [r.line for r in rules]
    assert all(not (lines[i] < r.line < lines[i + 1]) for i, r in enumerate(rules[:-1]))


def test_a_goto_without_a_later_label_is_ignored():
    rules = parse_udev_rules('GOTO="nowhere"\nSUBSYSTEM=="block", ATTR{queue/scheduler}="none"\n')
    assert [r.line for r in rules] == [1, 2]
    assert rules[1].may_reach(_disk("xfs"))


SCHEDULE = 'ATTR{queue/scheduler}="deadline", ATTR{queue/read_ahead_kb}="4096"'
# Each: the rules file, whether it sets the SAS devices at boot.
SITE_RULES = {
    "a plain block rule": (f'ACTION=="add|change", SUBSYSTEM=="block", {SCHEDULE}\n', True),
    # the guard skips every device that is not an md member: the SAS LUNs are LVM PVs
    "behind an md-member guard": (
        f'ENV{{ID_FS_TYPE}}!="linux_raid_member", GOTO="sas_end"\n'
        f'ACTION=="add|change", SUBSYSTEM=="block", {SCHEDULE}\nLABEL="sas_end"\n', False),
    # disabled the way packaged rules are: an unconditional GOTO first
    "disabled by an unconditional GOTO": (
        f'GOTO="sas_end"\nACTION=="add|change", SUBSYSTEM=="block", {SCHEDULE}\n'
        'LABEL="sas_end"\n', False),
    # a two-match guard skips only the devices both hold for: the LVs still get it
    "behind a guard for multipath maps": (
        'SUBSYSTEM=="block", ENV{DM_UUID}=="mpath-*", GOTO="sas_end"\n'
        f'ACTION=="add|change", SUBSYSTEM=="block", {SCHEDULE}\nLABEL="sas_end"\n', True),
}


def _host(tmp_path, rules: str):
    # tuned's balanced profile sets neither: only the udev rule can
    return sas_host(tmp_path / "root", tuned_active="balanced",
                    extra_files={"/etc/udev/rules.d/99-sas.rules": rules})


@pytest.mark.parametrize("name", sorted(SITE_RULES))
def test_a_rule_counts_only_where_it_reaches_a_sas_device(tmp_path, scan, name):
    rules, counts = SITE_RULES[name]
    rule = scan(_host(tmp_path, rules))["by_id"]["io_tuning_at_boot"]
    read_ahead = [e for e in rule["evidence"] if e["subject"] == "read-ahead"]
    assert (read_ahead[0]["result"] == "pass") == counts, rule["evidence"]
    if not counts and "guard" in name:
        refused = [e for e in rule["evidence"] if e["actual"] == "reaches no SAS device"]
        assert [e["source"] for e in refused] == ["/etc/udev/rules.d/99-sas.rules:2"]


# OVAL counts a rule whose own line says SUBSYSTEM=="block", guards or not.
UDEV_DIFFERENCES = {"behind an md-member guard": ("fail", "pass"),
                    "disabled by an unconditional GOTO": ("fail", "pass")}


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
@pytest.mark.parametrize("name", sorted(SITE_RULES))
def test_oscap_on_guarded_rules(tmp_path, scan, name):
    root = _host(tmp_path, SITE_RULES[name][0])
    expected = UDEV_DIFFERENCES.get(name)
    if expected is None:
        _compare(name, root, BASELINE_SETS, tmp_path / "work")
        return
    theirs = oscap_verdict(root, "io_tuning_at_boot", tmp_path / "work", BASELINE_SETS)
    assert (scan(root)["by_id"]["io_tuning_at_boot"]["result"], theirs) == expected
