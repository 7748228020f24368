"""RHEL CoreOS, OpenShift's node system, is RHEL to both engines (#68): its os-release names
the system "rhcos" and OpenShift's release as VERSION_ID; the RHEL release is RHEL_VERSION.

The nodes' release files are built as openshift/os writes them (tests/support/rhcos.py)."""

from __future__ import annotations

import pytest

from sascheck.rules.host_layout import os_platform
from sascheck.scanner.sources.hostroot import HostRoot
from sascheck.scanner.storage.multipath_hwtable import rhel_release

from .support.hosts import BASELINE_SETS
from .support.oscap import assert_judged_alike, oscap_eval, tailor
from .support.rhcos import NODES, rhcos_node


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
    assert_judged_alike(ours, theirs)
