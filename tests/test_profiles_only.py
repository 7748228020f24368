"""Rules that only some profiles select: cpu_dma_latency (xtremio) in both engines and its
fix, and how a rule names its profiles in the catalogue."""

from __future__ import annotations

import pytest

from sascheck.rules import CatalogueError, load_catalogue

from .support.boot_samples import tuned_version_file
from .support.hosts import BASELINE_SETS, SAS_PROFILE, sas_host
from .support.oscap import oscap_available, oscap_verdict
from .support.remedy import generate, run_bash
from .test_check_kinds import _copy_catalogue
from .test_parity import _compare

CPU = "\n[cpu]\nforce_latency={}\n"
LATENCY_CASES = {
    "force_latency=1": (SAS_PROFILE + CPU.format(1), "pass"),
    "force_latency=2": (SAS_PROFILE + CPU.format(2), "fail"),
    # tuned 2.13+'s C-state form names states, not microseconds.
    "force_latency=cstate.id:1|3": (SAS_PROFILE + CPU.format("cstate.id:1|3"), "fail"),
    "not set": (SAS_PROFILE, "fail"),
}


def cpuidle(driver: str, states: list[tuple[str, int]]) -> dict[str, str]:
    """The kernel's C-state table in sysfs (drivers/cpuidle/sysfs.c): state0 is POLL."""
    files = {"/sys/devices/system/cpu/cpuidle/current_driver": driver + "\n"}
    for index, (name, latency) in enumerate([("POLL", 0), *states]):
        base = f"/sys/devices/system/cpu/cpu0/cpuidle/state{index}"
        files |= {f"{base}/name": name + "\n", f"{base}/latency": f"{latency}\n"}
    return files


# drivers/idle/intel_idle.c (v5.13+): icx_cstates (Ice Lake-SP) C1 1 us, C1E 4, C6 170;
# skx_cstates (Skylake-SP) C1 2 us, C1E 10, C6 133.
ICELAKE_SP = cpuidle("intel_idle", [("C1", 1), ("C1E", 4), ("C6", 170)])
SKYLAKE_SP = cpuidle("intel_idle", [("C1", 2), ("C1E", 10), ("C6", 133)])
BLS = "root=/dev/mapper/rhel-root ro transparent_hugepage=never"
# tuned's plugin_cpu._parse_latency resolves cstate.* through that table; the command line
# limits C-states itself (idle=poll: arch/x86/kernel/process.c idle_setup; max_cstate:
# intel_idle.c "intel_idle.max_cstate=0 disables driver", then acpi_idle's
# processor.max_cstate). Each case: (host changes, expected verdict).
TABLE_CASES = {
    "cstate.id:1 on Ice Lake-SP": (
        {"tuned_custom": {"sas-performance": SAS_PROFILE + CPU.format("cstate.id:1")},
         "extra_files": ICELAKE_SP}, "pass"),
    "cstate.name:C1 on Skylake-SP": (
        {"tuned_custom": {"sas-performance": SAS_PROFILE + CPU.format("cstate.name:C1")},
         "extra_files": SKYLAKE_SP}, "fail"),
    "cstate.id_no_zero:0|cstate.id:2 skips POLL": (
        {"tuned_custom": {"sas-performance": SAS_PROFILE + CPU.format(
            "cstate.id_no_zero:0|cstate.id:2")}, "extra_files": ICELAKE_SP}, "fail"),
    "idle=poll on the command line": ({"bls_options": BLS + " idle=poll"}, "pass"),
    "intel_idle.max_cstate=1 on Ice Lake-SP": (
        {"bls_options": BLS + " intel_idle.max_cstate=1", "extra_files": ICELAKE_SP}, "pass"),
    "intel_idle.max_cstate=1 on Skylake-SP": (
        {"bls_options": BLS + " intel_idle.max_cstate=1", "extra_files": SKYLAKE_SP}, "fail"),
    # intel_idle ignores processor.max_cstate: the deep states stay
    "processor.max_cstate=1 under intel_idle": (
        {"bls_options": BLS + " processor.max_cstate=1", "extra_files": ICELAKE_SP}, "fail"),
    "intel_idle.max_cstate=0 processor.max_cstate=1 without a table": (
        {"bls_options": BLS + " intel_idle.max_cstate=0 processor.max_cstate=1"}, "notchecked"),
}
# OVAL reads idle=poll and numeric force_latency; the C-state table it cannot join.
TABLE_DIFFERENCES = {"cstate.id:1 on Ice Lake-SP": ("pass", "fail"),
                     "intel_idle.max_cstate=1 on Ice Lake-SP": ("pass", "fail"),
                     "intel_idle.max_cstate=0 processor.max_cstate=1 without a table":
                         ("notchecked", "fail")}
