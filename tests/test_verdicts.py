"""Every rule passes on the compliant baseline and fails (or is n/a) when one thing changes."""

from __future__ import annotations

import pytest

from .support.hosts import BASELINE_NOT_PASSING, BASELINE_OUTSIDE_DEFAULT
from .support.verdict_cases_boot import BOOT_CASES
from .support.verdict_cases_runtime import RUNTIME_CASES


def test_baseline_passes_every_rule(host, scan, catalogue):
    """Every rule of the catalogue passes on the baseline host, or is listed beside it
    (tests/support/hosts.py) with the verdict it has and why."""
    result = scan(host())
    verdicts = {rule_id: rule["result"] for rule_id, rule in result["by_id"].items()}
    assert set(catalogue.rules) - set(verdicts) == set(BASELINE_OUTSIDE_DEFAULT)
    assert {rule_id: (verdict, BASELINE_NOT_PASSING.get(rule_id, ("", "not listed"))[1])
            for rule_id, verdict in verdicts.items() if verdict != "pass"} == \
        BASELINE_NOT_PASSING


# Every case, whichever module holds it (test_parity and test_snapshots run them too).
CASES = [*RUNTIME_CASES, *BOOT_CASES]


@pytest.mark.parametrize(("rule_id", "changes", "sets", "expected"),
                         [(case.rule, case.changes, case.sets, case.expected) for case in CASES],
                         ids=[case.name for case in CASES])
def test_rule_verdict(host, scan, rule_id, changes, sets, expected):
    result = scan(host(**changes), *sets)
    rule = result["by_id"][rule_id]
    assert rule["result"] == expected, rule


def test_failing_device_is_named_in_evidence(host, scan):
    result = scan(host(mpath_scheduler="mq-deadline kyber [bfq] none"))
    failing = [e for e in result["by_id"]["io_scheduler"]["evidence"] if e["result"] == "fail"]
    # the two multipath maps, each under three file systems; their paths are not judged
    assert {e["subject"].split(": ")[1] for e in failing} == {"dm-1 (mpatha)", "dm-5 (mpathb)"}
    assert all(e["source"].endswith("/queue/scheduler") for e in failing)
    lvm = [e for e in result["by_id"]["io_scheduler"]["evidence"] if "sasvg-sasdata" in e["subject"]]
    assert lvm and lvm[0]["result"] == "notapplicable"  # bio-based LV: no choice


def test_read_ahead_of_a_partition_is_its_disks(tmp_path, scan):
    from tests.support.rootbuilder import RootBuilder

    root = RootBuilder(tmp_path)
    root.disk("nvme0n1", scheduler="[none] mq-deadline", read_ahead_kb=4096)
    root.partition("nvme0n1", "nvme0n1p1", 1)
    root.mount("/dev/nvme0n1p1", "/sasdata", "xfs", "rw,noatime").write_mounts()
    rule = scan(tmp_path)["by_id"]["read_ahead"]
    assert rule["result"] == "pass"
    assert "nvme0n1" in rule["evidence"][0]["subject"]
    assert rule["evidence"][0]["actual"] == "4096 KiB"


def test_md_raid_members_are_followed(tmp_path, scan):
    from tests.support.rootbuilder import RootBuilder

    root = RootBuilder(tmp_path)
    root.disk("sdb", scheduler="[mq-deadline] none").disk("sdc", scheduler="[bfq] none")
    root.md("md0", ["sdb", "sdc"], read_ahead_kb=4096)
    root.mount("/dev/md0", "/sasdata", "xfs", "rw,noatime").write_mounts()
    rule = scan(tmp_path)["by_id"]["io_scheduler"]
    assert rule["result"] == "fail"
    verdicts = {e["subject"]: e["result"] for e in rule["evidence"]}
    assert verdicts == {"/sasdata: md0": "notapplicable", "/sasdata: sdb": "pass",
                        "/sasdata: sdc": "fail"}


