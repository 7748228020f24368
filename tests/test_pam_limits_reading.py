"""The SAS accounts' limits as the host's pam_limits reads them (#51): a line with no limit
for the account ends the reading, '-' and 'unlimited' as this pam_limits maps them, a nofile
hard limit above nr_open refusing the session, snapshots carrying what pam_limits is, and a
fix that never lowers a hard limit and names what it cannot mend.

The reading follows Linux-PAM's modules/pam_limits/pam_limits.c (commit ddab692), as the
module docstring of tests/test_accounts.py cites it."""

from __future__ import annotations

import pytest

from .support.account_hosts import RHEL8_KERNEL, host, judged, nofile_fix, with_module
from .support.hosts import BASELINE_SETS
from .support.remedy import run_bash

VIYA_LIMITS = "sas - nofile 150000\nsas - nproc 100000\nsas - stack 10240\n"


def test_a_no_limit_line_for_the_account_ends_pam_limits_reading(tmp_path, scan):
    """parse_config_file (lines 897-953) returns PAM_IGNORE on '@sas -' for a member of sas,
    and pam_sm_open_session (lines 1071-1099) returns at once: 99-viya.conf is never read
    and no limit is set, so SAS sessions keep 1024 open files and an 8 MiB stack."""
    root = host(tmp_path / "r", {"/etc/security/limits.d/10-sas-nolimits.conf": "@sas -\n",
                                 "/etc/security/limits.d/99-viya.conf": VIYA_LIMITS})
    for rule in ("sas_accounts_nofile", "sas_accounts_stack"):
        verdict = judged(scan, root, rule, "viya3")
        assert verdict["result"] == "fail", verdict
        assert "10-sas-nolimits.conf:1" in verdict["evidence"][0]["source"]
        assert "stops reading there" in verdict["evidence"][0]["note"]
    # '*' and '%' domains never make a no-limit line (the switch's 'continue'), nor does
    # another account's name
    root = host(tmp_path / "other", {"/etc/security/limits.d/10-x.conf": "* -\n%sas -\nadm -\n",
                                     "/etc/security/limits.d/99-viya.conf": VIYA_LIMITS})
    assert judged(scan, root, "sas_accounts_stack", "viya3")["result"] == "pass"


def test_a_dash_value_is_unlimited(tmp_path, scan):
    """process_limit (lines 588-594): '-', like 'unlimited', 'infinity' and '-1', is
    RLIM_INFINITY."""
    root = host(tmp_path / "r", {"/etc/security/limits.d/99-viya.conf": "sas - stack -\n"})
    verdict = judged(scan, root, "sas_accounts_stack", "viya3")
    assert verdict["result"] == "pass", verdict
    assert verdict["evidence"][0]["actual"] == "unlimited"


@pytest.mark.parametrize(("nr_open", "expected", "said"), [
    (True, "pass", "gives an unlimited nofile as fs.nr_open (1048576"),
    (False, "fail", "no SAS session opens"),
    (None, "notchecked", "cannot be told"),
])
def test_an_unlimited_nofile_is_judged_by_the_hosts_pam_limits(tmp_path, scan, nr_open,
                                                                expected, said):
    """Up to linux-pam 1.5.1 'nofile unlimited' is RLIM_INFINITY; the kernel refuses a nofile
    hard limit above fs.nr_open (kernel/sys.c do_prlimit: EPERM), setup_limits fails and the
    session is denied. From 1.5.2 it is fs.nr_open. The host's module decides; without it,
    never a pass."""
    root = with_module(host(tmp_path / "r", {
        "/etc/security/limits.d/99-sas.conf": "sas - nofile unlimited\n"}), nr_open)
    verdict = judged(scan, root)
    assert verdict["result"] == expected, verdict
    assert said in verdict["evidence"][0]["note"]


def test_a_nofile_hard_limit_above_nr_open_refuses_the_session(tmp_path, scan):
    root = with_module(host(tmp_path / "r", {
        "/etc/security/limits.d/99-sas.conf": "sas soft nofile 65536\nsas hard nofile 2000000\n"},
        proc__sys__fs__nr_open="1048576\n"), True)
    verdict = judged(scan, root)
    assert verdict["result"] == "fail", verdict
    assert "above fs.nr_open (1048576, /proc/sys/fs/nr_open)" in verdict["evidence"][0]["note"]
    # a host that raised fs.nr_open opens the session
    (root / "proc/sys/fs/nr_open").write_text("4194304\n")
    assert judged(scan, root)["result"] == "pass"


@pytest.mark.parametrize("nr_open", [True, False])
def test_snapshots_carry_what_pam_limits_is(tmp_path, scan, nr_open):
    """Both collectors keep the module (and fs.nr_open), so a snapshot's scan judges an
    unlimited nofile as the host's own scan does."""
    import json

    from sascheck.cli import main

    from .test_snapshots import _python_collect, _script_collect

    root = with_module(host(tmp_path / "r", {
        "/etc/security/limits.d/99-sas.conf": "sas - nofile unlimited\n"},
        proc__sys__fs__nr_open="1048576\n"), nr_open)
    expected = judged(scan, root)["result"]
    assert expected == ("pass" if nr_open else "fail")
    sets = [*BASELINE_SETS, "sas_accounts=sas"]
    for archive in (_python_collect(root, sets, tmp_path / "py.tar.gz"),
                    _script_collect(root, tmp_path / "sh.tar.gz", tmp_path)):
        out = tmp_path / f"{archive.name}.json"
        argv = ["scan", "--snapshot", str(archive), "--quiet", "--json", str(out)]
        for assignment in sets:
            argv += ["--set", assignment]
        main(argv)
        rules = {r["id"]: r for r in json.loads(out.read_text())["rules"]}
        assert rules["sas_accounts_nofile"]["result"] == expected, (archive, rules[
            "sas_accounts_nofile"])