# tuned-main.conf as tuned v2.25.0 ships it (its first lines), with the daemon line each case
# gives. tuned/daemon/application.py run: get_bool takes 1/y/yes/t/true as on, anything else
# (even "on") as off; off, daemon.py's _thread_code applies the profile and destroys the
# units, and plugin_cpu.py _instance_cleanup closes /dev/cpu_dma_latency: the request ends.
TUNED_MAIN_2_25 = ("# Global tuned configuration file.\n\n"
                   "# Whether to use daemon. Without daemon it just applies tuning. It is\n"
                   "# not recommended, because many functions don't work without daemon,\n"
                   "# e.g. there will be no D-Bus, no rollback of settings, no hotplug,\n"
                   "# no dynamic tuning, ...\n"
                   "daemon = {}\n\n"
                   "# Dynamically tune devices, if disabled only static tuning will be used.\n"
                   "dynamic_tuning = 0\n")
DAEMON_CASES = {"daemon = 1": ("1", "pass"), "daemon = 0": ("0", "fail"),
                "daemon = on": ("on", "fail"), "daemon = True": ("True", "pass")}
# A flash host: noop/none and 16 MiB read-ahead, as the xtremio profile wants.
XTREMIO_HOST = {"read_ahead_kb": 16384, "path_scheduler": "[none] mq-deadline",
                "mpath_scheduler": "[none] mq-deadline"}


def test_only_the_xtremio_profile_selects_cpu_dma_latency():
    catalogue = load_catalogue()
    assert "cpu_dma_latency" in catalogue.profiles["xtremio"].rule_ids
    assert "cpu_dma_latency" not in catalogue.profiles["default"].rule_ids
    assert set(catalogue.profiles["default"].rule_ids) < set(catalogue.profiles["xtremio"].rule_ids)


def test_a_rule_naming_an_unknown_profile_is_refused(tmp_path):
    directory = _copy_catalogue(tmp_path)
    rule = directory / "cpu_dma_latency.yml"
    rule.write_text(rule.read_text().replace("profiles: [xtremio]", "profiles: [xtremeio]"))
    with pytest.raises(CatalogueError) as error:
        load_catalogue(directory)
    assert "cpu_dma_latency.yml: field 'profiles': unknown profile 'xtremeio'" in str(error.value)


@pytest.mark.parametrize("name", sorted(LATENCY_CASES))
def test_force_latency(host, scan, name):
    profile, expected = LATENCY_CASES[name]
    result = scan(host(tuned_custom={"sas-performance": profile}, **XTREMIO_HOST),
                  profile="xtremio")
    assert result["by_id"]["cpu_dma_latency"]["result"] == expected
    assert "cpu_dma_latency" not in scan(host())["by_id"]


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
@pytest.mark.parametrize("name", sorted(LATENCY_CASES))
def test_oscap_agrees_on_force_latency(tmp_path, name):
    root = sas_host(tmp_path / "root", tuned_custom={"sas-performance": LATENCY_CASES[name][0]},
                    **XTREMIO_HOST)
    _compare(name, root, BASELINE_SETS, tmp_path / "work", profile="xtremio")


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
@pytest.mark.parametrize("name", sorted(DAEMON_CASES))
def test_force_latency_needs_the_daemon(tmp_path, scan, name):
    value, expected = DAEMON_CASES[name]
    root = sas_host(tmp_path / "root", tuned_custom={"sas-performance": LATENCY_CASES[
        "force_latency=1"][0]}, extra_files={"/etc/tuned/tuned-main.conf":
                                             TUNED_MAIN_2_25.format(value)}, **XTREMIO_HOST)
    rule = scan(root, profile="xtremio")["by_id"]["cpu_dma_latency"]
    assert rule["result"] == expected
    if expected == "fail":
        assert "tuned applies the profile and exits" in rule["evidence"][0]["note"]
    _compare(name, root, BASELINE_SETS, tmp_path / "work", profile="xtremio")


