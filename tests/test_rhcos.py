"""RHEL CoreOS, OpenShift's node system, is RHEL to both engines (#68): its os-release names
the system "rhcos" and OpenShift's release as VERSION_ID; the RHEL release is RHEL_VERSION.

The release files are built as openshift/os writes them (rhel-9.4-os-release.yaml at commit
c91cde58498b2709cf815a334664f9fb7e9f6830, the postprocess script): /usr/lib/os-release from
the RHEL one, /etc/os-release a relative link to it, and /etc/redhat-release an absolute link
to /usr/lib/system-release, "<NAME> release <VERSION_ID>"."""

from __future__ import annotations

from pathlib import Path

import pytest

from sascheck.rules.host_layout import os_platform
from sascheck.scanner.sources.hostroot import HostRoot
from sascheck.scanner.storage.multipath_hwtable import rhel_release

from .support.hosts import BASELINE_SETS, sas_host
from .support.oscap import BEYOND_OVAL, oscap_eval, tailor

# The RHEL 9.4 os-release fields the postprocess script reads (redhat-release 9.4), and the
# OpenShift release and ostree version it adds.
RHEL94 = {"NAME": "Red Hat Enterprise Linux", "PLATFORM_ID": "platform:el9",
          "ANSI_COLOR": "0;31", "CPE_NAME": "cpe:/o:redhat:enterprise_linux:9::baseos",
          "HOME_URL": "https://www.redhat.com/"}


def rhcos_os_release(ocp: str, rhel: str, ostree: str, fields: dict[str, str]) -> str:
    """/usr/lib/os-release as openshift/os's postprocess script writes it."""
    return (f'NAME="{fields["NAME"]} CoreOS"\nID="rhcos"\nID_LIKE="rhel fedora"\n'
            f'VERSION="{ostree}"\nVERSION_ID="{ocp}"\nVARIANT="CoreOS"\nVARIANT_ID=coreos\n'
            f'PLATFORM_ID="{fields["PLATFORM_ID"]}"\n'
            f'PRETTY_NAME="{fields["NAME"]} CoreOS {ostree}"\n'
            f'ANSI_COLOR="{fields["ANSI_COLOR"]}"\nCPE_NAME="{fields["CPE_NAME"]}::coreos"\n'
            f'HOME_URL="{fields["HOME_URL"]}"\n'
            'DOCUMENTATION_URL="https://docs.okd.io/latest/welcome/index.html"\n'
            'BUG_REPORT_URL="https://access.redhat.com/labs/rhir/"\n'
            'REDHAT_BUGZILLA_PRODUCT="OpenShift Container Platform"\n'
            f'REDHAT_BUGZILLA_PRODUCT_VERSION="{ocp}"\n'
            'REDHAT_SUPPORT_PRODUCT="OpenShift Container Platform"\n'
            f'REDHAT_SUPPORT_PRODUCT_VERSION="{ocp}"\nRHEL_VERSION={rhel}\n'
            f'OSTREE_VERSION="{ostree}"\n')


# RHCOS 4.11 on RHEL 8.6, as its nodes print it (older scripts quoted RHEL_VERSION).
RHCOS_411 = ('NAME="Red Hat Enterprise Linux CoreOS"\nID="rhcos"\nID_LIKE="rhel fedora"\n'
             'VERSION="411.86.202212072103-0"\nVERSION_ID="4.11"\n'
             'PLATFORM_ID="platform:el8"\n'
             'PRETTY_NAME="Red Hat Enterprise Linux CoreOS 411.86.202212072103-0 (Ootpa)"\n'
             'ANSI_COLOR="0;31"\nCPE_NAME="cpe:/o:redhat:enterprise_linux:8::coreos"\n'
             'OPENSHIFT_VERSION="4.11"\nRHEL_VERSION="8.6"\n'
             'OSTREE_VERSION="411.86.202212072103-0"\n')

NODES = {
    "RHCOS 4.16 (RHEL 9.4)": (rhcos_os_release("4.16", "9.4", "416.94.202406251923-0", RHEL94),
                              "4.16", "cpe:/o:redhat:enterprise_linux:9", "9"),
    "RHCOS 4.11 (RHEL 8.6)": (RHCOS_411, "4.11", "cpe:/o:redhat:enterprise_linux:8", "8"),
    # No RHEL_VERSION: RHEL, its release unknown (judged, as RHEL without VERSION_ID is).
    "RHCOS without RHEL_VERSION": (
        "\n".join(line for line in RHCOS_411.splitlines() if not line.startswith("RHEL_"))
        + "\n", "4.11", "cpe:/o:redhat:enterprise_linux", None),
}


def rhcos_node(path: Path, os_release: str, ocp: str) -> Path:
    """The baseline SAS host with RHCOS's release files and links in place of RHEL's."""
    root = sas_host(path)
    for name in ("os-release", "redhat-release"):
        (root / "etc" / name).unlink()
    (root / "usr/lib").mkdir(parents=True, exist_ok=True)
    (root / "usr/lib/os-release").write_text(os_release)
    (root / "usr/lib/system-release").write_text(
        f"Red Hat Enterprise Linux CoreOS release {ocp}\n")
    (root / "etc/os-release").symlink_to("../usr/lib/os-release")
    (root / "etc/redhat-release").symlink_to("/usr/lib/system-release")
    return root


@pytest.mark.parametrize("node", sorted(NODES))
def test_an_rhcos_node_is_rhel_of_its_rhel_release(tmp_path, node):
    """The platform is RHEL of RHEL_VERSION's major (VERSION_ID, OpenShift's 4.x, would make
    it RHEL 4, too old), read through the links; the multipath hardware table is that
    release's."""
    text, ocp, platform, major = NODES[node]
    root = HostRoot(str(rhcos_node(tmp_path / "root", text, ocp)))
    os_release = root.read_optional("/etc/os-release", 65536)
    redhat_release = root.read_optional("/etc/redhat-release", 4096)
    assert os_release == text and redhat_release is not None
    assert os_platform(os_release, redhat_release) == platform
    assert rhel_release(root) == major


def test_another_coreos_is_not_rhel(tmp_path):
    """Fedora CoreOS is not one of the systems the guidance is for."""
    fcos = ('NAME="Fedora Linux"\nVERSION="40.20240416.3.1 (CoreOS)"\nID=fedora\n'
            'VERSION_ID=40\nVARIANT="CoreOS"\nVARIANT_ID=coreos\n')
    assert os_platform(fcos, None) is None


@pytest.mark.parametrize("node", sorted(NODES))
def test_both_engines_judge_an_rhcos_node_alike(tmp_path, scan, node):
    """oscap (the benchmark's platform, its OVAL reading the same files through the links
    with OSCAP_PROBE_ROOT) and sascheck both judge the node, with the same verdicts."""
    text, ocp, _, _ = NODES[node]
    root = rhcos_node(tmp_path / "root", text, ocp)
    ours = {rule: found["result"] for rule, found in scan(root)["by_id"].items()}
    theirs = oscap_eval(root, tailor(root, BASELINE_SETS, tmp_path / "t.xml"), tmp_path)
    assert "pass" in ours.values() and set(theirs.values()) != {"notapplicable"}
    # The baseline's array is known to RHEL 8's multipath hardware table only.
    same = BEYOND_OVAL | {"multipath_all_paths_active"}
    assert {r: v for r, v in ours.items() if r not in same} == {
        r: v for r, v in theirs.items() if r in ours and r not in same}
