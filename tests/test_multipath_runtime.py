"""Path grouping as the kernel has it (issue 23, "Path grouping as multipathd decides it"):
dmsetup's table and status of each multipath map decide over the model of multipath.conf
wherever they were recorded. Lines as drivers/md/dm-mpath.c's multipath_status writes them
(STATUSTYPE_TABLE, STATUSTYPE_INFO) for the service-time selector (table args 2, info args 2)."""

from __future__ import annotations

import pytest

from sascheck.scanner.parsers.dm_multipath import DmTableError, parse_status, parse_tables

from .support.hosts import BASELINE_SETS
from .support.oscap import oscap_available, oscap_verdict

TABLE = "/run/sascheck/dmsetup-table"
STATUS = "/run/sascheck/dmsetup-status"
# The baseline host's maps: mpatha over sdb..sde (8:32 8:48 8:64 8:80), mpathb over sdf..sdi.
A_PATHS, B_PATHS = ["8:32", "8:48", "8:64", "8:80"], ["8:96", "8:112", "8:128", "8:144"]


def table_line(name: str, groups: list[list[str]], handler: str = "") -> str:
    hwh = f"1 {handler}" if handler else "0"
    body = " ".join(f"service-time 0 {len(g)} 2 " + " ".join(f"{p} 1 1" for p in g)
                    for g in groups)
    return f"{name}: 0 1048576000 multipath 1 queue_if_no_path {hwh} {len(groups)} 1 {body}\n"


def status_line(name: str, groups: list[list[str]], failed: tuple[str, ...] = ()) -> str:
    body = " ".join(
        f"{'A' if i == 0 else 'E'} 0 {len(g)} 2 " + " ".join(
            f"{p} {'F' if p in failed else 'A'} {1 if p in failed else 0} 0 1" for p in g)
        for i, g in enumerate(groups))
    return f"{name}: 0 1048576000 multipath 2 0 0 0 {len(groups)} 1 {body}\n"


def test_parser_reads_groups_handler_and_failed_paths():
    groups = [A_PATHS[:2], A_PATHS[2:]]
    maps = parse_tables("mpathz: 0 8 linear 8:0 0\n" + table_line("mpatha", groups, "alua"))
    parse_status(status_line("mpatha", groups, failed=("8:80",)), maps)
    assert list(maps) == ["mpatha"]  # other targets are passed over
    assert maps["mpatha"].hw_handler == "alua"
    assert [g.paths for g in maps["mpatha"].groups] == groups
    assert [g.state for g in maps["mpatha"].groups] == ["A", "E"]
    assert maps["mpatha"].groups[1].failed == ["8:80"]


@pytest.mark.parametrize("line", ["mpatha: 0 8 multipath 1 queue_if_no_path 0 2 1 x",
                                  "mpatha: 0 8 multipath 99999999 a"])
def test_a_malformed_table_is_an_error_with_its_line(line):
    with pytest.raises(DmTableError, match="line 1"):
        parse_tables(line + "\n")


