from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sascheck.rules import Catalogue, load_catalogue
from sascheck.scanner.scan import run_scan

from .support.hosts import BASELINE_SETS, sas_host


@pytest.fixture(scope="session", autouse=True)
def fix_manifests_in_a_temporary_directory(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The fix scripts the tests run record their changes in one manifest of the session's
    (by default they write one in the current directory, or in /var/lib/sascheck live)."""
    os.environ.setdefault("SASCHECK_MANIFEST",
                          str(tmp_path_factory.mktemp("manifests") / "fix.manifest"))


@pytest.fixture(scope="session")
def catalogue() -> Catalogue:
    return load_catalogue()


Scan = Callable[..., dict[str, Any]]


@pytest.fixture
def scan(catalogue: Catalogue) -> Scan:
    """Scan a root; return the result dict with rules indexed by id under 'by_id'."""

    def run(root: Path, *sets: str, profile: str = "default", role: str = "bare_metal",
            baseline_sets: bool = True) -> dict[str, Any]:
        assignments = [*BASELINE_SETS, *sets] if baseline_sets else list(sets)
        result = run_scan(catalogue, profile, assignments, str(root), role).to_dict()
        result["by_id"] = {rule["id"]: rule for rule in result["rules"]}
        return result

    return run


@pytest.fixture(scope="module")
def example_scan_results(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """A real scan of each example host, for the fleet pages built of their copies (three
    scans: cheap enough to run once per module that asks)."""
    from .support.fleet_pages import example_scans

    return example_scans(tmp_path_factory.mktemp("fleet-samples"))


@pytest.fixture
def host(tmp_path: Path) -> Callable[..., Path]:
    """Build the compliant baseline host with some changes: host(thp_enabled=...)."""
    counter = iter(range(1000))

    def build(**changes: Any) -> Path:
        return sas_host(tmp_path / f"root{next(counter)}", **changes)

    return build


# Tests that share the machine's devices or measure throughput run in one worker, one after
# another (pytest-xdist's loadgroup): loop devices, mounts and fio timings are not shared.
SERIAL_MODULES = {"test_live", "test_iotest", "test_iotest_reports", "test_root_writes",
                  "test_sosreport"}


# Tiers (issue 47): the modules that run a real consumer are marked with it, and all of them
# "slow", so `pytest -m "not slow"` is a quick tier for a contributor; CI runs everything.
# tests/test_tiers.py fails when a module running one is missing here.
NEEDS = {
    "oscap": {"test_cas_cache", "test_compliance_operator", "test_content", "test_controller_attacks",
              "test_cpu_turbo_smt", "test_docs", "test_drift", "test_fleet_engines", "test_fleet_scan", "test_guests",
              "test_multipath_detect", "test_multipath_runtime", "test_nothing_judged", "test_os_applicability",
              "test_oscap_fixes", "test_oscap_runner", "test_parity", "test_profiles_only",
              "test_reports", "test_rhcos", "test_rpm", "test_software_semantics",
              "test_striping_hardware", "test_viya4_node",
              "test_scratch_dirs", "test_selinux", "test_tailoring_empty", "test_tuned_startup",
              "test_tuned_sysctl_modifiers",
              "test_udev_semantics",
              "test_veritas", "test_viya3", "test_xtremio_paths"},
    "browser": {"test_admin_first_hour", "test_copy_fix", "test_fleet_bad_files",
                "test_fleet_page", "test_fleet_page_sections", "test_fleet_stream",
                "test_identity_attacks",
                "test_iotest_reports", "test_storage_diagram"},
    "ansible": {"test_accounts", "test_docs_check_kind", "test_fix_target", "test_fleet_example", "test_fleet_fix",
                "test_fix_revert", "test_fix_settings", "test_remediations", "test_report_failing",
                "test_scratch_dirs", "test_host_data_inert", "test_site_profile", "test_sysctl_home"},
    "live": {"test_live", "test_iotest"},
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = getattr(item, "module", None)
        name = module.__name__.rsplit(".", 1)[-1] if module is not None else ""
        if name in SERIAL_MODULES:
            item.add_marker(pytest.mark.xdist_group("machine"))
        needs = [need for need, modules in NEEDS.items() if name in modules]
        for need in needs:
            item.add_marker(need)
        if needs or item.get_closest_marker("stress"):
            item.add_marker(pytest.mark.slow)
