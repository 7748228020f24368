"""The SAS accounts' resource limits (#51): sas_accounts_nofile (every profile, 20480; viya3
150000), sas_accounts_nproc and sas_accounts_stack (viya3), judged as pam_limits, systemd and
the running processes give them, and raised by the bash fix.

pam_limits' order is Linux-PAM's modules/pam_limits/pam_limits.c (commit ddab692):
pam_sm_open_session reads limits.conf, then limits.d/*.conf sorted; process_limit keeps an
entry only when no more specific one (user 0, group 1, '*' 4: LIMITS_DEF_*) set the limit
before it; setup_limits lowers a soft limit above the hard one to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from .support.hosts import BASELINE_SETS, RHEL_NPROC, VIYA_ARK_FILE, VIYA_ARK_LIMITS, sas_host
from .support.remedy import ansible_available, generate, run_bash, run_playbook

RHEL9_KERNEL = "5.14.0-427.13.1.el9_4.x86_64"
RHEL8_KERNEL = "4.18.0-513.el8.x86_64"
RHEL7_KERNEL = "3.10.0-1160.el7.x86_64"
# /proc/1/limits of a RHEL 9 host with 16 GiB (init's nproc is the kernel's max_threads / 2).
INIT_LIMITS = """\
Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max stack size            8388608              unlimited            bytes
Max processes             63283                63283                processes
Max open files            1073741816           1073741816           files
"""


def host(path: Path, limits: dict[str, str] | None = None, kernel: str = RHEL9_KERNEL,
         **files: str) -> Path:
    """The baseline host with its pam_limits files replaced by ``limits`` (path -> text)."""
    extra = {**(limits or {}), **{"/" + name.replace("__", "/"): text
                                  for name, text in files.items()}}
    return sas_host(path, kernel=kernel, sas_limits=None, extra_files=extra)


def _nofile_fix(tmp_path: Path, root: Path, *extra: str) -> Path:
    """The bash fix of sas_accounts_nofile alone, for ROOT."""
    return generate("bash", tmp_path / "fix.sh", root, [*BASELINE_SETS],
                    ["--rule", "sas_accounts_nofile", *extra])


def judged(scan, root: Path, rule: str = "sas_accounts_nofile", profile: str = "default",
           *sets: str) -> dict:
    return scan(root, *sets, profile=profile)["by_id"][rule]


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
    script = _nofile_fix(tmp_path, root)
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


# -- pam_limits' own reading (issue 64), linux-pam v1.5.1 modules/pam_limits/pam_limits.c -----
# The module as Debian's libpam-modules 1.5.2 installs it (this machine's own): it reads
# /proc/sys/fs/nr_open for an unlimited nofile (commit 3234488f, first in 1.5.2). The one
# before 1.5.2 is the same file with that path blanked: such builds do not carry it.
DEBIAN_PAM_LIMITS = next(iter(sorted(Path("/usr/lib").glob("*-linux-gnu*/security/pam_limits.so"))),
                         Path("/usr/lib/x86_64-linux-gnu/security/pam_limits.so"))
RHEL_PAM_LIMITS = "/usr/lib64/security/pam_limits.so"
VIYA_LIMITS = "sas - nofile 150000\nsas - nproc 100000\nsas - stack 10240\n"


def _pam_module(nr_open: bool) -> bytes:
    if not DEBIAN_PAM_LIMITS.is_file():
        pytest.skip("needs Debian's libpam-modules (pam_limits.so) to copy into the image")
    module = DEBIAN_PAM_LIMITS.read_bytes()
    assert b"/proc/sys/fs/nr_open" in module
    return module if nr_open else module.replace(b"/proc/sys/fs/nr_open", b"/proc/sys/fs/xx_xxxx")


def _with_module(root: Path, nr_open: bool | None) -> Path:
    if nr_open is not None:
        module = root / RHEL_PAM_LIMITS.lstrip("/")
        module.parent.mkdir(parents=True, exist_ok=True)
        module.write_bytes(_pam_module(nr_open))
    return root


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
    root = _with_module(host(tmp_path / "r", {
        "/etc/security/limits.d/99-sas.conf": "sas - nofile unlimited\n"}), nr_open)
    verdict = judged(scan, root)
    assert verdict["result"] == expected, verdict
    assert said in verdict["evidence"][0]["note"]


def test_a_nofile_hard_limit_above_nr_open_refuses_the_session(tmp_path, scan):
    root = _with_module(host(tmp_path / "r", {
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

    root = _with_module(host(tmp_path / "r", {
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
    script = _nofile_fix(tmp_path, root)
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
    script = _nofile_fix(tmp_path, root)
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
    root = _with_module(host(tmp_path / "r", site, RHEL8_KERNEL,
                             proc__sys__fs__nr_open="1048576\n"), False)
    assert judged(scan, root)["evidence"][0]["actual"] == "session refused"
    script = _nofile_fix(tmp_path, root)
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
    root = _with_module(host(tmp_path / "r", {viya: "sas - nofile unlimited\n"}, RHEL8_KERNEL,
                             proc__sys__fs__nr_open="1048576\n"), False)
    script = _nofile_fix(tmp_path, root)
    ran = run_bash(script, root)
    assert ran.returncode == 3
    assert f"{viya}:1 gives sas a nofile hard limit above fs.nr_open (1048576)" in ran.stderr
    assert not (root / "etc/security/limits.d/99-sascheck-sas.conf").exists()
    assert (root / viya.lstrip("/")).read_text() == "sas - nofile unlimited\n"


def test_an_unlimited_nofile_this_pam_limits_maps_is_left_alone(tmp_path, scan):
    """linux-pam 1.5.2 gives 'unlimited' as fs.nr_open: the session opens, the rule passes,
    and even a fix of every rule (--all) writes nothing for it."""
    root = _with_module(host(tmp_path / "r", {
        "/etc/security/limits.d/50-sas.conf": "sas - nofile unlimited\n"}, RHEL8_KERNEL,
        proc__sys__fs__nr_open="1048576\n"), True)
    assert judged(scan, root)["result"] == "pass"
    script = _nofile_fix(tmp_path, root, "--all")
    run_bash(script, root)
    assert not (root / "etc/security/limits.d/99-sascheck-sas.conf").exists()
