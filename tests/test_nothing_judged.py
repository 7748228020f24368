"""Nothing judged is never a pass (issue 35): with no SAS directory known, which devices'
kernel default scheduler counts cannot be told, so io_tuning_at_boot is notchecked as every
other SAS rule is, not a pass taken from "(any disk)"."""

from __future__ import annotations

import shutil

import pytest

from .support.hosts import BASELINE_SETS
from .support.oscap import oscap_available, oscap_verdict

THROUGHPUT_ONLY = {"sas-site": "[main]\ninclude=throughput-performance\n"}


def _no_sas_installation(host):
    """The baseline host (tuned sets read-ahead, nothing a scheduler) without SAS installed:
    no sasv9.cfg names WORK, and no site value a SAS directory."""
    root = host(tuned_active="sas-site", tuned_custom=THROUGHPUT_ONLY, sas_local_cfg=None)
    shutil.rmtree(root / "opt/sas")
    return root


def test_io_tuning_at_boot_is_not_judged_without_sas_directories(host, scan):
    root = _no_sas_installation(host)
    unknown = scan(root, baseline_sets=False)["by_id"]["io_tuning_at_boot"]
    assert unknown["result"] == "notchecked"
    assert any(e["result"] == "notchecked" and "no SAS directory is known" in e["note"]
               for e in unknown["evidence"])
    known = scan(root)["by_id"]["io_tuning_at_boot"]  # the same host, DATA named
    assert known["result"] == "pass"
    assert any(e["source"].startswith("kernel default for") for e in known["evidence"])


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
def test_oval_passes_the_plain_disk_default_a_listed_difference(host, tmp_path):
    """OVAL cannot say notchecked from a site value (README, OVAL differences)."""
    root = _no_sas_installation(host)
    assert oscap_verdict(root, "io_tuning_at_boot", tmp_path / "work", []) == "pass"
    assert oscap_verdict(root, "io_tuning_at_boot", tmp_path / "known", BASELINE_SETS) == "pass"


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
def test_numa_with_nothing_to_judge_is_never_a_pass(host, scan, tmp_path):
    """An image without /proc's command line and cpuinfo and without a boot entry: sascheck
    says notchecked; OVAL, which cannot, fails rather than pass (README, OVAL differences).
    With the command line back, both judge and pass."""
    root = host()
    kept = (root / "proc/cmdline").read_text()
    for gone in ("proc/cmdline", "proc/cpuinfo", "etc/default/grub"):
        (root / gone).unlink(missing_ok=True)
    shutil.rmtree(root / "boot", ignore_errors=True)
    assert scan(root)["by_id"]["numa_enabled"]["result"] == "notchecked"
    assert oscap_verdict(root, "numa_enabled", tmp_path / "bare", BASELINE_SETS) == "fail"
    (root / "proc/cmdline").write_text(kept)
    assert scan(root)["by_id"]["numa_enabled"]["result"] == "pass"
    assert oscap_verdict(root, "numa_enabled", tmp_path / "judged", BASELINE_SETS) == "pass"


def test_an_unreadable_ktune_configuration_is_said(host, tmp_path, scan):
    """RHEL 6: /etc/sysconfig/ktune that cannot be read (here a directory) is taken as the
    shipped file for what ktune applies, and the results say so with its path."""
    from .support.verdict_hosts import KTUNE_FILES, KTUNE_LINKS, RHEL6_KTUNE

    root = host(**{**RHEL6_KTUNE, "extra_files": KTUNE_FILES, "extra_links": KTUNE_LINKS})
    (root / "etc/sysconfig/ktune").unlink()
    (root / "etc/sysconfig/ktune").mkdir()
    problems = scan(root)["problems"]
    assert any(p.startswith("/etc/sysconfig/ktune: not a regular file") and
               "taken as shipped" in p for p in problems), problems
