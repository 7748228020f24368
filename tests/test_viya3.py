"""The viya3 profile (#51): what SAS's viya-ark pre-install playbook sets on a SAS Viya 3.5
host, judged running and at boot, by both engines, and mended by the fix.

The hosts are the baseline RHEL 8 host after viya-ark's playbook ran on it: its
pre.swappiness_config and pre.performance_config tasks (roles/viya-ark.preinstall/tasks at
commit 621649a) call Ansible's sysctl module with sysctl_set, which sets each value now and
appends ``name=value`` to /etc/sysctl.conf (ansible.posix's sysctl.py, as its write_sysctl
writes a new key), in the playbook's order: swappiness, kernel.sem, then somaxconn,
max_map_count and overcommit_memory (defaults/main.yml lines 202-213)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .support.hosts import (
    BASELINE_NOT_PASSING,
    BASELINE_SETS,
    RHEL_NPROC,
    VIYA_ARK_FILE,
    VIYA_ARK_LIMITS,
    sas_host,
)
from .support.oscap import BEYOND_OVAL, oscap_available, oscap_eval, tailor
from .support.remedy import OURS_SYSCTL_D, generate, profile_sysctl, run_bash

VIYA3_RULES = ("vm_max_map_count", "max_map_count_at_boot", "net_core_somaxconn",
               "somaxconn_at_boot", "vm_overcommit_memory", "overcommit_memory_at_boot",
               "vm_swappiness", "swappiness_at_boot", "kernel_sem", "kernel_sem_at_boot",
               "sas_accounts_nofile", "sas_accounts_nproc", "sas_accounts_stack",
               "selinux_viya_deployment")
# RHEL 8's /etc/sysctl.conf as its systemd package ships it, then viya-ark's lines.
RHEL8_SYSCTL_CONF = """\
# sysctl settings are defined through files in
# /usr/lib/sysctl.d/, /run/sysctl.d/, and /etc/sysctl.d/.
#
# Vendors settings live in /usr/lib/sysctl.d/.
# To override a whole file, create a new file with the same in
# /etc/sysctl.d/ and put new settings there. To override
# only specific settings, add a file with a lexically later
# name in /etc/sysctl.d/ and put new settings there.
#
# For more information, see sysctl.conf(5) and sysctl.d(5).
"""
VIYA_ARK_LINES = ("vm.swappiness=1\nkernel.sem=512\t32000\t256\t1024\n"
                  "net.core.somaxconn=2048\nvm.max_map_count=262144\nvm.overcommit_memory=0\n")
# What the running kernel holds after viya-ark (sysctl_set), and on an untouched RHEL 8 host
# under throughput-performance (the kernel's own max_map_count and overcommit_memory).
# kernel.sem as the kernel prints it (ipc/ipc_sysctl.c, tab-separated): viya-ark's minimums
# where they are above the kernel's; RHEL 8's and 9's own (include/uapi/linux/sem.h since
# Linux 3.19: SEMMSL 32000, SEMMNS 1024000000, SEMOPM 500, SEMMNI 32000) are above them all.
AFTER_VIYA_ARK = {"vm.swappiness": 1, "net.core.somaxconn": 2048, "vm.max_map_count": 262144,
                  "vm.overcommit_memory": 0, "kernel.sem": "32000\t1024000000\t500\t32000"}
UNTOUCHED = {"vm.swappiness": 10, "net.core.somaxconn": 128, "vm.max_map_count": 65530,
             "vm.overcommit_memory": 0, "kernel.sem": "32000\t1024000000\t500\t32000"}
# RHEL 7's kernel (3.10): SEMMSL 250, SEMMNS 32000, SEMOPM 32, SEMMNI 128.
RHEL7_SEM = "250\t32000\t32\t128"


def viya_host(path: Path, running: dict[str, object], sysctl_conf: str | None,
              kernel: str = "4.18.0-513.el8.x86_64", **changes: object) -> Path:
    extra = {"/etc/sysctl.conf": sysctl_conf} if sysctl_conf is not None else {}
    pretty = ("Red Hat Enterprise Linux 9.4 (Plow)" if kernel.startswith("5.14.")
              else "Red Hat Enterprise Linux 8.9 (Ootpa)")
    extra.update(changes.pop("extra_files", {}))  # type: ignore[call-overload]
    sas_host(path, kernel=kernel, pretty_name=pretty, swappiness=running["vm.swappiness"],
             extra_files={**extra, **{
                 "/proc/sys/" + key.replace(".", "/"): f"{value}\n"
                 for key, value in running.items() if key != "vm.swappiness"}}, **changes)
    return path


def verdicts(scan, root: Path) -> dict[str, str]:
    result = scan(root, profile="viya3")
    assert result["values"]["swappiness"] == 1  # the profile's own value
    return {rule_id: result["by_id"][rule_id]["result"] for rule_id in VIYA3_RULES}


RHEL9_KERNEL = "5.14.0-427.13.1.el9_4.x86_64"


@pytest.mark.parametrize("kernel", [RHEL9_KERNEL, "4.18.0-513.el8.x86_64"])
def test_a_host_viya_ark_prepared_passes_the_whole_profile(tmp_path, scan, kernel):
    """Every rule viya3 selects passes (the default profile's too: the baseline host is
    tuned as the papers ask), not only the Viya ones."""
    root = viya_host(tmp_path / "r", AFTER_VIYA_ARK, RHEL8_SYSCTL_CONF + VIYA_ARK_LINES,
                     kernel=kernel, sas_limits=None,
                     extra_files={"/etc/security/limits.d/20-nproc.conf": RHEL_NPROC,
                                  VIYA_ARK_FILE: VIYA_ARK_LIMITS})
    assert verdicts(scan, root) == dict.fromkeys(VIYA3_RULES, "pass")
    result = scan(root, profile="viya3")
    assert {rule["id"]: rule["result"] for rule in result["rules"]
            if rule["result"] != "pass"} == {
        rule_id: verdict for rule_id, (verdict, _) in BASELINE_NOT_PASSING.items()}


def test_an_untouched_host_fails_what_viya_ark_would_set(tmp_path, scan):
    """Under throughput-performance (swappiness 10) with the kernel's own values: every
    running rule but overcommit fails; at boot too, somaxconn with RHEL 8's own 128."""
    root = viya_host(tmp_path / "r", UNTOUCHED, RHEL8_SYSCTL_CONF)
    assert verdicts(scan, root) == {
        "vm_max_map_count": "fail", "max_map_count_at_boot": "fail",
        "net_core_somaxconn": "fail", "somaxconn_at_boot": "fail",
        "vm_overcommit_memory": "pass", "overcommit_memory_at_boot": "pass",
        "vm_swappiness": "fail", "swappiness_at_boot": "fail",
        # RHEL 8's own semaphore limits are above viya-ark's, running and at boot
        "kernel_sem": "pass", "kernel_sem_at_boot": "pass",
        # the administrator's 20480 open files, and nothing set for processes (the kernel
        # sizes init's from memory: no /proc/1/limits in an image) or the stack (8192 KiB)
        "sas_accounts_nofile": "fail", "sas_accounts_nproc": "notchecked",
        "sas_accounts_stack": "fail", "selinux_viya_deployment": "pass"}
    result = scan(root, profile="viya3")
    assert "kernel default (4.18.0-513.el8.x86_64)" in \
        result["by_id"]["somaxconn_at_boot"]["evidence"][0]["source"]


