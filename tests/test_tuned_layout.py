"""Where the installed tuned keeps profiles is a build choice (issue 35): tuned.spec keeps
/usr/lib/tuned and /etc/tuned where rhel < 10 from v2.24.1 on, so RHEL 9's tuned 2.25 has
the old layout and RHEL 10's the new one. The host's consts.py decides, for the scanner and
for the bash fix alike."""

from __future__ import annotations

import pytest

from sascheck.scanner.sources.hostroot import HostRoot
from sascheck.scanner.tuned.layout import layout_from_consts, tuned_layout

from .support import tuned_loader
from .support.boot_samples import tuned_consts_file, tuned_version_file
from .support.fix_hosts import verdicts
from .support.hosts import BASELINE_SETS, sas_host
from .support.remedy import generate, run_bash
from .test_fixes_never_worse import _tuned_2_11

RHEL9 = tuned_consts_file("/usr/lib/tuned", "/etc/tuned")
RHEL10 = tuned_consts_file("/usr/lib/tuned/profiles", "/etc/tuned/profiles", "python3.12")
SITE = "[main]\ninclude=throughput-performance\n\n[vm]\ntransparent_hugepages=never\n"


@pytest.mark.parametrize(("text", "expected"), [
    # v2.22.0 tuned/consts.py line 16
    ('LOAD_DIRECTORIES = ["/usr/lib/tuned", "/etc/tuned"]\n', ("/usr/lib/tuned", "/etc/tuned")),
    # v2.23.0 line 16 (and CFG_DEF_PROFILE_DIRS = [SYSTEM_PROFILE_DIR, "/etc/tuned/profiles"])
    ('SYSTEM_PROFILE_DIR = "/usr/lib/tuned/profiles"\n',
     ("/usr/lib/tuned/profiles", "/etc/tuned/profiles")),
    (next(iter(RHEL9.values())), ("/usr/lib/tuned", "/etc/tuned")),
    (next(iter(RHEL10.values())), ("/usr/lib/tuned/profiles", "/etc/tuned/profiles")),
    ('USER_PROFILES_DIR = "/etc/../root"\nSYSTEM_PROFILES_DIR = "/usr/lib/tuned"\n', None),
])
def test_consts_py_as_each_release_writes_it(text, expected):
    assert layout_from_consts(text) == expected


def _rhel9_host(tmp_path, active: str, **changes):
    return sas_host(tmp_path / "root", kernel="5.14.0-570.12.1.el9_6.x86_64",
                    tuned_active=active, tuned_custom={"sas-site": SITE},
                    tuned_shipped=_tuned_2_11("balanced", "throughput-performance"),
                    extra_files={**tuned_version_file((2, 25, 1), "python3.9"), **RHEL9},
                    **changes)


def test_rhel9_tuned_2_25_reads_the_site_profile_from_etc_tuned(tmp_path):
    """Read as upstream 2.25 lays profiles out, the site's /etc/tuned/sas-site was "not
    found" and tuned_profile failed; RHEL 9's build loads it from there."""
    root = _rhel9_host(tmp_path, "sas-site")
    layout = tuned_layout(HostRoot(root), (2, 25, 1),
                          "/usr/lib/python3.9/site-packages/tuned/version.py")
    assert (layout.system, layout.user, layout.new) == ("/usr/lib/tuned", "/etc/tuned", False)
    result = verdicts(root, BASELINE_SETS)
    assert result["tuned_profile"] == "pass"
    assert result["thp_disabled_at_boot"] == "pass"


def test_rhel9_fix_writes_the_profile_where_its_tuned_looks(tmp_path):
    tuned_loader.require()
    root = _rhel9_host(tmp_path, "balanced")
    assert verdicts(root, BASELINE_SETS)["tuned_profile"] == "fail"
    run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS), root)
    assert (root / "etc/tuned/sas-performance/tuned.conf").is_file()
    assert not (root / "etc/tuned/profiles").exists()
    assert verdicts(root, BASELINE_SETS)["tuned_profile"] == "pass"


def test_consts_py_decides_before_the_directories(tmp_path):
    """consts.py is what tuned loads from: a leftover /usr/lib/tuned (no profiles/ below it)
    does not make a RHEL 10 build's layout the old one."""
    root = sas_host(tmp_path / "root", kernel="6.12.0-55.9.1.el10_0.x86_64",
                    tuned_active="balanced", tuned_custom={},
                    tuned_shipped=_tuned_2_11("balanced"),
                    extra_files={**tuned_version_file((2, 27, 0)), **RHEL10})
    layout = tuned_layout(HostRoot(root), (2, 27, 0),
                          "/usr/lib/python3.12/site-packages/tuned/version.py")
    assert layout.new and layout.source.endswith("consts.py")
