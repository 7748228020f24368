"""The SAS accounts' resource limits (#51): sas_accounts_nofile (every profile, 20480; viya3
150000), sas_accounts_nproc and sas_accounts_stack (viya3), judged as pam_limits, systemd and
the running processes give them, and raised by the bash fix.

pam_limits' order is Linux-PAM's modules/pam_limits/pam_limits.c (commit ddab692):
pam_sm_open_session reads limits.conf, then limits.d/*.conf sorted; process_limit keeps an
entry only when no more specific one (user 0, group 1, '*' 4: LIMITS_DEF_*) set the limit
before it; setup_limits lowers a soft limit above the hard one to it."""

from __future__ import annotations

import pytest

from .support.account_hosts import INIT_LIMITS, RHEL7_KERNEL, RHEL8_KERNEL, RHEL9_KERNEL, host, judged, nofile_fix
from .support.hosts import BASELINE_SETS, RHEL_NPROC, VIYA_ARK_FILE, VIYA_ARK_LIMITS, sas_host
from .support.remedy import ansible_available, generate, run_bash, run_playbook


@pytest.mark.parametrize(("limits", "kernel", "expected"), [
    ({}, RHEL9_KERNEL, "fail"),  # nothing: the 1024 every session inherits
    ({"/etc/security/limits.conf": "sas soft nofile 20480\nsas hard nofile 20480\n"},
     RHEL9_KERNEL, "pass"),
    # an entry for the account beats '*' wherever each is
    ({"/etc/security/limits.d/10-sas.conf": "sas soft nofile 4096\n",
      "/etc/security/limits.d/90-all.conf": "*\t-\tnofile\t150000\n"}, RHEL9_KERNEL, "fail"),
    # its group's entry beats '*', read before or after
    ({"/etc/security/limits.conf": "@sas soft nofile 30000\n* soft nofile 8000\n"},
     RHEL9_KERNEL, "pass"),
    # at the same rank the last read wins: limits.d after limits.conf, then by name
    ({"/etc/security/limits.conf": "sas soft nofile 65536\n",
      "/etc/security/limits.d/50-low.conf": "sas soft nofile 2048\n"}, RHEL9_KERNEL, "fail"),
    # a soft limit above the hard one is lowered to it
    ({"/etc/security/limits.conf": "sas soft nofile 30000\nsas hard nofile 10000\n"},
     RHEL9_KERNEL, "fail"),
    # soft alone: RHEL 9's sessions inherit a hard 524288, RHEL 7's 4096
    ({"/etc/security/limits.conf": "sas soft nofile 30000\n"}, RHEL9_KERNEL, "pass"),
    ({"/etc/security/limits.conf": "sas soft nofile 30000\n"}, RHEL7_KERNEL, "fail"),
    ({"/etc/security/limits.conf": "sas soft nofile 30000\n"}, RHEL8_KERNEL, "notchecked"),
    # a comment ends a line anywhere; item and value are case-blind (an unlimited nofile
    # is judged by the host's pam_limits.so: test_an_unlimited_nofile_*)
    ({"/etc/security/limits.conf": "sas - NOFILE 65536 # as the DBA asked\n"},
     RHEL9_KERNEL, "pass"),
    # sscanf takes four words: a fifth is ignored, the line still counts
    ({"/etc/security/limits.conf": "sas - nofile 65536 extra words\n"}, RHEL9_KERNEL, "pass"),
    ({"/etc/security/limits.conf": "sas - nofile lots\n"}, RHEL9_KERNEL, "fail"),  # skipped
])
def test_pam_sessions_get_what_pam_limits_gives(tmp_path, scan, limits, kernel, expected):
    verdict = judged(scan, host(tmp_path / "r", limits, kernel))
    assert verdict["result"] == expected, verdict
    assert verdict["evidence"][0]["subject"] == "PAM sessions of sas"