@pytest.mark.parametrize(("kernel", "expected"), [
    ("3.10.0-1160.el7.x86_64", "fail"),  # the kernel's 128
    ("5.14.0-427.13.1.el9_4.x86_64", "pass"),  # 4096 from Linux 5.4 (RHEL 9)
    ("4.18.0-513.el8.x86_64", "fail"),  # RHEL 8's 4.18 keeps 128 (rules/host_layout/boot.py)
])
def test_somaxconn_at_boot_takes_the_kernels_default_by_release(tmp_path, scan, kernel,
                                                                 expected):
    root = viya_host(tmp_path / "r", AFTER_VIYA_ARK, RHEL8_SYSCTL_CONF, kernel=kernel)
    assert scan(root, profile="viya3")["by_id"]["somaxconn_at_boot"]["result"] == expected


def test_the_default_profile_leaves_the_viya_rules_out(tmp_path, scan):
    root = viya_host(tmp_path / "r", UNTOUCHED, RHEL8_SYSCTL_CONF)
    result = scan(root)
    assert not set(VIYA3_RULES[:6]) & set(result["by_id"])
    assert result["by_id"]["vm_swappiness"]["result"] == "pass"  # 10 is the default's value


@pytest.mark.parametrize("kernel", [RHEL9_KERNEL, "4.18.0-513.el8.x86_64"])
def test_the_bash_fix_mends_an_untouched_image_for_its_next_boot(tmp_path, scan, kernel):
    """On an image the fix writes what the next boot applies (an image's /proc is not
    written): every at-boot rule passes after it, somaxconn's RHEL 8 error included (a file
    then sets it), and the site's own sysctl.conf is left as it was."""
    running = {**UNTOUCHED, "net.core.somaxconn": 4096} if kernel == RHEL9_KERNEL else UNTOUCHED
    root = viya_host(tmp_path / "r", running, RHEL8_SYSCTL_CONF, kernel=kernel)
    before = verdicts(scan, root)
    script = generate("bash", tmp_path / "fix.sh", root, [*BASELINE_SETS],
                      ["--profile", "viya3"])
    run_bash(script, root)
    after = verdicts(scan, root)
    # what the next boot or session reads: sysctl files, and pam_limits' for the SAS account
    # (its processes, with nothing set, stay as the kernel sizes them: notchecked)
    at_boot = [rule_id for rule_id in VIYA3_RULES if rule_id.endswith("_at_boot")
               or rule_id in ("sas_accounts_nofile", "sas_accounts_stack")]
    assert {rule_id: after[rule_id] for rule_id in at_boot} == dict.fromkeys(at_boot, "pass")
    assert {rule_id: after[rule_id] for rule_id in VIYA3_RULES if rule_id not in at_boot} == \
        {rule_id: before[rule_id] for rule_id in VIYA3_RULES if rule_id not in at_boot}
    assert (root / "etc/sysctl.conf").read_text() == RHEL8_SYSCTL_CONF
    # tuned starts at boot with sascheck's profile and no sysctl file sets these keys: the
    # values go into that profile's [sysctl] (issue 51), and nothing into /etc/sysctl.d
    assert not (root / OURS_SYSCTL_D).exists()
    persisted = profile_sysctl(root)
    # minimums as tuned's ">N" (issue 64): raised where the key boots lower, never lowered
    assert {key: persisted[key] for key in ("vm.max_map_count", "vm.swappiness")} == \
        {"vm.max_map_count": ">262144", "vm.swappiness": "<1"}
    # RHEL 9's kernel default 4096 passes, so nothing is written for it; on RHEL 8 the
    # running 128 fails and the default at boot is not known: it is set
    assert persisted.get("net.core.somaxconn") == (None if kernel == RHEL9_KERNEL else ">2048")
    assert "vm.overcommit_memory" not in persisted  # it passed: nothing written for it


