"""selinux_viya_deployment (#51, viya3 profile): SAS Viya 3.5's pre-install playbook
(viya-ark commit 621649a, tasks/pre.selinux_config.yml line 96) stops unless getenforce says
other than Enforcing; a site that did the deployment guide's SELinux configuration says so
with selinux_configured. Both engines judge the same roots.

The next boot's mode: libselinux's selinux_init_load_policy takes the kernel line's
enforcing= over the config's SELINUX=, and selinux=0 turns SELinux off."""

from __future__ import annotations

from pathlib import Path

import pytest

from .support.hosts import BASELINE_SETS, sas_host
from .support.oscap import oscap_available, oscap_eval, tailor

RULE = "selinux_viya_deployment"
# RHEL 9's /etc/selinux/config as the selinux-policy package ships it (comments abridged).
RHEL9_CONFIG = """\
# This file controls the state of SELinux on the system.
# SELINUX= can take one of these three values:
#     enforcing - SELinux security policy is enforced.
#     permissive - SELinux prints warnings instead of enforcing.
#     disabled - No SELinux policy is loaded.
SELINUX={mode}
# SELINUXTYPE= can take one of these three values:
#     targeted - Targeted processes are protected,
#     minimum - Modification of targeted policy. Only selected processes are protected.
#     mls - Multi Level Security protection.
SELINUXTYPE=targeted
"""
BLS = "root=/dev/mapper/rhel-root ro transparent_hugepage=never"


def selinux_host(path: Path, mode: str | None, running: str | None = None,
                 args: str = "") -> Path:
    files = {} if mode is None else {"/etc/selinux/config": RHEL9_CONFIG.format(mode=mode)}
    if running is not None:
        files["/sys/fs/selinux/enforce"] = running
    return sas_host(path, kernel="5.14.0-427.13.1.el9_4.x86_64",
                    pretty_name="Red Hat Enterprise Linux 9.4 (Plow)",
                    bls_options=f"{BLS} {args}".strip(), extra_files=files)


@pytest.mark.parametrize(("mode", "running", "args", "expected"), [
    ("enforcing", "1", "", "fail"),  # RHEL 9 as installed
    ("enforcing", None, "", "fail"),  # an image: the next boot enforces
    ("permissive", "0", "", "pass"),  # as viya-ark leaves a 3.4 host
    ("permissive", "1", "", "fail"),  # config changed, not yet rebooted nor setenforce 0
    ("enforcing", None, "enforcing=0", "pass"),  # the kernel line wins over the config
    ("enforcing", None, "selinux=0", "pass"),
    ("permissive", None, "enforcing=1", "fail"),
    ("disabled", None, "", "pass"),
    (None, None, "", "pass"),  # no config: no policy is loaded
])
def test_selinux_is_judged_now_and_at_boot(tmp_path, scan, mode, running, args, expected):
    root = selinux_host(tmp_path / "r", mode, running, args)
    ours = scan(root, profile="viya3")["by_id"][RULE]
    assert ours["result"] == expected, ours
    if expected == "fail":
        assert "Configure SELinux" in ours["message"]
    if oscap_available():
        tailoring = tailor(root, BASELINE_SETS, tmp_path / "tailoring.xml", "viya3")
        assert oscap_eval(root, tailoring, tmp_path, "viya3")[RULE] == expected


def test_a_site_that_set_selinux_up_for_viya_passes_enforcing(tmp_path, scan):
    """selinux_configured keeps SELinux enforcing: the failing items become informational,
    and oscap, given the same value, agrees."""
    root = selinux_host(tmp_path / "r", "enforcing", "1")
    ours = scan(root, "selinux_configured=true", profile="viya3")["by_id"][RULE]
    assert ours["result"] == "pass"
    assert {e["result"] for e in ours["evidence"]} == {"informational"}
    if oscap_available():
        tailoring = tailor(root, [*BASELINE_SETS, "selinux_configured=true"],
                           tmp_path / "tailoring.xml", "viya3")
        assert oscap_eval(root, tailoring, tmp_path, "viya3")[RULE] == "pass"


def test_the_default_profile_leaves_selinux_alone(tmp_path, scan):
    root = selinux_host(tmp_path / "r", "enforcing", "1")
    assert RULE not in scan(root)["by_id"]


# libselinux 3.6, src/selinux_config.c lines 89-131 (selinux_getenforcemode, which
# selinux_init_load_policy in src/load_policy.c line 241 asks at boot): the first line that
# begins "SELINUX=" and whose value begins with a mode's name, in any case, gives the mode.
@pytest.mark.parametrize(("config", "expected"), [
    ("SELINUX=enforcing\nSELINUX=permissive\n", "fail"),  # the first wins, not the last
    ("SELINUX=permissive\nSELINUX=enforcing\n", "pass"),
    ("SELINUX=Enforcing\n", "fail"),  # the value in any case
    ("SELINUX=  enforcing # set by kickstart\n", "fail"),  # blanks skipped, rest not read
    ("SELINUX=enforcingx\n", "fail"),  # a prefix is enough
    ("selinux=enforcing\n", "pass"),  # the name is exact: no mode given, none enforced
    (" SELINUX=enforcing\n", "pass"),  # not at the line's start
    ("SELINUX = enforcing\n", "pass"),  # a blank before "="
    ('SELINUX="enforcing"\nSELINUX=permissive\n', "pass"),  # a quoted value names no mode
    ("SELINUX=strict\nSELINUX=enforcing\n", "fail"),  # an unknown value is passed over
    ("SELINUXTYPE=targeted\nSELINUX=enforcing\n", "fail"),
])
def test_the_config_is_read_as_libselinux_reads_it(tmp_path, scan, config, expected):
    root = selinux_host(tmp_path / "r", None)
    (root / "etc/selinux").mkdir(parents=True, exist_ok=True)
    (root / "etc/selinux/config").write_text(config)
    ours = scan(root, profile="viya3")["by_id"][RULE]
    assert ours["result"] == expected, ours
    if oscap_available():
        tailoring = tailor(root, BASELINE_SETS, tmp_path / "tailoring.xml", "viya3")
        assert oscap_eval(root, tailoring, tmp_path, "viya3")[RULE] == expected