def test_the_account_is_the_owner_of_the_sas_configuration(tmp_path, scan):
    """With sas_accounts empty the account is the one owning SAS's configuration files
    (chowned where the tests run as root); named accounts replace it."""
    root = host(tmp_path / "r")
    result = scan(root)
    if (root / "opt/sas/SASHome/SASFoundation/9.4/sasv9.cfg").stat().st_uid == 1001:
        assert result["host"]["sas_accounts"] == ["sas"]
    named = judged(scan, root, "sas_accounts_nofile", "default", "sas_accounts=sasdemo,sas")
    assert [e["subject"] for e in named["evidence"]] == ["PAM sessions of sasdemo",
                                                        "PAM sessions of sas"]
    assert "not in /etc/passwd" in named["evidence"][0]["note"]


def test_no_account_known_is_notchecked_with_how_to_name_one(tmp_path, scan):
    root = sas_host(tmp_path / "r", sas_account=False, sas_limits=None)
    verdict = judged(scan, root)
    assert verdict["result"] == "notchecked"
    assert "--set sas_accounts=" in verdict["message"]
    # a host with no SAS configuration at all (the KVM host example): no empty "()" where
    # the files would be named (issue 65)
    from .support.example_roots import EXAMPLES

    EXAMPLES["kvm-host"](tmp_path / "kvm")
    bare = scan(tmp_path / "kvm", "sas_data_dirs=/var/lib/libvirt/images", role="kvm_host",
                baseline_sets=False)["by_id"]["sas_accounts_nofile"]
    assert bare["evidence"][0]["source"] == (
        "owner of the SAS configuration (none found: name the accounts with sas_accounts)")


@pytest.mark.parametrize(("files", "expected"), [
    # a SAS service that runs as the account with systemd's default: 1024
    ({"etc__systemd__system__sas-viya-all-services.service":
      "[Unit]\nDescription=SAS\n\n[Service]\nType=forking\nUser=sas\n"
      "ExecStart=/etc/init.d/sas-viya-all-services start\n"}, "fail"),
    ({"etc__systemd__system__sas-viya-all-services.service":
      "[Service]\nUser=sas\nExecStart=/bin/true\n",
      "etc__systemd__system__sas-viya-all-services.service.d__limits.conf":
      "[Service]\nLimitNOFILE=65536\n"}, "pass"),
    ({"usr__lib__systemd__system__sas94.service": "[Service]\nUser=sas\nLimitNOFILE=1024:4096\n",
      "etc__systemd__system.conf": "[Manager]\nDefaultLimitNOFILE=100000\n"}, "fail"),
    ({"usr__lib__systemd__system__sas94.service": "[Service]\nUser=sas\n",
      "etc__systemd__system.conf": "[Manager]\nDefaultLimitNOFILE=100000:200000\n"}, "pass"),
    # another account's service is not SAS's
    ({"usr__lib__systemd__system__httpd.service": "[Service]\nUser=apache\n"}, "pass"),
])
def test_services_that_run_as_the_account_get_systemds_limit(tmp_path, scan, files,
                                                                expected):
    limits = {"/etc/security/limits.conf": "sas - nofile 20480\n"}
    verdict = judged(scan, host(tmp_path / "r", limits, **files))
    assert verdict["result"] == expected, verdict
    assert len(verdict["evidence"]) == 1 + ("apache" not in str(files))


def test_running_processes_keep_the_limit_they_started_with(tmp_path, scan):
    """On a live host the account's processes are read: raised files do not reach a server
    started before."""
    limits = {"/etc/security/limits.conf": "sas - nofile 20480\n"}
    root = host(tmp_path / "r", limits, **{
        "proc__4242__status": "Name:\tsas\nState:\tS (sleeping)\nUid:\t1001\t1001\t1001\t1001\n",
        "proc__4242__limits": INIT_LIMITS.replace("1073741816", "1024"),
        "proc__4243__status": "Name:\tsshd\nUid:\t0\t0\t0\t0\n",
        "proc__4243__limits": INIT_LIMITS.replace("1073741816", "1024"),
        "proc__1__limits": INIT_LIMITS})
    verdict = judged(scan, root)
    assert verdict["result"] == "fail"
    running = [e for e in verdict["evidence"] if e["subject"].startswith("running")]
    assert [(e["subject"], e["actual"]) for e in running] == [("running sas 4242 (sas)", "1024")]