@pytest.mark.skipif(not oscap_available(), reason="oscap not installed")
@pytest.mark.parametrize("prepared", [True, False], ids=["viya-ark ran", "untouched"])
def test_oscap_agrees(tmp_path, scan, prepared):
    """oscap on the same roots with the viya3 profile: the same verdicts (RHEL 8's own
    somaxconn default, 128, now known to both)."""
    root = viya_host(tmp_path / "r", AFTER_VIYA_ARK if prepared else UNTOUCHED,
                     RHEL8_SYSCTL_CONF + (VIYA_ARK_LINES if prepared else ""))
    ours = verdicts(scan, root)
    tailoring = tailor(root, BASELINE_SETS, tmp_path / "tailoring.xml", "viya3")
    theirs = oscap_eval(root, tailoring, tmp_path, "viya3")
    theirs = {rule_id: theirs[rule_id] for rule_id in VIYA3_RULES}
    for rule_id in BEYOND_OVAL & set(VIYA3_RULES):  # no OVAL check: oscap says notchecked
        assert (theirs.pop(rule_id), ours.pop(rule_id)) in (
            ("notchecked", verdict) for verdict in ("pass", "fail", "notchecked"))
    assert ours == theirs


RHEL7_KERNEL = "3.10.0-1160.el7.x86_64"


@pytest.mark.parametrize(("sem", "expected", "failing"), [
    (RHEL7_SEM, "fail", ["semmsl_min", "semopm_min", "semmni_min"]),
    ("250\t64000\t32\t128", "fail", ["semmsl_min", "semopm_min", "semmni_min"]),
    ("512\t32000\t256\t1024", "pass", []),
    ("250\t32000\t32", "error", None),  # not four numbers
    ("250\t32000\tx\t128", "error", None),
])
def test_kernel_sem_is_judged_field_by_field(tmp_path, scan, sem, expected, failing):
    """Each of kernel.sem's four fields against its own site value, as viya-ark compares
    them (tasks/pre.performance_config.yml splits the value and compares field by field)."""
    root = viya_host(tmp_path / "r", {**UNTOUCHED, "kernel.sem": sem}, RHEL8_SYSCTL_CONF,
                     kernel=RHEL7_KERNEL)
    verdict = scan(root, profile="viya3")["by_id"]["kernel_sem"]
    assert verdict["result"] == expected, verdict
    if failing is not None:
        assert [e["subject"].split("(")[1].rstrip(")") for e in verdict["evidence"]
                if e["result"] == "fail"] == failing


