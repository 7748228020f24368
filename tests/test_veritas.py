"""The SAS / Veritas / EMC paper's host (seed 003), laid out as a root: RHEL 6.7, Veritas
Cluster File Systems on VxVM volumes over DMP on XtremIO LUNs, the paper's udev rules, its
custom tuned 0.2 profile, UTILLOC inside SASWORK. Scanned with --profile xtremio, each rule
says what the paper's configuration does; oscap agrees where the README says it can."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .support.boot_samples import (
    KTUNE_SAS_XTREMIO_PAPER,
    SAS_XTREMIO_KTUNE_SYSCONFIG,
    SAS_XTREMIO_SYSCTL_KTUNE,
    rhel6_ktune,
)
from .support.hosts import SasFs, sas_host
from .support.oscap import oscap_available
from .support.remedy import generate, run_bash
from .test_parity import _compare

KERNEL = "2.6.32-573.8.1.el6.x86_64"
# /proc/mounts for a VxCFS mount the paper made "with noatime/nodiratime options": the
# kernel prints the generic flags first (fs/proc_namespace.c, show_mnt_opts), then the
# mount_vxfs(1M) options the cluster mount reports.
VXCFS_OPTIONS = "rw,noatime,nodiratime,delaylog,largefiles,ioerror=mwdisable,cluster,crw"
# The paper's udev rules, one per line as udev reads them.
XTREMIO_RULES = (
    'ACTION=="add|change", SUBSYSTEM=="block",ENV{ID_VENDOR}=="XtremIO",'
    'ATTR{queue/scheduler}="noop"\n'
    'ACTION=="add|change", SUBSYSTEM=="block",ENV{ID_VENDOR}=="XtremIO",'
    'ATTR{bdi/read_ahead_kb}="16384"\n')
SETS = ("sas_data_dirs=/sasdata", "sas_work_dirs=/saswork", "sas_utilloc_dirs=/saswork/utilloc")


def paper_host(root: Path, script: str = KTUNE_SAS_XTREMIO_PAPER, **changes: Any) -> Path:
    """Two of the paper's VxCFS file systems on one node: XtremIO paths (sd devices that DMP
    groups) and the VxVM volumes mounted from /dev/vx/dsk/sasdg; ``script`` is its tuned
    profile's ktune.sh."""
    # RHEL 6.7's tuned is the 1.0 branch: its functions define set_transparent_hugepages.
    files, links = rhel6_ktune(script, "sas-xtremio", functions="1.0")
    return sas_host(
        root, kernel=KERNEL, rhel6_thp=True, cpus=48, sockets=2, numa_online="0-1",
        bls_options=None, grub_cmdline=None, tuned_active=None, defrag_tmpfiles=False,
        path_scheduler="[noop] anticipatory deadline cfq",
        mpath_scheduler="[noop] anticipatory deadline cfq", read_ahead_kb=16384,
        filesystems=[SasFs(lv, point, fstype="vxfs", options=VXCFS_OPTIONS,
                           source=f"/dev/vx/dsk/sasdg/{lv}", fstab=None)
                     for lv, point in (("sasdata", "/sasdata"), ("saswork", "/saswork"))],
        sas_local_cfg=None,
        extra_files={**files, "/etc/udev/rules.d/99-xtremio.rules": XTREMIO_RULES,
                     "/etc/sysctl.ktune": SAS_XTREMIO_SYSCTL_KTUNE,
                     "/etc/sysconfig/ktune": SAS_XTREMIO_KTUNE_SYSCONFIG,
                     "/saswork/utilloc/.keep": ""},
        extra_links=links, **changes)


# What the paper's configuration does, rule by rule (sascheck's verdict on it).
PAPER_VERDICTS = {
    "sas_fs_type": "pass",  # vxfs counts in the xtremio profile
    "sas_dirs_separate": "pass",  # DATA apart; UTILLOC inside SASWORK is allowed there
    "io_scheduler": "pass",  # noop on every XtremIO LUN
    "read_ahead": "pass",  # 16384 KiB on every LUN; VxFS's own noted, not judged
    "io_tuning_at_boot": "pass",  # the paper's udev rules
    "barrier_requires_protected_cache": "pass",
    "cpu_dma_latency": "pass",  # pmqos-static.py cpu_dma_latency=1 in ktune
    "multipath_all_paths_active": "notapplicable",  # DMP, no dm-multipath map
    "sas_fs_noatime": "pass",  # mounted noatime,nodiratime
    # its own profile: the performance governor and THP never in ktune.sh, vm.dirty_ratio 40
    # in sysctl.ktune, read-ahead and noop by udev, as the throughput profiles give
    "tuned_profile": "pass",
    "thp_disabled_at_boot": "pass",  # ktune.sh's set_transparent_hugepages never, at boot
    "dirty_ratio_at_boot": "pass",
    # Its CVM stripes (256 KiB) live in VxVM's configuration database, which no file shows.
    "sas_volume_striped": "notchecked",
    "sas_bufsize_matches_stripe": "notchecked",
    # Its DMP paths show no wwid in this image: they cannot be grouped by LUN
    # (tests/test_xtremio_paths.py judges them where they do).
    "xtremio_paths_per_lun": "notchecked",
}


@pytest.fixture
def paper_root(tmp_path: Path) -> Path:
    return paper_host(tmp_path / "root")