def test_a_host_viya_ark_prepared_passes_the_limits(tmp_path, scan):
    root = host(tmp_path / "r", {"/etc/security/limits.d/20-nproc.conf": RHEL_NPROC,
                                 VIYA_ARK_FILE: VIYA_ARK_LIMITS}, RHEL8_KERNEL)
    result = scan(root, profile="viya3")["by_id"]
    assert {rule: result[rule]["result"] for rule in (
        "sas_accounts_nofile", "sas_accounts_nproc", "sas_accounts_stack")} == dict.fromkeys(
        ("sas_accounts_nofile", "sas_accounts_nproc", "sas_accounts_stack"), "pass")


def test_a_stock_rhel9_host_fails_each_limit_and_the_fix_mends_it(tmp_path, scan):
    """Nothing set: nofile 1024, stack 8192 KiB, nproc as init has it (63283 on 16 GiB).
    The bash fix writes the account's lines (hard too where the inherited one is lower),
    every limit passes after it, and a second run changes nothing."""
    root = host(tmp_path / "r", {"/etc/security/limits.conf": "# shipped: all comments\n"},
                proc__1__limits=INIT_LIMITS)
    rules = ("sas_accounts_nofile", "sas_accounts_nproc", "sas_accounts_stack")
    before = scan(root, profile="viya3")["by_id"]
    assert {rule: before[rule]["result"] for rule in rules} == dict.fromkeys(rules, "fail")
    script = generate("bash", tmp_path / "fix.sh", root, [*BASELINE_SETS, "sas_accounts=sas"],
                      ["--profile", "viya3", *(f"--rule={rule}" for rule in rules)])
    run_bash(script, root)
    after = scan(root, profile="viya3")["by_id"]
    assert {rule: after[rule]["result"] for rule in rules} == dict.fromkeys(rules, "pass")
    ours = (root / "etc/security/limits.d/99-sascheck-sas.conf").read_text().splitlines()
    assert ours[1:] == ["sas soft nofile 150000", "sas soft nproc 100000",
                        "sas hard nproc 100000", "sas soft stack 10240"]
    assert (root / "etc/security/limits.conf").read_text() == "# shipped: all comments\n"
    assert "no changes" in run_bash(script, root).stdout


def test_the_fix_keeps_a_higher_site_limit_and_raises_a_lower_hard_one(tmp_path, scan):
    """RHEL 7: a site's 'sas soft nofile 30000' is above 20480, but the hard 4096 its sessions
    inherit lowers it: the fix keeps the site's soft limit and writes a hard one to match."""
    root = host(tmp_path / "r", {"/etc/security/limits.conf": "sas soft nofile 30000\n"},
                RHEL7_KERNEL)
    assert judged(scan, root)["result"] == "fail"
    script = nofile_fix(tmp_path, root)
    run_bash(script, root)
    assert judged(scan, root)["result"] == "pass"
    ours = (root / "etc/security/limits.d/99-sascheck-sas.conf").read_text().splitlines()
    assert ours[1:] == ["sas hard nofile 30000"]
    assert (root / "etc/security/limits.conf").read_text() == "sas soft nofile 30000\n"


@pytest.mark.skipif(not ansible_available(), reason="ansible-core not installed")
def test_the_ansible_fix_raises_the_limit_as_the_bash_one(tmp_path, scan):
    """The playbook runs the same planner: the account's line is written, the rule passes
    after it, and a second run changes nothing."""
    root = host(tmp_path / "r", {"/etc/security/limits.conf": "# shipped: all comments\n"})
    assert judged(scan, root)["result"] == "fail"
    playbook = generate("ansible", tmp_path / "fix.yml", root, [*BASELINE_SETS],
                        ["--rule", "sas_accounts_nofile"])
    assert run_playbook(playbook, root)["failed"] == 0
    assert judged(scan, root)["result"] == "pass"
    ours = (root / "etc/security/limits.d/99-sascheck-sas.conf").read_text().splitlines()
    assert ours[1:] == ["sas soft nofile 20480"]
    assert run_playbook(playbook, root)["changed"] == 0