@pytest.mark.parametrize("name", sorted(TABLE_CASES))
def test_cpu_latency_through_the_c_state_table_and_command_line(host, scan, name):
    changes, expected = TABLE_CASES[name]
    rule = scan(host(**changes, **XTREMIO_HOST), profile="xtremio")["by_id"]["cpu_dma_latency"]
    assert rule["result"] == expected, rule["actual"]


def test_the_resolved_c_state_is_named(host, scan):
    changes, _ = TABLE_CASES["cstate.id:1 on Ice Lake-SP"]
    rule = scan(host(**changes, **XTREMIO_HOST), profile="xtremio")["by_id"]["cpu_dma_latency"]
    assert rule["evidence"][0]["note"] == "cstate.id:1 = C1, 1 us"


def _on_icelake(force_latency: str, version: tuple[int, int, int]) -> dict:
    return {"tuned_custom": {"sas-performance": SAS_PROFILE + CPU.format(force_latency)},
            "extra_files": {**ICELAKE_SP, **tuned_version_file(version, "python3.9")}}


# plugin_cpu.py by release: v2.12.0's _set_latency int()s the value; v2.13.0's _parse_latency
# adds '|', cstate.id:, cstate.name: and none; v2.18.0 the _no_zero forms.
VERSION_CASES = {
    "2.12: a number": (_on_icelake("1", (2, 12, 0)), "pass"),
    "2.12: cstate.id:1 sets nothing": (_on_icelake("cstate.id:1", (2, 12, 0)), "fail"),
    "2.13: cstate.id:1": (_on_icelake("cstate.id:1", (2, 13, 0)), "pass"),
    # 2.17 reads id_no_zero as invalid and goes on to cstate.id:3 (C6, 170 us)
    "2.17: no _no_zero yet": (_on_icelake("cstate.id_no_zero:1|cstate.id:3", (2, 17, 0)),
                              "fail"),
    "2.18: cstate.id_no_zero:1": (_on_icelake("cstate.id_no_zero:1|cstate.id:3", (2, 18, 0)),
                                  "pass"),
}


@pytest.mark.parametrize("name", sorted(VERSION_CASES))
def test_force_latency_as_each_tuned_release_parses_it(host, scan, name):
    changes, expected = VERSION_CASES[name]
    rule = scan(host(**changes, **XTREMIO_HOST), profile="xtremio")["by_id"]["cpu_dma_latency"]
    assert rule["result"] == expected, rule["evidence"]
    if name == "2.12: cstate.id:1 sets nothing":
        assert "cstate. and | come in 2.13" in rule["evidence"][0]["note"]


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
@pytest.mark.parametrize("name", sorted(TABLE_CASES))
def test_oscap_on_the_c_state_cases(tmp_path, scan, name):
    changes, _ = TABLE_CASES[name]
    root = sas_host(tmp_path / "root", **changes, **XTREMIO_HOST)
    theirs = oscap_verdict(root, "cpu_dma_latency", tmp_path / "work", BASELINE_SETS, "xtremio")
    ours = scan(root, profile="xtremio")["by_id"]["cpu_dma_latency"]["result"]
    assert (ours, theirs) == TABLE_DIFFERENCES.get(name, (ours, ours))


def test_the_xtremio_fix_writes_force_latency_and_the_rule_passes(tmp_path, scan):
    root = sas_host(tmp_path / "root", **XTREMIO_HOST)
    assert scan(root, profile="xtremio")["by_id"]["cpu_dma_latency"]["result"] == "fail"
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS,
                      ["--profile", "xtremio", "--rule", "cpu_dma_latency"])
    run_bash(script, root)
    assert "force_latency=1" in (root / "etc/tuned/sas-performance/tuned.conf").read_text()
    assert scan(root, profile="xtremio")["by_id"]["cpu_dma_latency"]["result"] == "pass"
    default = generate("bash", tmp_path / "default.sh", root, BASELINE_SETS, ["--all"])
    assert "force_latency" not in default.read_text()  # the default profile leaves C-states
