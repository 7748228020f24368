"""RHEL CoreOS nodes as test roots: the release files as openshift/os writes them
(rhel-9.4-os-release.yaml at commit c91cde58498b2709cf815a334664f9fb7e9f6830, the postprocess
script): /usr/lib/os-release from the RHEL one, /etc/os-release a relative link to it, and
/etc/redhat-release an absolute link to /usr/lib/system-release, "<NAME> release
<VERSION_ID>"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .hosts import sas_host

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


def rhcos_node(path: Path, os_release: str, ocp: str, **changes: Any) -> Path:
    """The baseline SAS host (with ``changes``) with RHCOS's release files and links in
    place of RHEL's."""
    root = sas_host(path, **changes)
    for name in ("os-release", "redhat-release"):
        (root / "etc" / name).unlink()
    (root / "usr/lib").mkdir(parents=True, exist_ok=True)
    (root / "usr/lib/os-release").write_text(os_release)
    (root / "usr/lib/system-release").write_text(
        f"Red Hat Enterprise Linux CoreOS release {ocp}\n")
    (root / "etc/os-release").symlink_to("../usr/lib/os-release")
    (root / "etc/redhat-release").symlink_to("/usr/lib/system-release")
    return root
