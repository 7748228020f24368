"""Fixes on RHEL 6: SysV init, tuned 0.2 and ktune, rc.local at the boot run level."""

from __future__ import annotations

import os

from .support.cases import named
from .support.fix_hosts import (
    PERSISTENCE_RULES,
    RHEL6_HOST,
    rhel6_tuned02,
    verdicts,
)
from .support.hosts import BASELINE_SETS, sas_host
from .support.remedy import (
    generate,
    run_bash,
)
from .test_verdicts import CASES


def test_bash_fix_outlasts_a_ktune_that_turns_thp_on(tmp_path):
    """RHEL 6 boots with SysV init, and ktune turns THP on after the command line: the
    script leaves the ktune profile alone and adds the THP lines to rc.local (S99local runs
    last), keeping it executable, before its exit line."""
    changes = named(CASES, "thp boot: RHEL 6 enterprise-storage ktune over the command line").changes
    rc_local_as_shipped = {"/etc/rc.d/rc.local": "#!/bin/sh\ntouch /var/lock/subsys/local\n"
                                                 "exit 0\n"}
    root = sas_host(tmp_path / "root",
                    **{**changes, "extra_files": {**changes["extra_files"], **rc_local_as_shipped}})
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS)
    ran = run_bash(script, root)
    # Only advice: ktune's remount_partitions nobarrier is left to the site, and tuned 0.2's
    # tuned-adm, chkconfig and service are only run on the live host.
    advice = ran.stderr.splitlines()
    assert all(line.startswith("sascheck-fix: manual: ") for line in advice), advice
    assert [line for line in advice if "/etc/ktune.d/tunedadm.sh (ktune) remounts" in line]
    rc_local = root / "etc/rc.d/rc.local"
    lines = rc_local.read_text().splitlines()
    assert lines[-1] == "exit 0" and "touch /var/lock/subsys/local" in lines
    assert any("echo never > /sys/kernel/mm/redhat_transparent_hugepage/defrag" in line
               for line in lines)
    assert os.access(rc_local, os.X_OK)
    assert not (root / "etc/systemd").exists()  # no unit on a SysV host
    assert "enable_transparent_hugepages" in (root / "etc/ktune.d/tunedadm.sh").read_text()
    assert verdicts(root, BASELINE_SETS)["thp_disabled_at_boot"] == "pass"
    assert "systemctl" not in ran.stdout  # a SysV host: never systemd's tools
    rerun = run_bash(script, root)  # idempotent: nothing more to add
    assert rc_local.read_text().splitlines() == lines and "no changes" in rerun.stdout


def test_bash_fix_uses_sysv_tools_on_rhel6(tmp_path):
    """A RHEL 6 image with tuned 0.2 but no active profile: no systemd unit or command; the
    files tuned-adm would change are changed (a profile without nobarrier: the cache is not
    declared protected), and the script says which chkconfig commands to run on the host."""
    root = rhel6_tuned02(tmp_path / "root", None)
    ran = run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS), root)
    assert ran.returncode == 3  # done, with the chkconfig commands left to a human
    assert "manual: tuned_profile: on the running host: chkconfig tuned on; chkconfig ktune on" \
        in ran.stderr.replace("\n", " ")
    assert (root / "etc/tune-profiles/active-profile").read_text() == "throughput-performance\n"
    assert os.readlink(root / "etc/ktune.d/tunedadm.sh") == \
        "/etc/tune-profiles/throughput-performance/ktune.sh"
    assert not (root / "etc/systemd").exists() and "systemctl" not in ran.stdout


