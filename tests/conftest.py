from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sascheck.rules import Catalogue, load_catalogue
from sascheck.scanner.scan import run_scan

from .hosts import BASELINE_SETS, sas_host


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


@pytest.fixture
def host(tmp_path: Path) -> Callable[..., Path]:
    """Build the compliant baseline host with some changes: host(thp_enabled=...)."""
    counter = iter(range(1000))

    def build(**changes: Any) -> Path:
        return sas_host(tmp_path / f"root{next(counter)}", **changes)

    return build


# Tests that share the machine's devices or measure throughput run in one worker, one after
# another (pytest-xdist's loadgroup): loop devices, mounts and fio timings are not shared.
SERIAL_MODULES = {"test_live", "test_iotest", "test_iotest_reports", "test_security_writes",
                  "test_sosreport"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and module.__name__.rsplit(".", 1)[-1] in SERIAL_MODULES:
            item.add_marker(pytest.mark.xdist_group("machine"))
