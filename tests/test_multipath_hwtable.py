"""multipath-tools' built-in hardware table as each RHEL release ships it
(rules/multipath_hwtable.json, written by scripts/extract-hwtable from libmultipath/hwtable.c
at each version's tag of github.com/opensvc/multipath-tools), and the host's own
`multipath -t` where it was recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from sascheck.scanner import host_regex
from sascheck.scanner.sources.hostroot import HostRoot
from sascheck.scanner.storage.multipath_hwtable import (
    MAX_DEVICES,
    HwTable,
    host_table,
    rhel_release,
    shipped_table,
    table_setting,
)

from .support.boot_samples import DEBIAN_OS_RELEASE, MULTIPATH_T_094, RHEL10_OS_RELEASE

KEY = "path_grouping_policy"


def _table(release: str) -> HwTable:
    table = shipped_table(release)
    assert table is not None
    return table


# (release, vendor, product, policy): each from hwtable.c at the release's tag.
KNOWN = [
    # 0.4.9 hwtable.c:361-369: "(HITACHI|HP)" "OPEN-.*" MULTIBUS.
    ("7", "HITACHI", "OPEN-V", "multibus"),
    # 0.8.4 hwtable.c:436-441: "(HITACHI|HP)" "^OPEN-" MULTIBUS.
    ("8", "HITACHI", "OPEN-V", "multibus"),
    # 0.9.9 hwtable.c:486-490: "(HITACHI|HP|HPE)" "^OPEN-" GROUP_BY_PRIO.
    ("10", "HITACHI", "OPEN-V", "group_by_prio"),
    # 0.8.4 hwtable.c:761-766: NETAPP "LUN" GROUP_BY_PRIO (prio ontap).
    ("8", "NETAPP", "LUN C-Mode", "group_by_prio"),
    # 0.8.7 hwtable.c:355-360: XtremIO "XtremApp" MULTIBUS (seed 003's array).
    ("9", "XtremIO", "XtremApp", "multibus"),
    # 0.4.9 lists EMC "Invista" twice (hwtable.c:302 MULTIBUS, :340 FAILOVER); its find_hwe
    # stops at the first match (config.c:87 "if (ret) break;").
    ("7", "EMC", "Invista", "multibus"),
]


@pytest.mark.parametrize(("release", "vendor", "product", "policy"), KNOWN)
def test_the_shipped_table_gives_what_hwtable_c_says(release, vendor, product, policy):
    found = table_setting(_table(release), KEY, vendor, product)
    assert (found.value, found.unsure) == (policy, "")
    assert found.source.startswith(f"multipath-tools {_table(release).source.split()[1]}")


def test_every_release_has_a_table_of_real_size():
    sizes = {release: len(_table(release).entries) for release in ("6", "7", "8", "9", "10")}
    assert sizes == {"6": 59, "7": 59, "8": 112, "9": 116, "10": 123}
    assert shipped_table("5") is None


def test_an_array_no_table_knows_is_left_to_the_defaults():
    found = table_setting(_table("8"), KEY, "ACME", "Box")
    assert found.value is None and not found.unsure
    assert found.source.endswith("no entry for ACME Box")


def test_an_array_only_a_later_table_knows_is_not_judged_from_an_older_tag():
    """DellEMC PowerStore entered hwtable.c after 0.8.4 (0.9.9 hwtable.c:398-404); RHEL 8
    may carry it as a backport, so its absence from the tag proves nothing."""
    found = table_setting(_table("8"), KEY, "DellEMC", "PowerStore")
    assert found.value is None
    assert "later multipath-tools' table sets path_grouping_policy group_by_prio" in found.unsure
    assert table_setting(_table("10"), KEY, "DellEMC", "PowerStore").value == "group_by_prio"


def test_the_hosts_own_multipath_t_decides_over_the_release(tmp_path: Path):
    """Debian's 0.9.4 `multipath -t` (tests/data/multipath-tools-0.9.4) still gives
    HITACHI OPEN- multibus, and the site's ACME entry comes last, as find_hwe reads it."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/os-release").write_text(RHEL10_OS_RELEASE)
    (tmp_path / "run/sascheck").mkdir(parents=True)
    (tmp_path / "run/sascheck/multipath-t").write_text(MULTIPATH_T_094)
    table = host_table(HostRoot(str(tmp_path)))
    assert isinstance(table, HwTable) and table.match == "last_setting"
    assert len(table.entries) == 124
    assert table_setting(table, KEY, "HITACHI", "OPEN-V").value == "multibus"
    assert table_setting(table, KEY, "ACME", "Box").value == "multibus"
    (tmp_path / "run/sascheck/multipath-t").unlink()
    table = host_table(HostRoot(str(tmp_path)))
    assert isinstance(table, HwTable)
    assert table_setting(table, KEY, "HITACHI", "OPEN-V").value == "group_by_prio"


