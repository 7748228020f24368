"""Verdicts as the kernel, tuned and the SAS engine behave, beyond the verdict tables of
tests/test_verdicts.py: what the evidence says, so an administrator sees why (issue 23)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .support.boot_samples import (
    KTUNE_SAS_XTREMIO,
    TUNED02_FIXTURES,
    rhel6_ktune,
    tuned02_installed,
    tuned_version_file,
)
from .support.hosts import BASELINE_SETS
from .support.oscap import oscap_available, oscap_verdict
from .support.remedy import generate, run_bash
from .support.verdict_hosts import RHEL6_KTUNE, SITE_PROFILE, sas_cfg, udev_block
from .test_parity import _compare


def _notes(rule: dict) -> list[str]:
    return [item["note"] for item in rule["evidence"] if item.get("note")]


def test_defrag_is_moot_when_thp_is_never(host, scan):
    # mm/huge_memory.c: with enabled never no huge page is allocated, so defrag never runs.
    root = host(thp_enabled="always madvise [never]",
                thp_defrag="always defer defer+madvise [madvise] never")
    rule = scan(root)["by_id"]["thp_defrag_disabled"]
    assert rule["result"] == "pass"
    assert rule["actual"] == "madvise (moot: THP enabled is never)"
    defrag = rule["evidence"][0]
    assert (defrag["result"], defrag["actual"]) == ("informational", "madvise")


def test_ktune_line_order_decides_and_an_undefined_function_is_named(host, scan):
    script = KTUNE_SAS_XTREMIO.replace(
        "echo never > /sys/kernel/mm/redhat_transparent_hugepage/enabled",
        "set_transparent_hugepages never")
    # tuned v0.2.22's tune-profiles/functions (the host's own) has no such function.
    root = host(**{**RHEL6_KTUNE, "extra_files": rhel6_ktune(script)[0]})
    rule = scan(root)["by_id"]["thp_disabled_at_boot"]
    assert rule["result"] == "fail"
    enabled = rule["evidence"][0]
    assert enabled["subject"] == "THP enabled after boot"
    assert ("calls set_transparent_hugepages, which /etc/tune-profiles/functions does not "
            "define") in enabled["note"]
    # defrag, written never by the same start(), is judged since enabled is not never
    defrag = rule["evidence"][1]
    assert (defrag["result"], defrag["source"]) == ("pass", "/etc/ktune.d/tunedadm.sh:9")


@pytest.mark.parametrize("functions", ["1.0", None], ids=["host's 1.0 functions", "no file"])
def test_rhel6_set_transparent_hugepages_writes_its_value(host, scan, functions):
    """RHEL 6 ships tuned's 1.0 branch: set_transparent_hugepages VALUE writes VALUE (commit
    355fd87). Seed 003's own line then keeps THP off; stock enterprise-storage's
    set_transparent_hugepages always turns it on at every boot, over the command line
    (Red Hat solution 422283). Without the host's functions file, the 1.0 branch's stand."""
    seed = KTUNE_SAS_XTREMIO.replace(
        "echo never > /sys/kernel/mm/redhat_transparent_hugepage/enabled",
        "set_transparent_hugepages never")
    files, links = rhel6_ktune(seed, "sas-xtremio", functions)
    root = host(**{**RHEL6_KTUNE, "extra_files": files, "extra_links": links})
    rule = scan(root)["by_id"]["thp_disabled_at_boot"]
    assert rule["result"] == "pass", rule
    assert rule["evidence"][0]["source"] == "/etc/ktune.d/tunedadm.sh:8"
    stock = (TUNED02_FIXTURES / "enterprise-storage-ktune.sh-1.0").read_text()
    root = host(**{**RHEL6_KTUNE, "extra_files": rhel6_ktune(stock, functions=functions)[0]})
    rule = scan(root)["by_id"]["thp_disabled_at_boot"]
    assert rule["result"] == "fail"
    assert (rule["evidence"][0]["actual"], rule["evidence"][0]["source"]) == (
        "always", "/etc/ktune.d/tunedadm.sh:7")


def test_ktune_echo_never_is_the_source_shown(host, scan):
    root = host(**{**RHEL6_KTUNE, "extra_files": rhel6_ktune(KTUNE_SAS_XTREMIO)[0]})
    rule = scan(root)["by_id"]["thp_disabled_at_boot"]
    assert rule["result"] == "pass"
    assert [(e["source"], e["actual"]) for e in rule["evidence"]] == [
        ("/etc/ktune.d/tunedadm.sh:8", "never"), ("/etc/ktune.d/tunedadm.sh:9", "never")]


def test_bufsize_nesting_in_a_unit_passes_with_the_slides_note(host, scan):
    rule = scan(host(sas_local_cfg=sas_cfg("16K")))["by_id"]["sas_bufsize_matches_stripe"]
    assert rule["result"] == "pass"
    notes = _notes(rule)
    assert notes and all("lie inside a unit" in note and "match the stripe unit (64 KiB)" in note
                         for note in notes)
    straddles = scan(host(sas_local_cfg=sas_cfg("24K")))["by_id"]["sas_bufsize_matches_stripe"]
    assert "set -BUFSIZE to a multiple or a divisor of 64 KiB" in _notes(straddles)[0]


def test_unset_bufsize_is_judged_as_sas_largest_page(host, scan):
    rule = scan(host(sas_local_cfg=sas_cfg(None)))["by_id"]["sas_bufsize_matches_stripe"]
    actual = rule["evidence"][0]["actual"]
    assert actual.startswith("BUFSIZE SAS's own choice, multiples of 8 KiB up to 64 KiB, "
                             "judged as 64 KiB, stripe unit 64 KiB")
    assert rule["evidence"][0]["source"] == "no -BUFSIZE set"


def test_a_sites_dirty_bytes_is_reported_with_its_source(host, scan):
    root = host(dirty_ratio=0, tuned_enabled=False, extra_files={
        "/proc/sys/vm/dirty_bytes": "4294967296\n",
        "/etc/sysctl.d/90-sas.conf": "vm.dirty_bytes = 4294967296\n"})
    result = scan(root)["by_id"]
    now, boot = result["vm_dirty_ratio"], result["dirty_ratio_at_boot"]
    assert now["actual"] == "vm.dirty_bytes = 4294967296 (reported)"
    assert [e["result"] for e in now["evidence"]] == ["informational", "pass"]
    assert boot["actual"] == ("vm.dirty_bytes = 4294967296 (/etc/sysctl.d/90-sas.conf:1; "
                              "reported)")
    assert "writing one zeroes the other" in boot["evidence"][0]["note"]


def test_noop_on_blk_mq_is_named_as_setting_nothing(host, scan):
    # block/elevator.c (elevator_change, v5.0+): only "none" is special; elevator_find looks
    # the name up among mq schedulers and their aliases, so "noop" gives -EINVAL.
    root = host(tuned_active="balanced", extra_files={"/etc/udev/rules.d/99-sas.rules": udev_block(
        'ATTR{queue/scheduler}="noop", ATTR{bdi/read_ahead_kb}="16384"')})
    rule = scan(root, "allowed_schedulers=noop,none")["by_id"]["io_tuning_at_boot"]
    refused = [e for e in rule["evidence"] if e["result"] == "informational"]
    assert [e["source"] for e in refused] == ["/etc/udev/rules.d/99-sas.rules:1"]
    assert "have no noop (the write fails with EINVAL" in refused[0]["note"]
    default = [e for e in rule["evidence"] if e["subject"] == "scheduler"
               and e["result"] == "fail"]
    assert default and default[0]["actual"] == "mq-deadline"


def test_a_site_profile_says_which_settings_made_it_count(host, scan):
    root = host(tuned_active="sas-site", tuned_custom={"sas-site": SITE_PROFILE})
    rule = scan(root)["by_id"]["tuned_profile"]
    assert rule["result"] == "pass"
    counted = {e["subject"]: (e["source"], e["actual"]) for e in rule["evidence"]
               if e["subject"].startswith("counts: ")}
    assert counted["counts: CPU governor at boot"] == ("tuned profile sas-site [cpu]",
                                                      "performance")
    assert counted["counts: vm.dirty_ratio after boot"][1] == "40"
    assert set(counted) == {"counts: CPU governor at boot", "counts: THP after boot",
                            "counts: vm.dirty_ratio after boot",
                            "counts: read-ahead and scheduler at boot"}


def test_a_guests_sockets_are_not_judged_against_its_nodes(host, scan, tmp_path):
    """In a KVM guest the domain XML makes the topology: only numa=off counts there."""
    root = host(cpus=8, sockets=2, numa_online="0", cpu_flags="fpu vme de hypervisor")
    guest = scan(root, role="kvm_guest")["by_id"]["numa_enabled"]
    assert guest["result"] == "pass"
    assert [e["result"] for e in guest["evidence"] if e["subject"] == "NUMA nodes"] == [
        "informational"]
    assert scan(root)["by_id"]["numa_enabled"]["result"] == "fail"  # as bare metal


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
def test_oscap_agrees_on_a_guests_numa(host, tmp_path):
    root = host(cpus=8, sockets=2, numa_online="0", cpu_flags="fpu vme de hypervisor")
    _compare("numa guest", root, list(BASELINE_SETS), tmp_path / "work")


def test_two_kpartx_partitions_of_one_lun_are_not_a_stripe(tmp_path, scan):
    """A dm-stripe LV over part1- and part2-mpath-<wwid> (kpartx's partitions of one
    multipath map) lands on one LUN: not striped, however its queue limits read."""
    from tests.support.rootbuilder import RootBuilder

    root = RootBuilder(tmp_path)
    wwid = "3600" + "0" * 28
    for path in ("sdb", "sdc"):
        root.disk(path, vendor="XtremIO", model="XtremApp")
    root.dm("dm-0", "mpatha", ["sdb", "sdc"], uuid=f"mpath-{wwid}",
            scheduler="[mq-deadline] none")
    for number in (1, 2):
        root.dm(f"dm-{number}", f"mpatha{number}", ["dm-0"], uuid=f"part{number}-mpath-{wwid}")
    root.dm("dm-3", "sasvg-sasdata", ["dm-1", "dm-2"], stripe_kib=64)
    root.mount("/dev/mapper/sasvg-sasdata", "/sasdata", "xfs", "rw,noatime").write_mounts()
    rule = scan(tmp_path)["by_id"]["sas_volume_striped"]
    assert rule["result"] == "fail"
    assert rule["evidence"][0]["actual"] == "not striped (1 device below)"


def test_a_guest_cannot_see_its_hosts_striping(tmp_path, scan):
    """Seed 000 §6.2's guest: the host's LVs given as virtio-blk disks. QEMU's virtio-blk
    publishes no optimal I/O size unless told (opt_io_size), so the guest's linear LV over
    vdb and vdc shows none: not checked there, with the reason (the host is judged)."""
    from tests.support.rootbuilder import RootBuilder

    root = RootBuilder(tmp_path).cpus(2, flags="fpu vme de pse tsc msr pae hypervisor")
    for disk in ("vdb", "vdc"):
        root.disk(disk, scheduler="[mq-deadline] kyber bfq none", vendor="0x1af4")
    root.dm("dm-0", "sasvg-sasdata", ["vdb", "vdc"])
    root.mount("/dev/mapper/sasvg-sasdata", "/sasdata", "xfs", "rw,noatime").write_mounts()
    rule = scan(tmp_path, role="auto")["by_id"]["sas_volume_striped"]
    assert rule["result"] == "notchecked", rule
    assert "virtio-blk disk publishes no optimal I/O size" in rule["evidence"][0]["note"]
    assert scan(tmp_path, role="bare_metal")["by_id"]["sas_volume_striped"]["result"] == "fail"
    if oscap_available():  # OVAL cannot tell a virtio disk's silence (README, OVAL differences)
        assert oscap_verdict(tmp_path, "sas_volume_striped", tmp_path.parent / "oscap",
                             list(BASELINE_SETS)) == "fail"


TUNED_2_27 = Path(__file__).resolve().parent / "data" / "tuned-2.27"


def _stock_2_27(host, version: tuple[int, int, int]):
    profile = (TUNED_2_27 / "throughput-performance" / "tuned.conf").read_text()
    return host(kernel="6.12.0-55.9.1.el10_0.x86_64", tuned_active="throughput-performance",
                tuned_custom={}, tuned_new_layout=True,
                tuned_shipped={"throughput-performance": profile},
                extra_files=tuned_version_file(version))


def test_rhel10_stock_throughput_performance_keeps_dirty_ratio_40(host, scan):
    """tuned 2.26+ writes [vm] dirty_bytes = 40% to vm.dirty_ratio (plugin_vm.py)."""
    result = scan(_stock_2_27(host, (2, 27, 0)))["by_id"]
    boot = result["dirty_ratio_at_boot"]
    assert boot["result"] == "pass", boot
    assert boot["evidence"][0]["source"] == ("tuned profile throughput-performance [vm] "
                                             "dirty_bytes = 40% (as a ratio)")
    assert result["io_tuning_at_boot"]["result"] == "pass"


def test_a_tuned_too_old_for_the_vm_options_is_named(host, scan):
    """tuned 2.25 reads dirty_bytes as an integer: "40%" sets nothing there."""
    boot = scan(_stock_2_27(host, (2, 25, 1)))["by_id"]["dirty_ratio_at_boot"]
    assert boot["result"] == "fail"
    assert "tuned 2.25.1 wants an integer there and sets nothing" in boot["evidence"][0]["note"]


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
def test_oscap_agrees_on_rhel10_stock_throughput_performance(host, tmp_path):
    _compare("rhel10 stock", _stock_2_27(host, (2, 27, 0)), list(BASELINE_SETS),
             tmp_path / "work")


def test_tuned02_profile_is_named_without_a_tuned2_lookup(host, scan):
    # tuned 0.2.22 (RHEL 6): tuned-adm writes the name to /etc/tune-profiles/active-profile
    # and links the profile's ktune files in; there is no /etc/tuned or /usr/lib/tuned chain.
    files, links = tuned02_installed("throughput-performance")
    root = host(**{**RHEL6_KTUNE, "extra_files": files, "extra_links": links})
    rule = scan(root)["by_id"]["tuned_profile"]
    assert rule["result"] == "pass"
    active = rule["evidence"][-1]
    assert (active["source"], active["actual"]) == ("/etc/tune-profiles/active-profile",
                                                    "throughput-performance")
    assert "not found" not in active["note"]


NO_THP_ARGS = "root=/dev/mapper/rhel-root ro"
THP_NEVER_ARGS = NO_THP_ARGS + " transparent_hugepage=never"
VENDOR_SYSCTL = {"/usr/lib/sysctl.d/50-vendor.conf": "vm.dirty_ratio = 20\n"}
SYSCTL_CONF = {"/etc/sysctl.conf": "vm.dirty_ratio = 20\n"}
REAPPLY_CASES = {
    # plugin_sysctl.py at v2.6.0 re-applies nothing: the profile's 40 stands
    "2.4: no reapply_sysctl yet": ((2, 4, 2), SYSCTL_CONF, "pass"),
    # v2.7.0 to v2.10.0 run `sysctl --system` (plugin_sysctl.py:53 at v2.10.0): /usr too
    "2.10: sysctl --system reads /usr/lib/sysctl.d": ((2, 10, 0), VENDOR_SYSCTL, "fail"),
    # v2.11.0 and v2.12.0: SYSCTL_CONFIG_DIRS (plugin_sysctl.py:14) lists all five
    "2.12: its own code reads /usr/lib/sysctl.d": ((2, 12, 0), VENDOR_SYSCTL, "fail"),
    # v2.13.0 (commit 14053bc): /run and /etc only
    "2.13: /usr/lib/sysctl.d is not re-applied": ((2, 13, 0), VENDOR_SYSCTL, "pass"),
    "2.13: sysctl.conf is re-applied": ((2, 13, 0), SYSCTL_CONF, "fail"),
    # no version.py: taken as a current tuned
    "unknown version": (None, VENDOR_SYSCTL, "pass"),
}


@pytest.mark.parametrize("name", sorted(REAPPLY_CASES))
def test_reapply_sysctl_as_each_tuned_version_runs_it(host, scan, name):
    """tuned's profile sets vm.dirty_ratio 40 at boot; what tuned then applies again over it
    depends on its version (tuned's plugin_sysctl.py at each tag)."""
    version, files, expected = REAPPLY_CASES[name]
    extra = {**files, **(tuned_version_file(version, "python2.7") if version else {})}
    rule = scan(host(extra_files=extra), *BASELINE_SETS)["by_id"]["dirty_ratio_at_boot"]
    assert rule["result"] == expected, rule


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
def test_oval_fails_what_tuned_2_10_puts_back(host, tmp_path):
    """OVAL does not read tuned's version, but it asks every system file that sets the key
    to agree with the site value (README: it cannot sort files by name), so it fails the
    tuned 2.10 host whose /usr/lib/sysctl.d file `sysctl --system` puts back, as the
    scanner does."""
    version, files, expected = REAPPLY_CASES["2.10: sysctl --system reads /usr/lib/sysctl.d"]
    root = host(extra_files={**files, **tuned_version_file(version, "python2.7")})
    assert oscap_verdict(root, "dirty_ratio_at_boot", tmp_path / "work",
                         list(BASELINE_SETS)) == expected == "fail"


@pytest.mark.parametrize(("version", "expected"), [((2, 3, 0), "fail"), ((2, 4, 0), "pass")])
def test_readahead_modifier_needs_tuned_2_4(host, scan, version, expected):
    """RHEL 7.0's tuned 2.3 hands throughput-performance's "readahead=>4096" to _parse_ra,
    whose int() refuses it: the > modifier comes in v2.4.0's base._check_and_save_value."""
    rule = scan(host(extra_files=tuned_version_file(version, "python2.7")),
                *BASELINE_SETS)["by_id"]["io_tuning_at_boot"]
    tuned = [item for item in rule["evidence"]
             if item["subject"] == "read-ahead" and "[disk]" in item["source"]]
    assert [item["result"] for item in tuned] == [expected], rule
    assert ("> and < come in tuned 2.4" in tuned[0].get("note", "")) == (expected == "fail")


READAHEAD_LINES = [((2, 3, 0), "readahead=4096"), ((2, 4, 0), "readahead=>4096")]


@pytest.mark.parametrize(("version", "line"), READAHEAD_LINES)
def test_the_fixs_tuned_profile_is_one_this_tuned_reads(host, scan, tmp_path, version, line):
    """The bash fix reads the image's tuned/version.py when it runs (here one the scan that
    wrote the script did not see) and writes ">N" only for a tuned with assignment
    modifiers (2.4+); for tuned 2.3 a plain N, which the scan then counts."""
    root = host(tuned_active="balanced")
    script = generate("bash", tmp_path / "fix.sh", root, list(BASELINE_SETS))
    for path, text in tuned_version_file(version, "python2.7").items():
        (root / path.lstrip("/")).parent.mkdir(parents=True)
        (root / path.lstrip("/")).write_text(text)
    ran = run_bash(script, root)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    written = (root / "etc/tuned/sas-performance/tuned.conf").read_text().splitlines()
    assert line in written, written
    rule = scan(root, *BASELINE_SETS)["by_id"]["io_tuning_at_boot"]
    tuned = [item for item in rule["evidence"]
             if item["subject"] == "read-ahead" and "[disk]" in item["source"]]
    assert tuned and all(item["result"] == "pass" for item in tuned), rule


@pytest.mark.parametrize(("version", "line"), READAHEAD_LINES)
def test_the_tuned_format_follows_the_scanned_release(host, tmp_path, version, line):
    """fix --format tuned writes the profile from the scan, which recorded tuned's release
    (results' host.tuned_version)."""
    root = host(tuned_active="balanced", extra_files=tuned_version_file(version, "python2.7"))
    profile = generate("tuned", tmp_path / "tuned.conf", root, list(BASELINE_SETS))
    assert line in profile.read_text().splitlines()


def _thp_profile(vm_line: str) -> str:
    """A site profile of its own, with no include: where one profile of a chain sets the
    plural option and another the alias, which tuned applies last is not modelled."""
    return f"[main]\nsummary=SAS\n\n[vm]\n{vm_line}\n"


# plugin_vm.py by release: the transparent_hugepage alias from v2.7.0 (before, an unknown
# option: nothing set); from v2.5.0 a transparent_hugepage= on /proc/cmdline wins over the
# profile, while tuned 2.4 writes the profile's value over it.
THP_CASES = {
    "2.6: the singular alias is unknown": (
        (2, 6, 0), _thp_profile("transparent_hugepage=never"), NO_THP_ARGS, "fail"),
    "2.7: the singular alias sets never": (
        (2, 7, 0), _thp_profile("transparent_hugepage=never"), NO_THP_ARGS, "pass"),
    "2.4: the profile's always overwrites the command line's never": (
        (2, 4, 0), _thp_profile("transparent_hugepages=always"), THP_NEVER_ARGS, "fail"),
    "2.5: the command line's never stands": (
        (2, 5, 0), _thp_profile("transparent_hugepages=always"), THP_NEVER_ARGS, "pass"),
}


@pytest.mark.parametrize("name", sorted(THP_CASES))
def test_thp_at_boot_as_each_tuned_release_applies_it(host, scan, name):
    version, profile, bls, expected = THP_CASES[name]
    root = host(bls_options=bls, tuned_custom={"sas-performance": profile},
                extra_files=tuned_version_file(version, "python2.7"))
    rule = scan(root)["by_id"]["thp_disabled_at_boot"]
    enabled = [item for item in rule["evidence"] if item["subject"].startswith("THP enabled")]
    assert [item["result"] for item in enabled] == [expected], rule["evidence"]


def test_rhel6_disable_disk_barriers_leaves_write_back_disks_alone(host, scan):
    """The 1.0 branch's enterprise-storage runs disable_disk_barriers, which remounts a file
    system nobarrier only where its disks report no write-back cache (functions:
    _devices_no_write_back_cache greps each disk's scsi_disk/*/cache_type, commit 64b45e8)."""
    stock = (TUNED02_FIXTURES / "enterprise-storage-ktune.sh-1.0").read_text()
    files, links = rhel6_ktune(stock, functions="1.0")
    root = host(**{**RHEL6_KTUNE, "extra_files": files, "extra_links": links})
    rule = scan(root)["by_id"]["mount_options_at_boot"]
    assert rule["result"] == "fail"
    data = next(e for e in rule["evidence"] if e["subject"].startswith("/sasdata"))
    assert "runs disable_disk_barriers, which remounts it nobarrier" in data["source"]
    # The fix switches no profile here (the stock ones without it turn THP on): a person does.
    fixed = run_bash(generate("bash", root.parent / "fix.sh", root, BASELINE_SETS), root)
    assert fixed.returncode == 3 and "runs disable_disk_barriers" in fixed.stdout
    assert (root / "etc/ktune.d/tunedadm.sh").resolve().parent.name == "enterprise-storage"
    for disk in ("sdb", "sdc"):  # the array's LUNs under the SAS volume group
        scsi = (root / "sys/block" / disk).resolve() / "device/scsi_disk/1:0:0:0"
        scsi.mkdir(parents=True)
        (scsi / "cache_type").write_text("write back\n")  # sd.c's cache_type_show
    rule = scan(root)["by_id"]["mount_options_at_boot"]
    assert rule["result"] == "pass", rule
    data = next(e for e in rule["evidence"] if e["subject"].startswith("/sasdata"))
    assert data["source"].endswith("which leaves it: sdb, sdc report a write-back cache")