CASES = {
    # multipath.conf says multibus, but the kernel holds one path per group: failover wins
    "running failover under a multibus configuration": (
        [[p] for p in A_PATHS], "", (), "fail", "4 path groups (1+1+1+1 paths)"),
    "one group of every path": ([A_PATHS], "", (), "pass", "1 path group of 4 paths"),
    "ALUA groups by priority": ([A_PATHS[:2], A_PATHS[2:]], "alua", (), "pass",
                                "2 path groups (2+2 paths)"),
    "a failed path": ([A_PATHS], "", ("8:64",), "fail", "failed paths: sdd"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_kernels_grouping_decides(host, scan, name):
    groups, handler, failed, expected, actual = CASES[name]
    files = {TABLE: table_line("mpatha", groups, handler) + table_line("mpathb", [B_PATHS]),
             STATUS: status_line("mpatha", groups, failed) + status_line("mpathb", [B_PATHS])}
    rule = scan(host(extra_files=files))["by_id"]["multipath_all_paths_active"]
    assert rule["result"] == expected, rule
    item = next(e for e in rule["evidence"] if e["subject"].startswith("dm-1"))
    assert item["actual"] == actual
    assert item["source"].startswith(TABLE)


def test_an_unparsable_table_is_an_error(host, scan):
    root = host(extra_files={TABLE: "mpatha: 0 8 multipath 1\n"})
    assert scan(root)["by_id"]["multipath_all_paths_active"]["result"] == "error"


def test_group_by_tpg_uses_every_path_of_the_best_port_group(host, scan):
    # multipath-tools 0.9.6: group_by_tpg groups ALUA paths by target port group
    conf = "overrides {\n\tpath_grouping_policy group_by_tpg\n}\n"
    rule = scan(host(extra_files={"/etc/multipath.conf": conf}))["by_id"][
        "multipath_all_paths_active"]
    assert rule["result"] == "pass"
    assert {e["actual"] for e in rule["evidence"]} == {"path_grouping_policy group_by_tpg"}


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
def test_oscap_reads_the_configuration_only(host, scan, tmp_path):
    """OVAL cannot ask the kernel (README: a listed difference): it judges multipath.conf."""
    groups = [[p] for p in A_PATHS]
    root = host(extra_files={TABLE: table_line("mpatha", groups), STATUS: status_line(
        "mpatha", groups)})
    theirs = oscap_verdict(root, "multipath_all_paths_active", tmp_path / "work", BASELINE_SETS)
    assert (scan(root)["by_id"]["multipath_all_paths_active"]["result"], theirs) == ("fail", "pass")


def access_states(states: dict[str, str]) -> dict[str, str]:
    """Each path's ALUA state as the kernel shows it (device/access_state, written by
    drivers/scsi/scsi_sysfs.c sdev_show_access_state: the state's name and a newline)."""
    return {f"/sys/block/{name}/device/access_state": f"{state}\n"
            for name, state in states.items()}


MIXED = access_states({"sdb": "active/optimized", "sdc": "active/optimized",
                       "sdd": "active/non-optimized", "sde": "active/non-optimized"})
OPTIMIZED = access_states({name: "active/optimized" for name in ("sdb", "sdc", "sdd", "sde")})
MULTIBUS = {"/etc/multipath.conf": "overrides {\n\tpath_grouping_policy multibus\n}\n"}


@pytest.mark.parametrize(("states", "expected"), [(MIXED, "fail"), (OPTIMIZED, "pass")],
                         ids=["mixed", "all optimized"])
def test_one_running_group_that_mixes_alua_states_fails(host, scan, states, expected):
    """Issue 35: multibus forced on an ALUA array puts I/O on its non-optimized paths."""
    files = {TABLE: table_line("mpatha", [A_PATHS], "alua") + table_line("mpathb", [B_PATHS]),
             STATUS: status_line("mpatha", [A_PATHS]) + status_line("mpathb", [B_PATHS]),
             **states}
    rule = scan(host(extra_files=files))["by_id"]["multipath_all_paths_active"]
    assert rule["result"] == expected, rule
    item = next(e for e in rule["evidence"] if e["subject"].startswith("dm-1"))
    if expected == "fail":
        assert item["actual"] == ("a path group of 2 active/optimized and 2 "
                                  "active/non-optimized paths")
        assert "group_by_prio" in item["note"]


@pytest.mark.parametrize(("states", "expected"), [(MIXED, "fail"), (OPTIMIZED, "pass")],
                         ids=["mixed", "all optimized"])
def test_multibus_in_the_configuration_over_mixed_alua_states_fails(host, scan, states,
                                                                     expected):
    rule = scan(host(extra_files={**MULTIBUS, **states}))["by_id"]["multipath_all_paths_active"]
    assert rule["result"] == expected, rule
    if expected == "fail":
        assert any("multibus over 2 active/optimized" in e["actual"] for e in rule["evidence"])


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
@pytest.mark.parametrize(("states", "expected"), [(MIXED, "fail"), (OPTIMIZED, "pass")],
                         ids=["mixed", "all optimized"])
def test_oscap_fails_multibus_over_mixed_alua_states(host, tmp_path, states, expected):
    root = host(extra_files={**MULTIBUS, **states})
    assert oscap_verdict(root, "multipath_all_paths_active", tmp_path / "work",
                         BASELINE_SETS) == expected