@pytest.mark.parametrize(("sem", "persisted"), [
    (RHEL7_SEM, "512 32000 256 1024"),
    ("250\t64000\t32\t128", "512 64000 256 1024"),  # the higher SEMMNS kept
    ("512\t32000\t256\t1024", None),  # passes: nothing written
])
@pytest.mark.parametrize("tuned_enabled", [True, False], ids=["tuned", "no tuned"])
def test_the_bash_fix_raises_only_the_fields_below(tmp_path, scan, sem, persisted,
                                                   tuned_enabled):
    """On a RHEL 7 image the fix persists each field raised to its site value, a higher one
    kept (the next boot's value; an image's /proc is not written): in sascheck's tuned profile
    where tuned starts at boot, else in its sysctl.d file; a second run changes nothing."""
    root = viya_host(tmp_path / "r", {**UNTOUCHED, "kernel.sem": sem}, RHEL8_SYSCTL_CONF,
                     kernel=RHEL7_KERNEL, tuned_enabled=tuned_enabled)
    script = generate("bash", tmp_path / "fix.sh", root, [*BASELINE_SETS],
                      ["--profile", "viya3", "--rule", "kernel_sem"])
    run_bash(script, root)
    ours = root / OURS_SYSCTL_D
    lines = ours.read_text().splitlines() if ours.exists() else []
    in_files = [line for line in lines if line.startswith("kernel.sem")]
    in_profile = profile_sysctl(root).get("kernel.sem")
    if tuned_enabled:
        assert (in_files, in_profile) == ([], persisted)
    else:
        assert (in_files, in_profile) == ([f"kernel.sem = {persisted}"] if persisted else [], None)
    if persisted:
        assert scan(root, profile="viya3")["by_id"]["kernel_sem_at_boot"]["result"] == "pass"
    assert "no changes" in run_bash(script, root).stdout


@pytest.mark.skipif(not oscap_available(), reason="oscap not installed")
@pytest.mark.parametrize("sem", [RHEL7_SEM, "512\t32000\t256\t1024", "250\t64000\t32\t128",
                                 "250\t32000\t32", " 600  32000 300 2000"])
def test_oscap_judges_kernel_sem_as_the_scanner(tmp_path, scan, sem):
    root = viya_host(tmp_path / "r", {**UNTOUCHED, "kernel.sem": sem}, RHEL8_SYSCTL_CONF,
                     kernel=RHEL7_KERNEL)
    ours = scan(root, profile="viya3")["by_id"]["kernel_sem"]["result"]
    tailoring = tailor(root, BASELINE_SETS, tmp_path / "tailoring.xml", "viya3")
    theirs = oscap_eval(root, tailoring, tmp_path, "viya3")["kernel_sem"]
    # a value that is not four numbers: the scanner's error is OVAL's fail (docs/oval.md)
    assert (ours, theirs) in ((theirs, theirs), ("error", "fail")), (ours, theirs)
    assert ours != "error" or sem.count("\t") != 3


SEM_FILE = "/etc/sysctl.d/90-site-sem.conf"