def test_the_papers_host_under_the_xtremio_profile(paper_root, scan):
    result = scan(paper_root, *SETS, profile="xtremio", baseline_sets=False)
    verdicts = {rule: result["by_id"][rule]["result"] for rule in PAPER_VERDICTS}
    assert verdicts == PAPER_VERDICTS
    luns = [e["device"] for e in result["by_id"]["io_scheduler"]["evidence"]
            if e["result"] == "pass"]
    # the XtremIO paths of its two LUNs, under each file system
    assert sorted(luns) == sorted([f"sd{letter}" for letter in "bcdefghi"] * 2)
    notes = {e["subject"]: e for e in result["by_id"]["read_ahead"]["evidence"]}
    assert notes["/saswork (UTILLOC/WORK): VxFS read-ahead"]["result"] == "informational"


def test_vxfs_tunefstab_read_ahead_is_information_not_a_block_read_ahead(tmp_path, scan):
    # Issue 23: read_pref_io x read_nstream is VxFS's own read-ahead, sized to the volume's
    # stripe unit x columns (vxtunefs); the LUNs' read_ahead_kb is what seed 003 raised.
    tunefstab = ("/dev/vx/dsk/sasdg/sasdata read_pref_io=262144,read_nstream=64\n"
                 "/dev/vx/dsk/sasdg/saswork read_pref_io=262144 read_nstream=4\n")
    root = paper_host(tmp_path / "root")
    (root / "etc/vx").mkdir(parents=True)
    (root / "etc/vx/tunefstab").write_text(tunefstab)
    rule = scan(root, *SETS, profile="xtremio", baseline_sets=False)["by_id"]["read_ahead"]
    vxfs = {e["subject"].split(":")[0]: (e["result"], e["actual"]) for e in rule["evidence"]
            if "VxFS" in e["subject"]}
    assert vxfs == {
        "/sasdata (DATA)": ("informational", "read_pref_io=262144 x read_nstream=64 = 16384 KiB"),
        "/saswork (UTILLOC/WORK)": ("informational",
                                    "read_pref_io=262144 x read_nstream=4 = 1024 KiB")}
    assert rule["result"] == "pass"  # the XtremIO LUNs' read_ahead_kb decides


def test_without_the_arrays_vendor_the_luns_are_not_guessed(tmp_path, scan):
    root = paper_host(tmp_path / "root")
    rule = scan(root, *SETS, "array_vendors=PURE", profile="xtremio",
                baseline_sets=False)["by_id"]["io_scheduler"]
    assert rule["result"] == "error"
    assert "array_vendors" in rule["evidence"][0]["note"]


def test_default_profile_wants_separate_utilloc_and_no_vxfs(paper_root, scan):
    result = scan(paper_root, *SETS, baseline_sets=False)
    assert result["by_id"]["sas_fs_type"]["result"] == "fail"
    assert result["by_id"]["sas_dirs_separate"]["result"] == "fail"


def test_a_fix_keeps_the_papers_own_tuned_profile(tmp_path, scan):
    """Issue 35: the paper's profile without its set_cpu_governor line fails tuned_profile.
    tuned 0.2 cannot include a profile, so the fix keeps sas-xtremio active (its
    pmqos-static.py cpu_dma_latency=1 stays) and says what to add; nothing that passed
    fails after it."""
    root = paper_host(tmp_path / "root", KTUNE_SAS_XTREMIO_PAPER.replace(
        "\tset_cpu_governor performance\n", ""))
    before = scan(root, *SETS, profile="xtremio", baseline_sets=False)
    assert before["by_id"]["tuned_profile"]["result"] == "fail"
    assert before["host"]["tuned_site_profile"] == "sas-xtremio"
    fix = generate("bash", tmp_path / "fix.sh", root, list(SETS), ["--profile", "xtremio"])
    ran = run_bash(fix, root)
    assert "sas-xtremio is the site's own tuned profile: kept" in ran.stderr
    assert (root / "etc/tune-profiles/active-profile").read_text() == "sas-xtremio\n"
    after = scan(root, *SETS, profile="xtremio", baseline_sets=False)
    worse = [rule for rule, outcome in before["by_id"].items()
             if outcome["result"] == "pass" and after["by_id"][rule]["result"] != "pass"]
    assert worse == []
    assert after["by_id"]["cpu_dma_latency"]["result"] == "pass"


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
def test_oscap_on_the_papers_host(paper_root, tmp_path):
    _compare("the paper's Veritas host", paper_root, list(SETS), tmp_path / "work",
             profile="xtremio")


def test_snapshots_of_the_papers_host_scan_the_same(paper_root, tmp_path, scan):
    from sascheck.scanner.sources.snapshot import opened

    from .test_snapshots import _python_collect, _script_collect

    (paper_root / "etc/vx").mkdir(parents=True)
    (paper_root / "etc/vx/tunefstab").write_text(
        "/dev/vx/dsk/sasdg/saswork read_pref_io=262144,read_nstream=64\n")
    sets = [*SETS]
    direct = scan(paper_root, *sets, profile="xtremio", baseline_sets=False)
    for archive in (_python_collect(paper_root, [*sets, "--profile=xtremio"][:3],
                                    tmp_path / "py.tar.gz"),
                    _script_collect(paper_root, tmp_path / "sh.tar.gz", tmp_path)):
        with opened(str(archive)) as extracted:
            again = scan(extracted, *sets, profile="xtremio", baseline_sets=False)
        assert {r: v["result"] for r, v in again["by_id"].items()} == {
            r: v["result"] for r, v in direct["by_id"].items()}, archive.name
        assert again["by_id"]["read_ahead"]["evidence"] == direct["by_id"]["read_ahead"]["evidence"]
