"""The never-worse measure for the viya3 profile (issue 64): on each host the issue read, as its
release ships its files, the bash fix runs and the host is scanned again. No rule that passed
fails afterwards, no value the host had moves away from the site value (a minimum is never
lowered, a maximum never raised), and every at-boot or session rule that failed passes or is
named in the run's output as work for a person.

Values are compared as the scanner reports them, evidence line by evidence line (the file and
key each comes from), so a value the fix lowered shows even where the verdict stays a pass."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest

from rules import Catalogue

from .support.account_hosts import RHEL8_KERNEL, host, with_module
from .support.hosts import BASELINE_SETS, RHEL_NPROC, VIYA_ARK_FILE, VIYA_ARK_LIMITS
from .support.remedy import generate, run_bash
from .test_selinux import selinux_host
from .test_tuned_sysctl_modifiers import RHEL8, RHEL9
from .test_tuned_sysctl_modifiers import _host as tuned_host
from .test_viya3 import (
    AFTER_VIYA_ARK,
    RHEL8_SYSCTL_CONF,
    RHEL9_KERNEL,
    UNTOUCHED,
    VIYA_ARK_LINES,
    viya_host,
)

LIMITS_D = "/etc/security/limits.d"
VIYA_LIMITS = "sas - nofile 150000\nsas - nproc 100000\nsas - stack 10240\n"
# Check kinds whose values are minimums whatever their parameters say.
MINIMUM_KINDS = {"account_limit", "sysctl_fields", "sysctl_fields_at_boot", "block_read_ahead"}


def _untouched_rhel8(path: Path) -> Path:
    return viya_host(path, UNTOUCHED, RHEL8_SYSCTL_CONF)


def _untouched_rhel9(path: Path) -> Path:  # Linux 5.4 on: somaxconn 4096
    return viya_host(path, {**UNTOUCHED, "net.core.somaxconn": 4096}, RHEL8_SYSCTL_CONF,
                     kernel=RHEL9_KERNEL)


def _viya_ark_ran(path: Path) -> Path:
    return viya_host(path, AFTER_VIYA_ARK, RHEL8_SYSCTL_CONF + VIYA_ARK_LINES,
                     kernel=RHEL9_KERNEL, sas_limits=None,
                     extra_files={"/etc/security/limits.d/20-nproc.conf": RHEL_NPROC,
                                  VIYA_ARK_FILE: VIYA_ARK_LIMITS})


def _stock_throughput(release: tuple[str, str], tuned: tuple[int, int, int]
                      ) -> Callable[[Path], Path]:
    """throughput-performance as tuned 2.22.1 (RHEL 8.10) and 2.25.1 (RHEL 9.6) ship it, with
    its 'net.core.somaxconn=>2048'."""
    return lambda path: tuned_host(path, release, tuned)


def _no_limit_line(path: Path) -> Path:
    return host(path, {f"{LIMITS_D}/10-sas-nolimits.conf": "@sas -\n",
                       f"{LIMITS_D}/99-viya.conf": VIYA_LIMITS})


def _dash_stack(path: Path) -> Path:
    return host(path, {f"{LIMITS_D}/99-viya.conf": "sas - stack -\n"})


def _unlimited_nofile_old_pam(path: Path) -> Path:
    return with_module(host(path, {f"{LIMITS_D}/50-sas.conf": "sas - nofile unlimited\n"},
                             RHEL8_KERNEL, proc__sys__fs__nr_open="1048576\n"), False)


def _partial_sem(path: Path) -> Path:
    return viya_host(path, AFTER_VIYA_ARK, RHEL8_SYSCTL_CONF + "kernel.sem = 512 32000 256\n",
                     kernel=RHEL9_KERNEL)


def _site_above_the_minimums(path: Path) -> Path:
    """A site that set more than viya-ark asks, running and at boot."""
    running = {**AFTER_VIYA_ARK, "vm.max_map_count": 1048576, "net.core.somaxconn": 8192}
    return viya_host(path, running, RHEL8_SYSCTL_CONF + "vm.max_map_count = 1048576\n"
                     "net.core.somaxconn = 8192\nvm.swappiness = 0\n", kernel=RHEL9_KERNEL,
                     sas_limits=None, extra_files={
                         f"{LIMITS_D}/50-sas.conf": "sas - nofile 300000\nsas - stack unlimited\n"
                                                    "sas - nproc 200000\n"})


def _selinux_first_line(path: Path) -> Path:
    root = selinux_host(path, "permissive")
    config = root / "etc/selinux/config"
    config.write_text(config.read_text().replace("SELINUX=permissive\n",
                                                 "SELINUX=enforcing\nSELINUX=permissive\n"))
    return root


HOSTS: dict[str, Callable[[Path], Path]] = {
    "rhel8 untouched": _untouched_rhel8, "rhel9 untouched": _untouched_rhel9,
    "viya-ark ran": _viya_ark_ran,
    "rhel8 stock throughput": _stock_throughput(RHEL8, (2, 22, 1)),
    "rhel9 stock throughput": _stock_throughput(RHEL9, (2, 25, 1)),
    "no-limit line": _no_limit_line, "dash stack": _dash_stack,
    "unlimited nofile, pam 1.3.1": _unlimited_nofile_old_pam, "partial kernel.sem": _partial_sem,
    "site above the minimums": _site_above_the_minimums, "selinux first line": _selinux_first_line,
}


def _number(actual: str) -> float | None:
    word = actual.split(" ", 1)[0]
    if word == "unlimited":
        return math.inf
    return float(word) if word.isdigit() else None


def _direction(catalogue: Catalogue, rule_id: str) -> str | None:
    rule = catalogue.rules[rule_id]
    if rule.kind in MINIMUM_KINDS:
        return "at_least"
    compare = rule.params.get("compare")
    return compare if compare in ("at_least", "at_most") else None


def _values(result: dict) -> dict[tuple[str, str], float]:
    """(rule, evidence subject) -> the number the scanner read there."""
    values = {}
    for rule in result["rules"]:
        for evidence in rule.get("evidence", []):
            number = _number(str(evidence.get("actual", "")))
            if number is not None:
                values[(rule["id"], evidence["subject"])] = number
    return values


def _moved_away(catalogue: Catalogue, before: dict, after: dict) -> list[str]:
    worse = []
    old, new = _values(before), _values(after)
    for (rule_id, subject), value in old.items():
        direction = _direction(catalogue, rule_id)
        if direction is None or (rule_id, subject) not in new:
            continue
        now = new[(rule_id, subject)]
        if (now < value) if direction == "at_least" else (now > value):
            worse.append(f"{rule_id} {subject}: {value} -> {now}")
    return worse


@pytest.mark.parametrize("name", HOSTS)
@pytest.mark.parametrize("every_rule", [False, True], ids=["failing", "all"])
def test_the_fix_never_leaves_a_viya3_host_worse(tmp_path, scan, catalogue, name, every_rule):
    root = HOSTS[name](tmp_path / "root")
    sets = [*BASELINE_SETS, "sas_accounts=sas"]
    before = scan(root, "sas_accounts=sas", profile="viya3")
    script = generate("bash", tmp_path / "fix.sh", root, sets,
                      ["--profile", "viya3", *(["--all"] if every_rule else [])])
    ran = run_bash(script, root)
    after = scan(root, "sas_accounts=sas", profile="viya3")
    verdict_before = {rule["id"]: rule["result"] for rule in before["rules"]}
    verdict_after = {rule["id"]: rule["result"] for rule in after["rules"]}
    regressed = {rule_id: f"pass -> {verdict_after[rule_id]}"
                 for rule_id, result in verdict_before.items()
                 if result == "pass" and verdict_after[rule_id] != "pass"}
    assert regressed == {}, ran.stdout + ran.stderr
    assert _moved_away(catalogue, before, after) == [], ran.stdout + ran.stderr
    # what the next boot or session reads is mended, or the run names it for a person
    persistent = [rule_id for rule_id, result in verdict_before.items()
                  if result == "fail" and (rule_id.endswith("_at_boot")
                                           or rule_id.startswith("sas_accounts_"))]
    unmended = [rule_id for rule_id in persistent if verdict_after[rule_id] != "pass"]
    if unmended:
        assert "needs a human" in ran.stdout, (unmended, ran.stdout + ran.stderr)
    # a second run changes nothing
    assert run_bash(script, root).stdout.rstrip().endswith("no changes")


def test_the_measure_sees_a_lowered_minimum(catalogue):
    """The comparison itself can fail: a max_map_count lowered, a swappiness raised."""
    def result(max_map: str, swappiness: str) -> dict:
        return {"rules": [
            {"id": "max_map_count_at_boot",
             "evidence": [{"subject": "vm.max_map_count", "actual": max_map}]},
            {"id": "swappiness_at_boot",
             "evidence": [{"subject": "vm.swappiness", "actual": swappiness}]}]}
    assert _moved_away(catalogue, result("1048576", "1"), result("262144", "10")) == [
        "max_map_count_at_boot vm.max_map_count: 1048576.0 -> 262144.0",
        "swappiness_at_boot vm.swappiness: 1.0 -> 10.0"]
    assert _moved_away(catalogue, result("65530", "60"), result("262144", "1")) == []