def test_a_hostile_owner_name_is_not_taken_as_an_account(tmp_path, scan):
    """The scanned root's /etc/passwd is host data: an owner whose name is not an account
    name (here a shell command) is not taken, so it never reaches a fix's limits file."""
    root = host(tmp_path / "r")
    (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/bash\n"
                                     "$(touch /tmp/pwned) x:x:1001:1001::/home/x:/bin/sh\n")
    result = scan(root)
    assert "sas_accounts" not in result["host"]
    assert result["by_id"]["sas_accounts_nofile"]["result"] == "notchecked"


SYSTEM_CONF_D = "/etc/systemd/system.conf.d/50-sas.conf"


@pytest.mark.parametrize(("unit", "written", "extra"), [
    ("[Service]\nUser=sas\n", "LimitNOFILE=20480:524288", {}),  # systemd's 1024:524288
    ("[Service]\nUser=sas\nLimitNOFILE=1024:4096\n", "LimitNOFILE=20480", {}),  # hard too
    ("[Service]\nUser=sas\nLimitNOFILE=1024:1048576\n", "LimitNOFILE=20480:1048576", {}),
    ("[Service]\nUser=sas\nLimitNOFILE=65536\n", None, {}),  # the site's own: kept
    ("[Service]\nUser=apache\n", None, {}),  # not a SAS account's
    # every service's default, from a system.conf drop-in (systemd-system.conf(5)): kept
    ("[Service]\nUser=sas\n", None, {SYSTEM_CONF_D: "[Manager]\nDefaultLimitNOFILE=65536\n"}),
])
def test_the_fix_raises_a_sas_service_with_a_drop_in(tmp_path, scan, unit, written, extra):
    """A service running as the SAS account gets a drop-in in /etc (systemd.unit(5): read
    after the unit), soft raised and a higher hard limit kept; the rule passes after it."""
    root = host(tmp_path / "r", {"/etc/security/limits.conf": "sas - nofile 20480\n",
                                 "/usr/lib/systemd/system/sas94.service": unit, **extra})
    script = generate("bash", tmp_path / "fix.sh", root, [*BASELINE_SETS, "sas_accounts=sas"],
                      ["--rule", "sas_accounts_nofile", "--all"])
    run_bash(script, root)
    dropin = root / "etc/systemd/system/sas94.service.d/90-sascheck-limits.conf"
    assert (dropin.read_text().splitlines()[-1] if dropin.exists() else None) == written
    assert judged(scan, root)["result"] == "pass"
    assert "no changes" in run_bash(script, root).stdout


def test_an_unreadable_limits_file_is_an_error_not_a_verdict(tmp_path, scan):
    """limits.d holding something that cannot be read as a file (here a directory named like
    one): what it sets is not known, so the rule says error with its path."""
    root = host(tmp_path / "r", {"/etc/security/limits.conf": "sas - nofile 20480\n"})
    (root / "etc/security/limits.d/90-site.conf").mkdir(parents=True)
    verdict = judged(scan, root)
    assert verdict["result"] == "error", verdict
    assert "90-site.conf" in verdict["message"]


def test_a_continued_unit_line_is_cited_at_its_first_line(tmp_path, scan):
    unit = "[Service]\nUser=sas\nLimitNOFILE=\\\n  1024\n"
    root = host(tmp_path / "r", {"/etc/security/limits.conf": "sas - nofile 20480\n",
                                 "/etc/systemd/system/sas94.service": unit})
    service = judged(scan, root)["evidence"][1]
    assert (service["source"], service["actual"]) == (
        "/etc/systemd/system/sas94.service:3", "1024")


def test_a_user_set_in_a_drop_in_makes_the_service_sas(tmp_path, scan):
    root = host(tmp_path / "r", {
        "/etc/security/limits.conf": "sas - nofile 20480\n",
        "/usr/lib/systemd/system/sas94.service": "[Service]\nExecStart=/bin/true\n",
        "/etc/systemd/system/sas94.service.d/user.conf": "[Service]\nUser=sas\n"})
    verdict = judged(scan, root)
    assert verdict["result"] == "fail"
    assert verdict["evidence"][1]["subject"] == "service sas94.service (User=sas)"