def test_the_fix_converges_on_rhel8_and_never_lowers_the_hard_limit(tmp_path, scan):
    """RHEL 8's sessions inherit a nofile hard limit sascheck cannot tell, so a soft line alone
    leaves the rescan 'notchecked'. The fix sets the hard limit too, at fs.nr_open: at least
    what any session can have inherited (the kernel caps it there), and what it accepts."""
    root = host(tmp_path / "r", {}, RHEL8_KERNEL, proc__sys__fs__nr_open="1048576\n")
    assert judged(scan, root)["result"] == "fail"
    script = nofile_fix(tmp_path, root)
    run_bash(script, root)
    after = judged(scan, root)
    assert after["result"] == "pass", after
    ours = (root / "etc/security/limits.d/99-sascheck-sas.conf").read_text().splitlines()
    assert ours[1:] == ["sas soft nofile 20480", "sas hard nofile 1048576"]
    assert "no changes" in run_bash(script, root).stdout


def test_the_fix_names_a_no_limit_line_it_cannot_pass(tmp_path, scan):
    """'@sas -' stops pam_limits before sascheck's own file: writing there would change
    nothing, and the line is the site's, so the fix says where it is and leaves it."""
    nolimits = "/etc/security/limits.d/10-sas-nolimits.conf"
    root = host(tmp_path / "r", {nolimits: "@sas -\n"})
    script = nofile_fix(tmp_path, root)
    ran = run_bash(script, root)
    assert f"{nolimits}:1 ('DOMAIN -') tells pam_limits to set no limit for sas" in ran.stderr
    assert (root / nolimits.lstrip("/")).read_text() == "@sas -\n"
    assert not (root / "etc/security/limits.d/99-sascheck-sas.conf").exists()
    assert judged(scan, root)["result"] == "fail"


@pytest.mark.parametrize(("site", "written"), [
    # the account's own line, read before sascheck's file: sascheck's, read later, wins
    ({"/etc/security/limits.d/50-sas.conf": "sas - nofile unlimited\n"},
     ["sas hard nofile 1048576"]),
    # a group's line anywhere: the account's own line beats it; the site's soft 30000 stays
    ({"/etc/security/limits.conf": "sas soft nofile 30000\n",
      "/etc/security/limits.d/99-viya.conf": "@sas hard nofile unlimited\n"},
     ["sas hard nofile 1048576"]),
    # a number above fs.nr_open refuses the session as 'unlimited' does; soft raised too
    ({"/etc/security/limits.conf": "sas soft nofile 4096\nsas hard nofile 2000000\n"},
     ["sas hard nofile 1048576", "sas soft nofile 20480"]),
])
def test_the_fix_caps_a_refused_nofile_at_nr_open(tmp_path, scan, site, written):
    """Before linux-pam 1.5.2 'nofile unlimited' asks for RLIM_INFINITY, which do_prlimit
    refuses above fs.nr_open: every session is denied. The fix writes the hard limit at
    fs.nr_open (what 1.5.2 makes of 'unlimited', the most the kernel gives): sessions open
    with at least the site value, and the site's own lines stay as they were."""
    root = with_module(host(tmp_path / "r", site, RHEL8_KERNEL,
                             proc__sys__fs__nr_open="1048576\n"), False)
    assert judged(scan, root)["evidence"][0]["actual"] == "session refused"
    script = nofile_fix(tmp_path, root)
    run_bash(script, root)
    after = judged(scan, root)
    assert after["result"] == "pass", after
    ours = (root / "etc/security/limits.d/99-sascheck-sas.conf").read_text().splitlines()
    assert ours[1:] == written
    for path, text in site.items():
        assert (root / path.lstrip("/")).read_text() == text
    assert "no changes" in run_bash(script, root).stdout


def test_a_refused_nofile_read_after_the_fix_is_named_for_a_person(tmp_path, scan):
    """The account's own line in a file read after sascheck's (limits.d sorts 99-viya.conf
    after 99-sascheck-sas.conf) would win over anything the fix writes: it names the line."""
    viya = "/etc/security/limits.d/99-viya.conf"
    root = with_module(host(tmp_path / "r", {viya: "sas - nofile unlimited\n"}, RHEL8_KERNEL,
                             proc__sys__fs__nr_open="1048576\n"), False)
    script = nofile_fix(tmp_path, root)
    ran = run_bash(script, root)
    assert ran.returncode == 3
    assert f"{viya}:1 gives sas a nofile hard limit above fs.nr_open (1048576)" in ran.stderr
    assert not (root / "etc/security/limits.d/99-sascheck-sas.conf").exists()
    assert (root / viya.lstrip("/")).read_text() == "sas - nofile unlimited\n"


def test_an_unlimited_nofile_this_pam_limits_maps_is_left_alone(tmp_path, scan):
    """linux-pam 1.5.2 gives 'unlimited' as fs.nr_open: the session opens, the rule passes,
    and even a fix of every rule (--all) writes nothing for it."""
    root = with_module(host(tmp_path / "r", {
        "/etc/security/limits.d/50-sas.conf": "sas - nofile unlimited\n"}, RHEL8_KERNEL,
        proc__sys__fs__nr_open="1048576\n"), True)
    assert judged(scan, root)["result"] == "pass"
    script = nofile_fix(tmp_path, root, "--all")
    run_bash(script, root)
    assert not (root / "etc/security/limits.d/99-sascheck-sas.conf").exists()

