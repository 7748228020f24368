"""detect_pgpolicy as multipathd runs it (#23): multipath-tools 0.9.6 (libmultipath/propsel.c
select_pgpolicy, at tag 0.9.6) groups a map by priority, whatever path_grouping_policy says,
when detect_pgpolicy is on (defaults.h: DEFAULT_DETECT_PGPOLICY on) and every path uses the
alua or sysfs prioritizer (verify_alua_prio), which detect_prio (on by default) picks for a
path whose INQUIRY data reports target port group support (TPGS); other paths take the
configured prioritizer (select_prio: multipaths, overrides, devices, defaults), and a
configured alua on a path without TPGS falls back to const. Whether the installed multipath-tools has the
option is read from its multipath.conf(5): the fixtures are multipath-tools' own page at tags
0.9.6 (which documents it) and 0.9.5 (which does not)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from .support.boot_samples import multipath_conf
from .support.hosts import BASELINE_SETS, sas_host
from .support.oscap import oscap_available, oscap_verdict
from .test_snapshots import _python_collect, _script_collect, _verdicts

RULE = "multipath_all_paths_active"
FIXTURES = Path(__file__).parent / "data" / "multipath"
PATHS = ("sdb", "sdc", "sdd", "sde", "sdf", "sdg", "sdh", "sdi")  # both SAS LUNs' paths
XTREMIO_FAILOVER = ('devices {\n\tdevice {\n\t\tvendor "XtremIO"\n\t\tproduct "XtremApp"\n'
                    "\t\tpath_grouping_policy failover\n\t}\n}\n")
FAILOVER_FOR_XTREMIO = multipath_conf(XTREMIO_FAILOVER)
NO_DETECT_PRIO = "\tdetect_prio no\n"


def xtremio_failover_with(prio: str) -> str:
    """The devices entry with a prioritizer named in it."""
    return XTREMIO_FAILOVER.replace("failover\n", f"failover\n\t\tprio {prio}\n")


def inquiry(tpgs: int, vendor: str = "XtremIO", product: str = "XtremApp") -> bytes:
    """A standard INQUIRY response as the kernel shows it in device/inquiry (SPC-4 6.6.2):
    a disk, SPC-4, response format 2, 91 more bytes, TPGS in byte 5 bits 4-5, CmdQue."""
    data = bytearray(96)
    data[2], data[3], data[4], data[5], data[7] = 0x06, 0x02, 91, tpgs << 4, 0x02
    data[8:16] = f"{vendor:<8}".encode()
    data[16:32] = f"{product:<16}".encode()
    data[32:36] = b"4000"
    return bytes(data)


def host(tmp_path: Path, manpage: str | None = "0.9.6", tpgs: dict[str, int] | None = None,
         conf: str = FAILOVER_FOR_XTREMIO, **changes) -> Path:
    files = {"/etc/multipath.conf": conf}
    root = sas_host(tmp_path / "root", extra_files=files, **changes)
    if manpage:  # as the RPM installs it: gzip-compressed
        page = root / "usr/share/man/man5/multipath.conf.5.gz"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_bytes(gzip.compress((FIXTURES / f"multipath.conf.5-{manpage}").read_bytes()))
    for path in PATHS:
        target = (root / "sys/block" / path / "device").resolve()
        assert target.is_relative_to(root.resolve())  # the builder's links stay in the root
        (target / "inquiry").write_bytes(inquiry((tpgs or {}).get(path, 1)))
    return root


CASES = {
    # multipath-tools 0.9.6: every path reports ALUA, so group_by_prio overrides failover
    "0.9.6, every path ALUA": ({}, "pass", "group_by_prio"),
    "0.9.6, use_tpg": ({"conf": multipath_conf(
        XTREMIO_FAILOVER, defaults="\tdetect_pgpolicy_use_tpg yes\n")}, "pass", "group_by_tpg"),
    # 0.9.5 has no detect_pgpolicy: the devices entry's failover stands
    "0.9.5": ({"manpage": "0.9.5"}, "fail", "failover"),
    # a path without TPGS: not every path of the map uses the alua prioritizer
    "0.9.6, one path of each map without ALUA": ({"tpgs": {"sdc": 0, "sdg": 0}}, "fail",
                                                  "failover"),
    "0.9.6, detect_pgpolicy no": ({"conf": multipath_conf(
        XTREMIO_FAILOVER, defaults="\tdetect_pgpolicy no\n")}, "fail", "failover"),
    # detect_prio no: the configured prioritizer decides (select_prio, propsel.c); none is
    # configured here, so only the built-in table would say, and the configuration stands
    "0.9.6, detect_prio no, no prio set": ({"conf": multipath_conf(
        XTREMIO_FAILOVER, defaults=NO_DETECT_PRIO)}, "fail", "failover"),
    "0.9.6, detect_prio no, prio alua set": ({"conf": multipath_conf(
        xtremio_failover_with("alua"), defaults=NO_DETECT_PRIO)}, "pass", "group_by_prio"),
    # prio alua on a path without TPGS falls back to const ("emergency fallback - alua failed")
    "0.9.6, detect_prio no, prio alua set, one path without ALUA": (
        {"conf": multipath_conf(xtremio_failover_with("alua"), defaults=NO_DETECT_PRIO),
         "tpgs": {"sdc": 0, "sdg": 0}}, "fail", "failover"),
    # sysfs needs no TPGS check: verify_alua_prio takes alua and sysfs alike
    "0.9.6, prio sysfs set, one path without ALUA": (
        {"conf": multipath_conf(xtremio_failover_with("sysfs")),
         "tpgs": {"sdc": 0, "sdg": 0}}, "pass", "group_by_prio"),
    # no manual page (a nodocs install): the version is not known, the configuration stands
    "no manual page": ({"manpage": None}, "fail", "failover"),
    # an array only multipath-tools' built-in table knows: ALUA decides it here
    "0.9.6, an array sascheck does not know": (
        {"conf": multipath_conf(), "path_vendor": "NETAPP", "path_model": "LUN C-Mode"},
        "pass", "group_by_prio"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_detect_pgpolicy(tmp_path, scan, name):
    changes, expected, policy = CASES[name]
    rule = scan(host(tmp_path, **changes), *BASELINE_SETS)["by_id"][RULE]
    assert rule["result"] == expected, rule
    assert {e["actual"] for e in rule["evidence"]} == {f"path_grouping_policy {policy}"}
    detected = all("detect_pgpolicy" in e["source"] for e in rule["evidence"])
    assert detected == (policy != "failover")
    if name == "0.9.5":  # the devices entry decides, named once
        assert {e["source"] for e in rule["evidence"]} == {
            "/etc/multipath.conf devices (XtremIO XtremApp)"}, rule["evidence"]


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
def test_oval_reads_only_the_configuration(tmp_path):
    """The README's difference: OVAL reads no manual page or INQUIRY data, so the devices
    entry's failover fails there."""
    root = host(tmp_path)
    assert oscap_verdict(root, RULE, tmp_path / "work", BASELINE_SETS) == "fail"


@pytest.mark.parametrize("collector", ["python", "collect.sh"])
def test_snapshots_carry_what_detect_pgpolicy_needs(tmp_path, collector):
    """Both collectors keep the manual page and the paths' INQUIRY data."""
    root = host(tmp_path)
    archive = tmp_path / "snap.tar.gz"
    if collector == "python":
        _python_collect(root, BASELINE_SETS, archive)
    else:
        _script_collect(root, archive, tmp_path)
    verdicts = _verdicts(["--snapshot", str(archive)], BASELINE_SETS, tmp_path)
    assert verdicts[RULE] == "pass"
