"""The viya4_node profile (#68): what SAS's deployment assets ask of a SAS Viya 4 stateful
node, where SAS's OpenSearch runs: vm.max_map_count at least 262144 "for stateful workload
nodes" where the administrator sets it (sas-bases/overlays/internal-elasticsearch/README.md of
SAS Viya LTS 2025.09, step 3; rules/sources.yml sas-bases-opensearch), running and after a
reboot, judged alike by both engines on RHEL CoreOS and RHEL worker nodes."""

from __future__ import annotations

import pytest

from sascheck.rules import load_catalogue

from .support.hosts import BASELINE_SETS, sas_host
from .support.oscap import oscap_eval, tailor
from .support.rhcos import NODES, rhcos_node

RHCOS_416, OCP_416, _, _ = NODES["RHCOS 4.16 (RHEL 9.4)"]
RHCOS_KERNEL = "5.14.0-427.22.1.el9_4.x86_64"  # RHCOS 4.16's RHEL 9.4 kernel
RULES = ("vm_max_map_count", "max_map_count_at_boot")
KERNEL_DEFAULT = "65530\n"  # DEFAULT_MAX_MAP_COUNT, include/linux/mm.h
SAS_VALUE = "262144\n"
# A MachineConfig's file, as the Machine Config Operator writes it into /etc (the sysctl.d
# file an administrator ships to the stateful pool), and what systemd-sysctl then applied.
MACHINE_CONFIG_SYSCTL = {"/etc/sysctl.d/99-sas-opensearch.conf": "vm.max_map_count = 262144\n"}

# (node, files on it, expected vm_max_map_count, expected max_map_count_at_boot)
STATEFUL_NODES = {
    "RHCOS, nothing raises it": (
        "rhcos", {"/proc/sys/vm/max_map_count": KERNEL_DEFAULT}, "fail", "fail"),
    "RHCOS, a MachineConfig's sysctl.d file": (
        "rhcos", {"/proc/sys/vm/max_map_count": SAS_VALUE, **MACHINE_CONFIG_SYSCTL},
        "pass", "pass"),
    # SAS's privileged init container raised it for the running pod; nothing on the node
    # sets it at boot (the container sets it again when the pod restarts: a site that uses
    # it deselects max_map_count_at_boot in its tailoring).
    "RHCOS, raised only by sas-opendistro-sysctl": (
        "rhcos", {"/proc/sys/vm/max_map_count": SAS_VALUE}, "pass", "fail"),
    "RHEL 9 worker, sysctl.d lower than SAS asks": (
        "rhel", {"/proc/sys/vm/max_map_count": "131072\n",
                 "/etc/sysctl.d/99-sas-opensearch.conf": "vm.max_map_count = 131072\n"},
        "fail", "fail"),
    "RHEL 9 worker, a higher site value kept": (
        "rhel", {"/proc/sys/vm/max_map_count": "1048576\n",
                 "/etc/sysctl.conf": "vm.max_map_count = 1048576\n"}, "pass", "pass"),
}


def _node(path, system: str, files: dict[str, str]):
    if system == "rhcos":
        return rhcos_node(path, RHCOS_416, OCP_416, kernel=RHCOS_KERNEL, extra_files=files)
    return sas_host(path, kernel=RHCOS_KERNEL, extra_files=files)


def test_the_profile_holds_only_what_sas_asks_of_a_viya4_node():
    """No SAS 9 storage, THP or tuned rule: SAS's Viya 4 sources ask none of them of a node."""
    profile = load_catalogue().profile("viya4_node")
    assert profile.rule_ids == RULES
    assert profile.values["max_map_count_min"] == 262144


@pytest.mark.parametrize("case", sorted(STATEFUL_NODES))
def test_a_stateful_node_is_judged_alike_by_both_engines(tmp_path, scan, case):
    system, files, running, at_boot = STATEFUL_NODES[case]
    root = _node(tmp_path / "root", system, files)
    scanned = scan(root, profile="viya4_node")["by_id"]
    ours = {rule: found["result"] for rule, found in scanned.items()}
    tailoring = tailor(root, BASELINE_SETS, tmp_path / "t.xml", profile="viya4_node")
    theirs = oscap_eval(root, tailoring, tmp_path, profile="viya4_node")
    # nothing else is judged under the profile, in either engine
    assert ours == {"vm_max_map_count": running, "max_map_count_at_boot": at_boot}
    assert {rule: result for rule, result in theirs.items() if result != "notselected"} == ours