def test_md_raid0_is_striped_and_a_partition_is_not(tmp_path, scan):
    from tests.support.rootbuilder import RootBuilder

    root = RootBuilder(tmp_path)
    root.disk("sdb").disk("sdc").disk("sdd").partition("sdd", "sdd1", 1)
    root.md("md0", ["sdb", "sdc"], chunk_kib=256)
    root.mount("/dev/md0", "/saswork", "xfs", "rw,noatime")
    root.mount("/dev/sdd1", "/sasdata", "xfs", "rw,noatime").write_mounts()
    result = scan(tmp_path, "sas_work_dirs=/saswork", "sas_bufsize_bytes=262144")
    striped = {e["subject"]: (e["result"], e["actual"])
               for e in result["by_id"]["sas_volume_striped"]["evidence"]}
    assert striped == {"/saswork (WORK) on md0": ("pass", "2 stripes of 256 KiB"),
                       "/sasdata (DATA) on sdd": ("fail", "not striped (1 device below)")}
    bufsize = result["by_id"]["sas_bufsize_matches_stripe"]
    assert bufsize["result"] == "pass"
    sources = {e["subject"]: (e["result"], e["source"]) for e in bufsize["evidence"]}
    assert sources["/saswork (WORK) on md0"] == ("pass", "site value sas_bufsize_bytes")
    assert sources["/sasdata (DATA) on sdd"][0] == "notapplicable"  # no stripe unit


def test_stripe_hints_a_lun_publishes_for_itself_are_not_a_stripe(tmp_path, scan):
    """A linear LV over one LUN inherits the array's hints (here 8 KiB and 1 MiB): 128
    "stripes" over one device are the LUN's own preference, not a volume's layout."""
    from tests.support.rootbuilder import RootBuilder

    root = RootBuilder(tmp_path)
    root.disk("sdb")
    root.dm("dm-0", "sasvg-sasdata", ["sdb"])
    root.file("/sys/devices/virtual/block/dm-0/queue/minimum_io_size", "8192\n")
    root.file("/sys/devices/virtual/block/dm-0/queue/optimal_io_size", "1048576\n")
    root.mount("/dev/mapper/sasvg-sasdata", "/sasdata", "xfs", "rw,noatime").write_mounts()
    rule = scan(tmp_path)["by_id"]["sas_volume_striped"]
    assert rule["result"] == "fail"
    assert rule["evidence"][0]["actual"] == "not striped (1 device below)"


def test_a_multipath_map_is_one_lun_whatever_its_paths(tmp_path, scan):
    """Four paths to one LUN publish no stripe: a file system on the map is not striped."""
    from tests.support.rootbuilder import RootBuilder

    root = RootBuilder(tmp_path)
    for path in ("sdb", "sdc", "sdd", "sde"):
        root.disk(path, vendor="XtremIO", model="XtremApp")
    root.dm("dm-0", "mpatha", ["sdb", "sdc", "sdd", "sde"], uuid="mpath-3600" + "0" * 28,
            scheduler="[mq-deadline] none")
    root.mount("/dev/mapper/mpatha", "/sasdata", "xfs", "rw,noatime").write_mounts()
    rule = scan(tmp_path)["by_id"]["sas_volume_striped"]
    assert rule["result"] == "fail"
    assert rule["evidence"][0]["actual"] == "not striped (1 device below)"


def test_xtremio_profile_is_stricter(host, scan):
    result = scan(host(path_scheduler="[none] mq-deadline", mpath_scheduler="[mq-deadline] none"),
                  profile="xtremio")
    assert result["values"]["read_ahead_min_kb"] == 16384
    assert result["by_id"]["read_ahead"]["result"] == "fail"
    assert result["by_id"]["io_scheduler"]["result"] == "fail"
    flash = scan(host(read_ahead_kb=16384, path_scheduler="[none] mq-deadline",
                      mpath_scheduler="[none] mq-deadline"), profile="xtremio")
    assert flash["by_id"]["read_ahead"]["result"] == "pass"
    assert flash["by_id"]["io_scheduler"]["result"] == "pass"


def test_kvm_host_wants_thp_on(host, scan):
    on = scan(host(thp_enabled="[always] madvise never"), role="kvm_host")
    assert on["by_id"]["thp_enabled_on_kvm_host"]["result"] == "pass"
    assert on["by_id"]["thp_disabled"]["result"] == "notapplicable"
    off = scan(host(), role="kvm_host")
    assert off["by_id"]["thp_enabled_on_kvm_host"]["result"] == "fail"
