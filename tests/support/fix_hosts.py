"""Hosts and verdicts the fix tests share: a scan's verdicts by rule, every verdict case and
example root as a fix's target, and the RHEL 6 and persistence-failing images."""

from __future__ import annotations

from pathlib import Path

import pytest

from sascheck.rules import load_catalogue
from sascheck.scanner.scan import run_scan

from .boot_samples import tuned02_installed
from .example_roots import EXAMPLE_VALUES, EXAMPLES
from .hosts import SasFs, sas_host
from .remedy import ansible_available
from .verdict_cases_boot import BOOT_CASES
from .verdict_cases_runtime import RUNTIME_CASES

PERSISTENCE_RULES = ("thp_disabled_at_boot", "io_tuning_at_boot", "tuned_profile",
                     "dirty_ratio_at_boot", "mount_options_at_boot")
BAD = {"fail", "error"}
needs_ansible = pytest.mark.skipif(not ansible_available(), reason="ansible-core not installed")
CATALOGUE = load_catalogue()
# What the default profile selects (cpu_dma_latency belongs to the xtremio profile only).
DEFAULT_RULES = CATALOGUE.rules_of(CATALOGUE.profile("default"))


def verdicts(root: Path, sets: list[str]) -> dict[str, str]:
    result = run_scan(CATALOGUE, "default", sets, str(root), "auto").to_dict()
    return {rule["id"]: rule["result"] for rule in result["rules"]}


ROOTS = [(case.name, case.changes, case.sets) for case in (*RUNTIME_CASES, *BOOT_CASES)] + \
    [(f"example {name}", None, EXAMPLE_VALUES[name]) for name in sorted(EXAMPLES)]


def build_root(tmp_path: Path, name: str, changes: dict | None) -> Path:
    root = tmp_path / "root"
    if name.startswith("example "):
        EXAMPLES[name.split(" ", 1)[1]](root)
    else:
        sas_host(root, **(changes or {}))
    return root


RHEL6_HOST = {"kernel": "2.6.32-754.35.1.el6.x86_64", "rhel6_thp": True, "bls_options": None,
              "grub_cmdline": None, "tuned_active": None, "defrag_tmpfiles": False,
              "sas_local_cfg": "-WORK /saswork\n-UTILLOC /sasutil\n-BUFSIZE 64K\n"}


def rhel6_tuned02(path: Path, active: str | None) -> Path:
    """A RHEL 6 image with tuned 0.2.22's profiles; ``active`` switched on by tuned-adm, or
    none (then ktune and tuned are not started either)."""
    files, links = tuned02_installed(active or "throughput-performance")
    if active is None:
        files.pop("/etc/tune-profiles/active-profile")
        links = {}
    rc_local = {"/etc/rc.d/rc.local": "#!/bin/sh\ntouch /var/lock/subsys/local\n"}
    return sas_host(path, **RHEL6_HOST, extra_files={**files, **rc_local}, extra_links=links)


def persistence_failing(path: Path) -> Path:
    """A host whose settings hold now but not after a reboot, and noatime missing."""
    return sas_host(path, tuned_active="balanced", read_ahead_kb=128,
                    bls_options="root=/dev/mapper/rhel-root ro", grub_cmdline="",
                    dirty_ratio=20, defrag_tmpfiles=False,
                    filesystems=[SasFs("sasdata", "/sasdata", options="rw,relatime"),
                                 SasFs("saswork", "/saswork"), SasFs("sasutil", "/sasutil")])
