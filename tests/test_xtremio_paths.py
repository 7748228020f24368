"""XtremIO LUNs under SAS reached by at most 16 paths (seed 003 "XtremIO Storage Tuning"):
dm-multipath maps count their slaves; under Veritas DMP the XtremIO disks are grouped by the
wwid the SCSI layer shows. OVAL cannot count one map's paths: oscap says notchecked where the
rule applies, and notapplicable with the scanner where no XtremIO disk is present."""

from __future__ import annotations

import pytest

from .support.hosts import BASELINE_SETS, sas_host
from .support.oscap import oscap_available, oscap_verdict
from .test_veritas import SETS as PAPER_SETS
from .test_veritas import paper_host

RULE = "xtremio_paths_per_lun"

CASES = {
    # the baseline: two LUNs of four paths each (a host's four HBA ports, one target each)
    "four paths per LUN": ({}, "pass", ["4 paths", "4 paths"]),
    # the paper's limit: 16 is allowed
    "sixteen paths": ({"lun_paths": 16, "sas_luns": 1}, "pass", ["16 paths"]),
    "twenty paths": ({"lun_paths": 20, "sas_luns": 1}, "fail", ["20 paths"]),
}


def _rule(scan, root, *sets, profile: str = "default") -> dict:
    return scan(root, *sets, profile=profile)["by_id"][RULE]


@pytest.mark.parametrize("name", sorted(CASES))
def test_multipath_maps_count_their_paths(tmp_path, scan, name):
    changes, expected, actuals = CASES[name]
    rule = _rule(scan, sas_host(tmp_path / "root", **changes), *BASELINE_SETS)
    assert rule["result"] == expected, rule
    assert [e["actual"] for e in rule["evidence"]] == actuals
    assert all(e["source"].endswith("/slaves") for e in rule["evidence"])


def test_a_lower_site_limit_fails_four_paths(tmp_path, scan):
    rule = _rule(scan, sas_host(tmp_path / "root"), *BASELINE_SETS, "xtremio_max_paths=2")
    assert rule["result"] == "fail" and "more than 2" in rule["evidence"][0]["note"]


def test_no_xtremio_disk_is_notapplicable(tmp_path, scan):
    rule = _rule(scan, sas_host(tmp_path / "root", path_vendor="PURE"), *BASELINE_SETS)
    assert rule["result"] == "notapplicable"
    assert "XtremIO" in rule["message"]


@pytest.mark.parametrize(("changes", "expected", "actual"), [
    ({"path_wwids": True}, "pass", "4 paths"),
    ({"path_wwids": True, "lun_paths": 20}, "fail", "20 paths"),
    ({}, "notchecked", "no wwid"),
], ids=["the paper's DMP LUNs", "DMP LUNs over 20 paths", "DMP paths without wwid"])
def test_veritas_dmp_paths_are_grouped_by_wwid(tmp_path, scan, changes, expected, actual):
    rule = _rule(scan, paper_host(tmp_path / "root", **changes), *PAPER_SETS, profile="xtremio")
    assert rule["result"] == expected, rule
    assert {e["actual"] for e in rule["evidence"]} == {actual}
    if expected != "notchecked":  # the two LUNs, each once though both file systems use them
        assert len(rule["evidence"]) == 2
        assert all("naa.514f0c5" in e["subject"] for e in rule["evidence"])


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
@pytest.mark.parametrize(("changes", "expected"), [({}, "notchecked"),
                                                   ({"path_vendor": "PURE"}, "notapplicable")],
                         ids=["XtremIO present", "no XtremIO disk"])
def test_oscap_has_no_check_but_the_platform(tmp_path, changes, expected):
    root = sas_host(tmp_path / "root", **changes)
    assert oscap_verdict(root, RULE, tmp_path / "work", BASELINE_SETS) == expected
