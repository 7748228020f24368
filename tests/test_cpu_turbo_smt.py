"""cpu_turbo_smt_on (issue 23, paper advice without a rule): Hyper-Threading and Turbo Boost
on, as seed 001's 64-core host ran ("NUMA ON, HT ON, TURBO ON"), now and after the next boot,
in both engines. The files are the kernel's: kernel/cpu.c's smt/active and smt/control
(Documentation/ABI/testing/sysfs-devices-system-cpu), intel_pstate's no_turbo and
cpufreq's boost (Documentation/admin-guide/pm/intel_pstate.rst, cpufreq.rst)."""

from __future__ import annotations

import pytest

from .support.hosts import BASELINE_SETS, SAS_PROFILE, sas_host
from .support.oscap import oscap_available
from .test_parity import _compare

SMT = "/sys/devices/system/cpu/smt"
PSTATE = "/sys/devices/system/cpu/intel_pstate/no_turbo"
BOOST = "/sys/devices/system/cpu/cpufreq/boost"
BLS = "root=/dev/mapper/rhel-root ro transparent_hugepage=never"


def cpu_files(active: str | None = "1", control: str = "on", no_turbo: str | None = "0",
              boost: str | None = None) -> dict[str, str]:
    files = {}
    if active is not None:
        files |= {f"{SMT}/active": active + "\n", f"{SMT}/control": control + "\n"}
    if no_turbo is not None:
        files[PSTATE] = no_turbo + "\n"
    if boost is not None:
        files[BOOST] = boost + "\n"
    return files


CASES = {
    "HT and turbo on (intel_pstate)": ({"extra_files": cpu_files()}, "pass"),
    "HT off in the firmware": ({"extra_files": cpu_files(active="0", control="off")}, "fail"),
    "a CPU without SMT": ({"extra_files": cpu_files(active="0", control="notsupported")},
                          "pass"),
    # kernel/cpu.c says notsupported for HT switched off in the firmware too; a CPU with
    # cpuinfo's ht flag may be such a one (issue 35): not judged, and OVAL refuses to pass.
    "SMT notsupported on a CPU with the ht flag": (
        {"extra_files": cpu_files(active="0", control="notsupported"),
         "cpu_flags": "fpu vme de pse tsc msr pae ht"}, "notchecked"),
    "turbo off (intel_pstate)": ({"extra_files": cpu_files(no_turbo="1")}, "fail"),
    "boost off (acpi-cpufreq)": ({"extra_files": cpu_files(no_turbo=None, boost="0")}, "fail"),
    "nosmt on the command line": ({"extra_files": cpu_files(), "bls_options": BLS + " nosmt"},
                                  "fail"),
    "mitigations=auto,nosmt": ({"extra_files": cpu_files(),
                                "bls_options": BLS + " mitigations=auto,nosmt"}, "pass"),
    "tuned turns turbo off at boot": ({"extra_files": cpu_files(), "tuned_custom": {
        "sas-performance": SAS_PROFILE + "\n[cpu]\nno_turbo=1\n"}}, "fail"),
    "no control exposed (a guest)": ({}, "notapplicable"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_turbo_and_smt(host, scan, name):
    changes, expected = CASES[name]
    rule = scan(host(**changes))["by_id"]["cpu_turbo_smt_on"]
    assert rule["result"] == expected, rule


def test_a_security_choice_is_reported_not_failed(host, scan):
    changes, _ = CASES["mitigations=auto,nosmt"]
    rule = scan(host(**changes))["by_id"]["cpu_turbo_smt_on"]
    reported = [e for e in rule["evidence"] if e["result"] == "informational"]
    assert [e["actual"] for e in reported] == ["mitigations=auto,nosmt"]
    assert "vulnerable to L1TF or MDS" in reported[0]["note"]


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_oscap_agrees(host, tmp_path, name):
    _compare(name, host(**CASES[name][0]), BASELINE_SETS, tmp_path / "work")


def test_the_turbo_values_say_what_they_mean(tmp_path, scan):
    """Issue 48: intel_pstate's no_turbo 0 was shown bare as a pass; it means turbo is on."""
    for no_turbo, shown in (("0", "0 (turbo on)"), ("1", "1 (turbo off)")):
        root = sas_host(tmp_path / no_turbo, extra_files=cpu_files(no_turbo=no_turbo))
        evidence = scan(root)["by_id"]["cpu_turbo_smt_on"]["evidence"]
        assert [item["actual"] for item in evidence
                if item["subject"] == "Turbo now (intel_pstate)"] == [shown]