def test_a_host_of_another_family_has_no_table(tmp_path: Path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/os-release").write_text(DEBIAN_OS_RELEASE)
    reason = host_table(HostRoot(str(tmp_path)))
    assert isinstance(reason, str) and "names no RHEL release" in reason


@pytest.mark.parametrize(("files", "release"), [
    ({"os-release": 'NAME="Rocky Linux"\nID="rocky"\nID_LIKE="rhel centos fedora"\n'
                    'VERSION_ID="9.4"\n'}, "9"),
    ({"os-release": RHEL10_OS_RELEASE}, "10"),
    # RHEL 6 has no os-release (the redhat-release package of RHEL 7 brought it).
    ({"redhat-release": "Red Hat Enterprise Linux Server release 6.10 (Santiago)\n"}, "6"),
    ({"os-release": DEBIAN_OS_RELEASE}, None),
    ({}, None),
])
def test_the_release_is_read_as_the_host_names_it(tmp_path: Path, files, release):
    (tmp_path / "etc").mkdir()
    for name, text in files.items():
        (tmp_path / "etc" / name).write_text(text)
    assert rhel_release(HostRoot(str(tmp_path))) == release


@pytest.mark.parametrize(("os_release", "match"), [
    ('ID="rhel"\nVERSION_ID="6.10"\n', "first"), (RHEL10_OS_RELEASE, "last_setting")])
def test_a_recorded_table_is_matched_as_the_releases_find_hwe_does(tmp_path: Path,
                                                                 os_release, match):
    """RHEL 6 and 7 ship 0.4.9, whose find_hwe stops at the first match (config.c:87)."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/os-release").write_text(os_release)
    (tmp_path / "run/sascheck").mkdir(parents=True)
    (tmp_path / "run/sascheck/multipath-t").write_text(MULTIPATH_T_094)
    table = host_table(HostRoot(str(tmp_path)))
    assert isinstance(table, HwTable) and table.match == match


def test_an_unreadable_recorded_table_is_said_where_the_releases_is_used(tmp_path: Path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/os-release").write_text(RHEL10_OS_RELEASE)
    (tmp_path / "run/sascheck").mkdir(parents=True)
    (tmp_path / "run/sascheck/multipath-t").write_text("devices {\n\tdevice {\n")
    table = host_table(HostRoot(str(tmp_path)))
    assert isinstance(table, HwTable)
    assert table.source.startswith("/run/sascheck/multipath-t: ")
    assert "multipath-tools 0.9.9's built-in table" in table.source


def _hostile_table(count: int) -> str:
    """Issue 44: entries whose vendor RE2 refuses only after building a large program
    (\\pL{1000}: every letter, a thousand times), each a little different."""
    return "devices {\n" + "".join(
        f'\tdevice {{\n\t\tvendor "\\pL{{1000}}N{index}"\n\t\tproduct ".*"\n'
        '\t\tpath_grouping_policy "multibus"\n\t}\n' for index in range(count)) + "}\n"


@pytest.fixture()
def compiles(monkeypatch) -> list[str]:
    """Every expression RE2 is asked to compile (the cost of a hostile table: 45 ms each to
    refuse \\pL{1000}), counted instead of timed."""
    seen: list[str] = []
    real = host_regex.re2.compile

    def counted(pattern: str, options: object = None) -> object:
        seen.append(pattern)
        return real(pattern, options)
    monkeypatch.setattr(host_regex.re2, "compile", counted)
    host_regex._compile_small.cache_clear()
    host_regex._large.clear()
    return seen


def test_a_recorded_table_of_thousands_of_entries_is_not_read(tmp_path: Path, compiles):
    """3,000 hostile entries (140 KB, within the 4 MiB read limit) held a whole scan past
    60 s; a table many times the largest multipath-tools carries (123) is refused, said,
    and the release's table used: none of its expressions is compiled."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/os-release").write_text(RHEL10_OS_RELEASE)
    (tmp_path / "run/sascheck").mkdir(parents=True)
    (tmp_path / "run/sascheck/multipath-t").write_text(_hostile_table(3000))
    host_regex.begin_scan()
    table = host_table(HostRoot(str(tmp_path)))
    assert isinstance(table, HwTable)
    assert table.source.startswith("/run/sascheck/multipath-t: 3000 devices, more than")
    assert table_setting(table, KEY, "XtremIO", "XtremApp").value == "multibus"
    assert not any("pL" in pattern for pattern in compiles)


def test_a_hostile_expression_is_compiled_once_and_large_ones_are_budgeted(
        tmp_path: Path, compiles):
    """Within the cap, each refused expression was compiled again on every lookup (an
    lru_cache forgets what raised); now once, and only LARGE_COMPILES of them may be
    tried as a large program in one scan."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/os-release").write_text(RHEL10_OS_RELEASE)
    (tmp_path / "run/sascheck").mkdir(parents=True)
    (tmp_path / "run/sascheck/multipath-t").write_text(_hostile_table(MAX_DEVICES))
    host_regex.begin_scan()
    table = host_table(HostRoot(str(tmp_path)))
    assert isinstance(table, HwTable) and len(table.entries) == MAX_DEVICES
    for product in ("XtremApp", "OPEN-V", "LUN", "Box", "Invista"):  # one lookup per array
        assert table_setting(table, KEY, "XtremIO", product).value is None
    hostile = [pattern for pattern in compiles if "pL" in pattern]
    assert len(set(hostile)) == MAX_DEVICES  # each vendor expression tried ...
    assert len(hostile) == MAX_DEVICES + host_regex.LARGE_COMPILES  # ... once, a few twice
