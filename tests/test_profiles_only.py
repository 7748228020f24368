"""Rules that only some profiles select: cpu_dma_latency (xtremio) in both engines and its
fix, and how a rule names its profiles in the catalogue."""

from __future__ import annotations

import pytest

from sascheck.rules import CatalogueError, load_catalogue

from .hosts import BASELINE_SETS, SAS_PROFILE, sas_host
from .oscap import oscap_available
from .remedy import generate, run_bash
from .test_check_kinds import _copy_catalogue
from .test_parity import _compare

CPU = "\n[cpu]\nforce_latency={}\n"
LATENCY_CASES = {
    "force_latency=1": (SAS_PROFILE + CPU.format(1), "pass"),
    "force_latency=2": (SAS_PROFILE + CPU.format(2), "fail"),
    # tuned 2.15+'s C-state form names states, not microseconds.
    "force_latency=cstate.id:1|3": (SAS_PROFILE + CPU.format("cstate.id:1|3"), "fail"),
    "not set": (SAS_PROFILE, "fail"),
}
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
