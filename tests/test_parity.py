"""Both engines, same verdicts: sascheck scan and oscap xccdf eval of the built data
stream, on every test root, with one tailoring file written by sascheck tailor.

Differences OVAL cannot avoid are listed in KNOWN_DIFFERENCES (and in the README) and
asserted as they are, so a change on either side shows up.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from tests.support.example_roots import EXAMPLE_VALUES, EXAMPLES

from .support.hosts import BASELINE_SETS, SasFs, sas_host
from .support.oscap import (
    BEYOND_OVAL,
    oscap_available,
    oscap_eval,
    sascheck_results,
    tailor,
)
from .test_discovery import ROLE_CASES
from .test_verdicts import CASES

pytestmark = pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")

# Nothing to judge under SAS file systems all on NFS: sascheck says notapplicable; OVAL has
# no way to (oscap evaluates CPE platforms without the profile's values, and which devices
# are SAS's is a value). io_scheduler's OVAL refuses to pass with no device judged; the
# others' tests over no device pass.
ALL_NFS_DIFFERENCES = {"io_scheduler": ("notapplicable", "fail"), **{
    rule: ("notapplicable", "pass") for rule in (
        "multipath_all_paths_active", "sas_bufsize_matches_stripe", "sas_volume_striped")}}

# case -> {rule: (sascheck result, oscap result)}; the README explains each.
KNOWN_DIFFERENCES: dict[str, dict[str, tuple[str, str]]] = {
    "scheduler: every SAS file system on NFS": ALL_NFS_DIFFERENCES,
    "striping: every SAS file system on NFS": ALL_NFS_DIFFERENCES,
    # A THP file without a [selection] is garbage: sascheck says error, OVAL finds no item.
    "thp no brackets": {"thp_disabled": ("error", "fail")},
    # A missing /proc/sys file is an incomplete snapshot for sascheck; OVAL finds no item.
    "dirty ratio missing": {"vm_dirty_ratio": ("error", "fail")},
    "swappiness missing": {"vm_swappiness": ("error", "fail")},
    # tuned's [vm] dirty_background_ratio by release (2.25 on): OVAL does not read tuned's
    # version, and the profile's highest level decides (stricter, never a false pass).
    **{f"dirty background boot: tuned {name}": {
        "dirty_background_ratio_at_boot": ("pass", "fail")}
       for name in ("2.24 ignores [vm] dirty_background_ratio = 5",
                    "2.25 applies [vm] dirty_background_ratio = 5 before [sysctl]'s 10")},
    # tuned only in graphical.target.wants on a server: nothing starts it, so the kernel's
    # background ratio 10 holds; OVAL counts a tuned that may start as setting it.
    "thp boot: tuned.service only in graphical.target.wants, a server": {
        "dirty_background_ratio_at_boot": ("pass", "fail")},
    # A tuned unit with cpuinfo_regex/uname_regex: sascheck matches it against the host, as
    # tuned does; OVAL cannot, and leaves such units out (never a false pass).
    # GRUB's default entry: sascheck judges the entry that boots; OVAL cannot pick one, so
    # every entry must have the argument (stricter: never a false pass).
    "thp boot: BLS newest entry has it, an older kernel's lacks it": {
        "thp_disabled_at_boot": ("pass", "fail")},
    "thp boot: RHEL 6 default=0 boots the kernel with it": {
        "thp_disabled_at_boot": ("pass", "fail")},
    "thp boot: RHEL 9 throughput-performance on ThunderX2": {
        "thp_disabled_at_boot": ("pass", "fail")},
    # The kernel's default scheduler: OVAL also requires a plain disk's default
    # (mq-deadline) to be allowed, where sascheck looks at the SAS devices alone.
    # Boot-time mount options: OVAL reads /etc/fstab only and finds a mount point by its name
    # as written (not with \040 for a space); a SAS file system without a line it can read
    # is not judged, so OVAL fails where sascheck says notchecked (or judges a mount unit).
    "mount point with a space, read-ahead": {"mount_options_at_boot": ("pass", "fail")},
    "shadowed by a deeper mount": {"mount_options_at_boot": ("pass", "fail")},
    "boot mounts: no fstab line (a cluster resource)": {
        "mount_options_at_boot": ("notchecked", "fail")},
    "boot mounts: noauto": {"mount_options_at_boot": ("notchecked", "fail")},
    "boot mounts: an enabled mount unit without an fstab line": {
        "mount_options_at_boot": ("pass", "fail")},
    # The example KVM host names no SAS directory and nothing sets a scheduler at boot:
    # sascheck cannot tell which devices' defaults count; OVAL judges a plain disk's.
    "kvm-host": {"io_tuning_at_boot": ("notchecked", "pass")},
    # XFS's barrier options, gone from Linux 4.19 and RHEL 8's 4.18: OVAL does not pair the
    # kernel release with the file system's type, and lifts nobarrier for a protected cache.
    "boot mounts: XFS nobarrier on RHEL 8, protected cache": {
        "mount_options_at_boot": ("fail", "pass")},
    # VxCFS mounted by the cluster (tests/test_veritas.py): no fstab line either; its VxVM
    # stripes are in VxVM's database, so sascheck cannot check them, and OVAL sees no
    # local block device to judge (sascheck follows DMP to the XtremIO LUNs; OVAL, finding
    # no scheduler under /dev/vx, refuses to pass).
    "the paper's Veritas host": {"mount_options_at_boot": ("notchecked", "fail"),
                                 "io_scheduler": ("pass", "fail"),
                                 "sas_volume_striped": ("notchecked", "pass"),
                                 "sas_bufsize_matches_stripe": ("notchecked", "pass"),
                                 # the image also has (unused) dm-multipath maps
                                 "multipath_all_paths_active": ("notapplicable", "pass")},
    # tuned's unit booleans: OVAL takes a unit as enabled only for enabled=true (every
    # release's), not knowing the release that also reads True (2.13+) and 1 (2.11+).
    "thp boot: tuned 2.25 reads [vm] enabled=True as true": {
        "thp_disabled_at_boot": ("pass", "fail")},
    # A unit with replace=true drops what the profiles it includes set: OVAL reads each
    # profile's lines and does not model the merge (a false pass in OVAL, listed).
    "dirty boot: a site [sysctl] replace=true drops the parent's 40": {
        "dirty_ratio_at_boot": ("fail", "pass")},
    # A site's own boot target and SysV run levels: OVAL reads the shipped targets' .wants
    # and every run level's links, so it fails where only a site target's .wants holds the
    # unit, and where ktune is linked only in a run level the boot does not enter (stricter,
    # never a false pass; docs/oval.md).
    "thp boot: a site's default target, requiring multi-user, wants the unit": {
        "thp_disabled_at_boot": ("pass", "fail")},
    # ktune linked only in run level 5, and the boot enters 3: OVAL counts the link (stricter
    # for THP and the nobarrier remount) but reads /etc/ktune.d's sysctl file whether or not
    # ktune starts (a pass sascheck does not give: listed in docs/oval.md).
    "thp boot: RHEL 6 ktune only in run level 5, inittab boots 3": {
        "thp_disabled_at_boot": ("pass", "fail"), "mount_options_at_boot": ("pass", "fail"),
        "dirty_ratio_at_boot": ("fail", "pass")},
    # A workstation (graphical.target) starting what only graphical.target wants: OVAL
    # counts only what every boot reaches (stricter, never a false pass).
    **{f"thp boot: a unit only graphical.target wants, {name}": {
        "thp_disabled_at_boot": ("pass", "fail")}
       for name in ("a workstation boots graphical",
                    "systemd.unit=graphical.target on the kernel line")},
    "thp boot: tuned.service only in graphical.target.wants, a workstation": {
        rule: ("pass", "fail") for rule in (
            "thp_disabled_at_boot", "dirty_ratio_at_boot", "io_tuning_at_boot", "tuned_profile",
            "swappiness_at_boot", "dirty_background_ratio_at_boot")},
    "boot mounts: a mount unit no target wants": {
        "mount_options_at_boot": ("notchecked", "fail")},
    "boot mounts: a mount unit overrides fstab's line": {
        "mount_options_at_boot": ("pass", "fail")},
    # LVM's read_ahead (lvchange -r) is not read by OVAL.
    "io boot: LVM metadata keeps read_ahead for every SAS LV": {
        "io_tuning_at_boot": ("pass", "fail")},
    # RHEL 6 ktune's multiply_disk_readahead is not read by OVAL either.
    "io boot: RHEL 6 ktune multiplies udev's read-ahead": {"io_tuning_at_boot": ("pass", "fail")},
    "io boot: RHEL 6 ktune divides udev's read-ahead": {"io_tuning_at_boot": ("fail", "pass")},
    "io boot: LVM read_ahead of one LV below the minimum, over udev": {
        "io_tuning_at_boot": ("fail", "pass")},
    # udev: OVAL counts a rule that says SUBSYSTEM=="block" itself.
    "io boot: udev rules behind GOTO guards": {"io_tuning_at_boot": ("pass", "fail")},
    "io boot: udev KERNEL glob of disks, no SUBSYSTEM": {"io_tuning_at_boot": ("pass", "fail")},
    # sysctl files: OVAL cannot order them by name, so every file must agree.
    "dirty boot: reapply_sysctl off, tuned's 40 wins": {"dirty_ratio_at_boot": ("pass", "fail")},
    # The kernel's sysctl.KEY=VALUE boot parameters: OVAL does not read the kernel line for
    # them (it fails where only they set the value: stricter, never a false pass).
    "dirty boot: RHEL 9.6 kernel line sysctl.vm.dirty_ratio=40": {
        "dirty_ratio_at_boot": ("pass", "fail")},
    "dirty boot: RHEL 8's kernel line sysctl.vm.dirty_ratio=40, untold": {
        "dirty_ratio_at_boot": ("notchecked", "fail")},
    # tuned's reapply_sysctl as each release parses a line ("-", slashes, and 2.27's
    # reapply_sysctl_exclude): OVAL does not read tuned's version, and every file must agree.
    **{f"dirty boot: tuned {name}": {"dirty_ratio_at_boot": ("pass", "fail")}
       for name in ("2.22.1 re-applies 'vm/dirty_ratio'", "2.22.1 re-applies '-vm.dirty_ratio'",
                    "2.27.0 re-applies 'vm.dirty_ratio'")},
    "dirty boot: reapply_sysctl = on is off to tuned, tuned's 40 wins": {
        "dirty_ratio_at_boot": ("pass", "fail")},
    "dirty boot: /etc hides its /usr/lib namesake (tuned off)": {
        "dirty_ratio_at_boot": ("pass", "fail")},
    # multipath: OVAL cannot follow multipath.conf's precedence per SAS map, nor know what
    # the built-in hardware table holds: any line setting another policy fails it.
    "multipath: defaults failover, XtremIO's table entry wins": {
        "multipath_all_paths_active": ("pass", "fail")},
    "multipath: an unclosed section": {"multipath_all_paths_active": ("error", "pass")},
    # One data stream serves every release: OVAL reads multipath.conf, never the built-in
    # table of the host's multipath-tools, which the scanner takes from `multipath -t` or
    # the release (an array no table knows, here SATA disks, fails over).
    "multipath: an array no table knows fails over": {
        "multipath_all_paths_active": ("fail", "pass")},
    "io boot: RHEL 7 SATA disks keep cfq": {"multipath_all_paths_active": ("fail", "pass")},
    "multipath: an array only a later table knows": {
        "multipath_all_paths_active": ("notchecked", "pass")},
    "multipath: a release whose table sascheck lacks": {
        "multipath_all_paths_active": ("notchecked", "pass")},
    # OVAL cannot pair a device's minimum and optimal I/O sizes: any published optimal size
    # over a device below counts, so a linear LV inheriting its LUN's hints passes there, and
    # BUFSIZE is held against its unit, where sascheck finds no striped volume to judge.
    "striping: a LUN's own hints under a linear LV": {
        "sas_volume_striped": ("fail", "pass"),
        "sas_bufsize_matches_stripe": ("notapplicable", "pass")},
    # SMT notsupported is also what HT off in the firmware looks like (kernel/cpu.c).
    "SMT notsupported on a CPU with the ht flag": {"cpu_turbo_smt_on": ("notchecked", "fail")},
    "io boot: several hardware queues default to none": {
        "io_tuning_at_boot": ("pass", "fail")},
}


def _compare(name: str, root: Path, sets: list[str], workdir: Path,
             profile: str = "default", *, as_users_run_it: bool = False) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    tailoring = tailor(root, sets, workdir / "tailoring.xml", profile)
    ours, unnamed = sascheck_results(root, tailoring, workdir, profile)
    theirs = oscap_eval(root, tailoring, workdir, profile, as_users_run_it=as_users_run_it)
    for rule in unnamed:
        assert theirs.get(rule) == "error", (name, rule, theirs.get(rule))
        theirs[rule] = ours[rule]
    # A rule OVAL cannot express (xtremio_paths_per_lun) has no check: oscap says notchecked
    # wherever its platform holds, notapplicable where it does not (and so does sascheck).
    for rule in BEYOND_OVAL & set(ours):
        allowed = {"notchecked"} | ({"notapplicable"} if ours[rule] == "notapplicable" else set())
        assert theirs.get(rule) in allowed, (name, rule, ours[rule], theirs.get(rule))
        theirs[rule] = ours[rule]
    differences = {rule: (ours[rule], theirs.get(rule, "missing")) for rule in ours
                   if ours[rule] != theirs.get(rule)}
    expected = KNOWN_DIFFERENCES.get(name, {})
    if differences != expected:
        table = "\n".join(f"  {rule:34} sascheck={a:14} oscap={b}"
                          for rule, (a, b) in sorted(differences.items()))
        pytest.fail(f"{name}: verdicts differ (expected {expected}):\n{table}")


@pytest.mark.parametrize(("changes", "sets"), [(case.changes, case.sets) for case in CASES],
                         ids=[case.name for case in CASES])
def test_parity_on_verdict_roots(tmp_path, request, changes, sets):
    name = request.node.callspec.id
    root = sas_host(tmp_path / "root", **changes)
    _compare(name, root, [*BASELINE_SETS, *sets], tmp_path / "work")


def test_parity_when_a_lun_publishes_its_own_hints(tmp_path):
    root = sas_host(tmp_path / "root", sas_luns=1)
    for lv in ("dm-2", "dm-3", "dm-4"):  # the array's 8 KiB / 1 MiB, inherited by linear LVs
        queue = root / f"sys/devices/virtual/block/{lv}/queue"
        (queue / "minimum_io_size").write_text("8192\n")
        (queue / "optimal_io_size").write_text("1048576\n")
    _compare("striping: a LUN's own hints under a linear LV", root, BASELINE_SETS,
             tmp_path / "work")


def test_parity_on_baseline_with_xtremio_profile(tmp_path):
    root = sas_host(tmp_path / "root", read_ahead_kb=8192)
    _compare("xtremio", root, BASELINE_SETS, tmp_path / "work", profile="xtremio")


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_parity_on_example_roots(tmp_path, name):
    EXAMPLES[name](tmp_path / "root")
    # The README's own command on the example roots: validated, ARF out.
    _compare(name, tmp_path / "root", EXAMPLE_VALUES[name], tmp_path / "work",
             as_users_run_it=True)


def test_parity_without_sas_directories_judges_nothing(tmp_path):
    """No SAS directory named: sascheck says notchecked and why, oscap errs; neither passes
    or fails a SAS file-system rule, with a tailoring or without one (issue 45)."""
    root = sas_host(tmp_path / "root", sas_local_cfg=None)
    (root / "opt").rename(root / "opt-gone")  # no SAS install: nothing to discover
    workdir = tmp_path / "work"
    workdir.mkdir()
    tailoring = tailor(root, [], workdir / "tailoring.xml")
    ours, unnamed = sascheck_results(root, tailoring, workdir, "default")
    theirs = oscap_eval(root, tailoring, workdir)
    untailored = oscap_eval(root, None, workdir)
    for rule in ("io_scheduler", "read_ahead", "sas_fs_type", "sas_dirs_separate"):
        assert rule in unnamed and ours[rule] == "notchecked"
        assert theirs[rule] == untailored[rule] == "error", rule


def _set_value_only(root: Path, sets: list[str], output: Path) -> Path:
    """A tailoring file as SCAP Workbench writes one: the profile and set-value elements,
    nothing else (no check selected)."""
    tailored = tailor(root, sets, output)
    tree = etree.parse(str(tailored))
    kept = {"set-value", "title", "description"}
    for profile in tree.iterfind("{*}Profile"):
        for child in list(profile):
            if etree.QName(child).localname not in kept:
                profile.remove(child)
    assert all(etree.QName(child).localname in kept for child in tree.iterfind("{*}Profile/*"))
    tree.write(str(output))
    return output


def test_a_set_value_only_tailoring_judges_the_sas_rules(tmp_path):
    """The SAS rules are judged from the values any tailoring tool sets, as sascheck judges
    them, with no refine-rule (issue 45)."""
    root = sas_host(tmp_path / "root")
    tailoring = _set_value_only(root, BASELINE_SETS, tmp_path / "workbench.xml")
    ours, _ = sascheck_results(root, tailoring, tmp_path, "default")
    theirs = oscap_eval(root, tailoring, tmp_path)
    sas_rules = ("io_scheduler", "read_ahead", "sas_fs_type", "sas_dirs_separate", "sas_fs_noatime")
    assert {rule: theirs[rule] for rule in sas_rules} == {rule: ours[rule] for rule in sas_rules}
    assert {theirs[rule] for rule in sas_rules} <= {"pass", "fail"}


def test_a_tailoring_that_selects_the_oval_check_still_works(tmp_path):
    """Tailoring files written before issue 45 select the OVAL check by name; the data
    stream no longer names it, and XCCDF falls back to the check without a selector."""
    root = sas_host(tmp_path / "root")
    tailoring = tailor(root, BASELINE_SETS, tmp_path / "t.xml")
    tree = etree.parse(str(tailoring))
    [profile] = tree.iterfind("{*}Profile")
    etree.SubElement(profile, etree.QName(profile, "refine-rule"),
                     idref="xccdf_org.sascheck.content_rule_sas_fs_type", selector="oval")
    tree.write(str(tailoring))
    ours, _ = sascheck_results(root, tailoring, tmp_path, "default")
    assert oscap_eval(root, tailoring, tmp_path)["sas_fs_type"] == ours["sas_fs_type"] == "pass"


def test_a_sas_directory_that_is_not_there_is_never_judged(tmp_path):
    """A policy naming a directory this host lacks (one tailoring for many hosts): both
    engines say error, never the verdict of the file system above it (issue 45)."""
    root = sas_host(tmp_path / "root")
    sets = [*BASELINE_SETS, "sas_utilloc_dirs=/otherhost/sasutil"]
    tailoring = tailor(root, sets, tmp_path / "t.xml")
    ours, _ = sascheck_results(root, tailoring, tmp_path, "default")
    theirs = oscap_eval(root, tailoring, tmp_path)
    for rule in ("sas_fs_type", "sas_fs_noatime", "sas_dirs_separate", "read_ahead"):
        assert ours[rule] == theirs[rule] == "error", (rule, ours[rule], theirs[rule])


# Mount points and SAS directories with the characters OVAL's pair machinery must carry as
# text: parentheses (which ended the old regex-comment encoding), $, spaces (\040 in
# /proc/mounts), and a deeper mount that shadows its parent for one directory. Each hostile
# file system fails something, so an engine that loses it passes vacuously and differs.
HOSTILE_NAMES = [SasFs("sasdata", "/sas (old)", options="rw,relatime,attr2,inode64"),
                 SasFs("saswork", "/data$(x)", fstype="ext3", options="rw,noatime"),
                 SasFs("sasutil", "/sas util"), SasFs("sasdeep", "/sas (old)/in)ner")]


@pytest.mark.parametrize(("name", "data_dirs", "noatime"), [
    ("parentheses", "/sas (old)/data", "fail"),
    ("shadowed by a deeper mount", "/sas (old)/in)ner/data", "pass"),
])
def test_parity_with_hostile_mount_names(tmp_path, name, data_dirs, noatime):
    root = sas_host(tmp_path / "root", filesystems=HOSTILE_NAMES, sas_dirs=(data_dirs,),
                    sas_local_cfg="-WORK '/data$(x)/work'\n-UTILLOC \"/sas util\"\n")
    sets = [f"sas_data_dirs={data_dirs}"]
    _compare(name, root, sets, tmp_path / "work")
    ours, _ = sascheck_results(root, tailor(root, sets, tmp_path / "t.xml"), tmp_path / "work", "default")
    assert (ours["sas_fs_noatime"], ours["sas_fs_type"]) == (noatime, "fail")


@pytest.mark.parametrize("case", sorted(ROLE_CASES))
def test_parity_on_role_evidence(tmp_path, case):
    """What the host is decides which rules apply: the CPE platforms must agree."""
    files, links, role = ROLE_CASES[case]
    root = sas_host(tmp_path / "root", extra_files=files, extra_links=links)
    _compare(case, root, BASELINE_SETS, tmp_path / "work")
    applicable = sascheck_results(root, tailor(root, BASELINE_SETS, tmp_path / "t.xml"), tmp_path / "work",
                       "default")[0]["thp_enabled_on_kvm_host"] != "notapplicable"
    assert applicable == (role == "kvm_host")
