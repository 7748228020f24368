"""Striping as the storage publishes it (issue 23, "Striping"): a LUN that a RAID array or
controller stripes publishes its strip as queue/minimum_io_size and the stripe as
optimal_io_size (Documentation/ABI/stable/sysfs-block: io_min the "preferred minimum unit
for random I/O", io_opt the "optimal unit for streaming"; MegaRAID reports strip and
stripe there), and flash reports queue/rotational 0: an NVMe device or an all-flash array
LUN needs no striping (seed 003, XtremIO Storage Tuning: no RAID groups, no striped or
concatenated LUNs)."""

from __future__ import annotations

import pytest

from .support.hosts import BASELINE_SETS
from .support.oscap import oscap_available, oscap_verdict

MAP = "sys/devices/virtual/block/dm-1"  # the one multipath LUN of sas_host(sas_luns=1)


def _lun(host, io_min: int | None = None, io_opt: int | None = None,
         rotational: int = 1, bufsize: str = "64K"):
    root = host(sas_luns=1, sas_local_cfg=f"-WORK /saswork\n-UTILLOC /sasutil\n"
                                          f"-BUFSIZE {bufsize}\n")
    queue = root / MAP / "queue"
    if io_min is not None:
        (queue / "minimum_io_size").write_text(f"{io_min}\n")
        (queue / "optimal_io_size").write_text(f"{io_opt}\n")
    (queue / "rotational").write_text(f"{rotational}\n")
    return root


def test_a_raid_luns_own_stripe_counts(host, scan):
    # an 8+1 RAID 5 set of 64 KiB strips: io_min 64 KiB, io_opt 512 KiB
    rule = scan(_lun(host, 65536, 524288))["by_id"]["sas_volume_striped"]
    assert rule["result"] == "pass"
    item = rule["evidence"][0]
    assert item["actual"] == "the LUN's RAID: 8 strips of 64 KiB"
    assert item["source"].endswith("dm-1/queue/optimal_io_size")
    assert "striped by the array or RAID controller" in item["note"]


def test_bufsize_is_judged_against_the_raid_strip(host, scan):
    rule = scan(_lun(host, 65536, 524288, bufsize="48K"))["by_id"]["sas_bufsize_matches_stripe"]
    assert rule["result"] == "fail"
    assert "stripe unit 64 KiB" in rule["evidence"][0]["actual"]


def test_a_transfer_size_hint_is_no_stripe(host, scan):
    # 4 KiB granularity and a 4 MiB optimal transfer: 1024 "strips" is no RAID set
    rule = scan(_lun(host, 4096, 4194304))["by_id"]["sas_volume_striped"]
    assert rule["result"] == "fail"


def test_an_all_flash_lun_needs_no_striping(host, scan):
    rule = scan(_lun(host, rotational=0))["by_id"]["sas_volume_striped"]
    assert rule["result"] == "notapplicable"
    assert "flash (rotational 0)" in rule["message"]
    assert "XtremIO has no RAID groups" in rule["message"]


def test_a_spinning_lun_without_hints_still_fails(host, scan):
    assert scan(_lun(host))["by_id"]["sas_volume_striped"]["result"] == "fail"


# OVAL cannot pair one device's two queue limits nor read rotational: it asks for a
# published optimal size on a volume with devices below it, and no multipath map mounted.
@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
@pytest.mark.parametrize(("changes", "ours", "theirs"), [
    ({"io_min": 65536, "io_opt": 524288}, "pass", "pass"),  # the LVs inherit the hints
    ({"rotational": 0}, "notapplicable", "fail"),
])
def test_oscap_on_array_layouts(host, scan, tmp_path, changes, ours, theirs):
    root = _lun(host, **changes)
    for lv in ("dm-2", "dm-3", "dm-4"):  # stacked limits: a linear LV takes its LUN's
        for name in ("minimum_io_size", "optimal_io_size"):
            source = root / MAP / "queue" / name
            (root / f"sys/devices/virtual/block/{lv}/queue/{name}").write_text(
                source.read_text())
    assert (scan(root)["by_id"]["sas_volume_striped"]["result"],
            oscap_verdict(root, "sas_volume_striped", tmp_path / "work", BASELINE_SETS)
            ) == (ours, theirs)