def put(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (root / path.lstrip("/")).write_text(text)


@pytest.mark.parametrize(("kernel", "files", "expected"), [
    (RHEL7_KERNEL, {}, "fail"),  # nothing sets it: 3.10's own 250 32000 32 128
    (RHEL9_KERNEL, {}, "pass"),  # 32000 1024000000 500 32000 since Linux 3.19
    (RHEL7_KERNEL, {"/etc/sysctl.conf": RHEL8_SYSCTL_CONF + VIYA_ARK_LINES}, "pass"),
    (RHEL9_KERNEL, {SEM_FILE: "kernel.sem = 250 32000 32 128\n"}, "fail"),
    (RHEL7_KERNEL, {SEM_FILE: "kernel.sem = 600 64000 300 2048\n"}, "pass"),
    # sysctl.conf, reached through 99-sysctl.conf, sorts after 90-site-sem.conf and wins;
    # OVAL, which cannot sort files, wants every file to agree (docs/oval.md)
    pytest.param(RHEL7_KERNEL, {SEM_FILE: "kernel.sem = 250 32000 32 128\n",
                                "/etc/sysctl.conf": RHEL8_SYSCTL_CONF + VIYA_ARK_LINES}, "pass",
                 id="last-file-wins"),
    # Three numbers set three fields and SEMMNI keeps the kernel's (ipc/ipc_sysctl.c's
    # proc_ipc_sem_dointvec calls proc_dointvec, which stores only the numbers given): 3.10's
    # 128 fails, RHEL 9's 32000 passes (issue 64)
    pytest.param(RHEL7_KERNEL, {SEM_FILE: "kernel.sem = 512 32000 256\n"}, "fail",
                 id="partial-rhel7"),
    pytest.param(RHEL9_KERNEL, {SEM_FILE: "kernel.sem = 512 32000 256\n"}, "pass",
                 id="partial-rhel9"),
    (RHEL7_KERNEL, {SEM_FILE: "kernel.sem = 512 32000 lots\n"}, "error"),  # not numbers
])
def test_kernel_sem_at_boot_takes_the_last_source_or_the_kernels_default(
        tmp_path, scan, request, kernel, files, expected):
    """The value the next boot ends with, field by field: the last file that sets kernel.sem
    gives all four fields; with none, the kernel's own limits by release (include/uapi/linux/
    sem.h, raised in Linux 3.19). oscap agrees, but where the value is not four numbers
    (scanner: error, OVAL: fail; docs/oval.md)."""
    root = viya_host(tmp_path / "r", AFTER_VIYA_ARK, None, kernel=kernel)
    put(root, files)
    if "/etc/sysctl.conf" in files:
        (root / "etc/sysctl.d").mkdir(exist_ok=True)
        (root / "etc/sysctl.d/99-sysctl.conf").symlink_to("../sysctl.conf")
    ours = scan(root, profile="viya3")["by_id"]["kernel_sem_at_boot"]
    assert ours["result"] == expected, ours
    if expected == "fail" and not files:
        assert "kernel default (3.10" in ours["actual"]
    if oscap_available():
        tailoring = tailor(root, BASELINE_SETS, tmp_path / "tailoring.xml", "viya3")
        theirs = oscap_eval(root, tailoring, tmp_path, "viya3")["kernel_sem_at_boot"]
        # a value that is not four numbers is OVAL's fail (docs/oval.md)
        listed = expected == "error" or request.node.callspec.id.startswith(
            ("partial-", "last-file-wins"))
        assert theirs == ("fail" if listed else expected)


@pytest.mark.parametrize(("files", "persisted"), [
    ({}, "kernel.sem = 512 32000 256 1024"),  # RHEL 7's defaults raised
    # a higher SEMMNS the site set in /etc is kept; its line becomes the raised value
    ({SEM_FILE: "kernel.sem = 250 64000 32 128\n"}, "kernel.sem = 512 64000 256 1024"),
])
def test_the_bash_fix_persists_kernel_sem_for_the_next_boot(tmp_path, scan, files, persisted):
    """On a RHEL 7 image without tuned whose running value passes (set by hand, not
    persisted), the fix for kernel_sem_at_boot alone writes the raised value where the next
    boot reads it, and the rule passes after it; a second run changes nothing."""
    root = viya_host(tmp_path / "r", {**UNTOUCHED, "kernel.sem": "512\t32000\t256\t1024"},
                     RHEL8_SYSCTL_CONF, kernel=RHEL7_KERNEL, tuned_enabled=False)
    put(root, files)
    assert scan(root, profile="viya3")["by_id"]["kernel_sem_at_boot"]["result"] == "fail"
    script = generate("bash", tmp_path / "fix.sh", root, [*BASELINE_SETS],
                      ["--profile", "viya3", "--rule", "kernel_sem_at_boot"])
    run_bash(script, root)
    assert scan(root, profile="viya3")["by_id"]["kernel_sem_at_boot"]["result"] == "pass"
    ours = (root / "etc/sysctl.d/99-zz-sascheck.conf").read_text().splitlines()
    assert [line for line in ours if line.startswith("kernel.sem")] == [persisted]
    for path in files:
        assert (root / path.lstrip("/")).read_text() == persisted + "\n"
    assert (root / "etc/sysctl.conf").read_text() == RHEL8_SYSCTL_CONF
    assert "no changes" in run_bash(script, root).stdout