def test_rhel6_enterprise_storage_gives_way_to_a_profile_that_keeps_barriers(tmp_path):
    """tuned 0.2's enterprise-storage remounts every SAS file system nobarrier at each boot.
    Unless the cache is declared protected, the fix switches to throughput-performance as
    tuned-adm would (the links it makes), keeps the read-ahead enterprise-storage multiplied
    with a udev rule, and every persistence rule then passes; a second run changes nothing."""
    root = rhel6_tuned02(tmp_path / "root", "enterprise-storage")
    before = verdicts(root, BASELINE_SETS)
    assert before["mount_options_at_boot"] == "fail" and before["tuned_profile"] == "pass"
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS)
    run_bash(script, root)
    profiles = "/etc/tune-profiles/throughput-performance"
    assert {link: os.readlink(root / link.lstrip("/")) for link in (
        "/etc/ktune.d/tunedadm.sh", "/etc/ktune.d/tunedadm.conf", "/etc/sysconfig/ktune",
        "/etc/tuned.conf")} == {
        "/etc/ktune.d/tunedadm.sh": f"{profiles}/ktune.sh",
        "/etc/ktune.d/tunedadm.conf": f"{profiles}/sysctl.ktune",
        "/etc/sysconfig/ktune": f"{profiles}/ktune.sysconfig",
        "/etc/tuned.conf": f"{profiles}/tuned.conf"}
    after = verdicts(root, BASELINE_SETS)
    assert {rule: after[rule] for rule in PERSISTENCE_RULES} == dict.fromkeys(
        PERSISTENCE_RULES, "pass")
    assert "udev" in str(list((root / "etc/udev/rules.d").iterdir()))
    assert "no changes" in run_bash(script, root).stdout
    # A protected cache may keep enterprise-storage and its barriers off.
    kept = rhel6_tuned02(tmp_path / "kept", "enterprise-storage")
    sets = [*BASELINE_SETS, "storage_cache_protected=true"]
    run_bash(generate("bash", tmp_path / "kept.sh", kept, sets), kept)
    assert (kept / "etc/ktune.d/tunedadm.sh").resolve() == \
        kept / "etc/tune-profiles/enterprise-storage/ktune.sh"


def test_hostile_ktune_script_name_never_reaches_the_terminal(tmp_path):
    """A ktune script named with terminal escapes: the advice names its directory instead."""
    changes = named(CASES, "boot mounts: RHEL 6 ktune remounts nobarrier").changes
    root = sas_host(tmp_path / "root", **changes)
    for suffix in (".sh", ".conf"):  # ktune.init runs X.sh beside X.conf
        (root / f"etc/ktune.d/tunedadm{suffix}").rename(
            root / f"etc/ktune.d/\x1b]0;owned\x07x{suffix}")
    ran = run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS), root)
    assert "\x1b" not in ran.stderr + ran.stdout
    assert "manual: a script in /etc/ktune.d (ktune) remounts" in ran.stderr


def test_a_rhel6_fix_says_when_rc_local_does_not_run_at_the_boot_run_level(tmp_path):
    """The THP fix writes rc.local on RHEL 6; where /etc/inittab's run level has no S??local
    link, rc.local does not run there: the fix says so, naming the link to make, and with
    the link made the rule passes."""
    from .support.hosts import RHEL6_INITTAB, RHEL6_RC_LOCAL

    root = sas_host(tmp_path / "root", **RHEL6_HOST, without_files=("/etc/rc.d/rc3.d/S99local",),
                    extra_files={"/etc/inittab": RHEL6_INITTAB.format(level=3),
                                 "/etc/rc.d/rc.local": "#!/bin/sh\n" + RHEL6_RC_LOCAL})
    sets = [*BASELINE_SETS]
    assert verdicts(root, sets)["thp_disabled_at_boot"] == "fail"
    script = generate("bash", tmp_path / "fix.sh", root, sets)
    ran = run_bash(script, root)
    assert ("manual: thp_disabled_at_boot: rc.local does not run at run level 3" in ran.stdout
            + ran.stderr) and "ln -s ../rc.local /etc/rc.d/rc3.d/S99local" in ran.stdout + ran.stderr
    (root / "etc/rc.d/rc3.d/S99local").symlink_to("../rc.local")
    assert verdicts(root, sets)["thp_disabled_at_boot"] == "pass"

