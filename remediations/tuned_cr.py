"""The fix an OpenShift cluster applies: a Tuned CR (tuned.openshift.io/v1) whose one profile
is sascheck's sas-performance profile on top of the operator's own openshift-node, which the
Node Tuning Operator gives to the tuned of every node its recommend matches.

Sources (openshift/cluster-node-tuning-operator at d2394aa81ffe6a5411a674128995979956f40193):
manifests/20-tuned.crd.yaml (the schema), assets/tuned/manifests/default-cr-tuned.yaml (the
operator's own CR: openshift-control-plane at priority 30, openshift-node at 40, where lower
numbers win), README.md "Recommended profiles" and "Supported TuneD daemon plug-ins" (cpu,
disk, sysctl and vm among them; bootloader not fully supported, so the profile has no
[bootloader]: THP is set by the [vm] plug-in each time the node's tuned starts).
"""

from __future__ import annotations

import dataclasses
import shlex
from typing import Any

import yaml

from ..rules import Catalogue
from .profile_files import TUNED_SECTIONS, tuned_profile
from .rendering import TUNED_PROFILE_NAME, FixError, FixInput

API_VERSION = "tuned.openshift.io/v1"
NAMESPACE = "openshift-cluster-node-tuning-operator"
CR_NAME = TUNED_PROFILE_NAME
# The operator's profile for worker nodes (tuned's profiles/openshift-node, which includes
# openshift and through it throughput-performance or virtual-guest: read-ahead >4096 KiB).
OPERATOR_NODE_PROFILE = "openshift-node"
# The operator's own CR recommends openshift-control-plane at 30 and openshift-node at 40;
# 20 comes first on the nodes this CR matches (as the operator's elasticsearch example does).
PRIORITY = 20
OPERATOR_PRIORITIES = {"openshift-control-plane": 30, "openshift-node": 40}
# The node label SAS Viya 4's node pools carry (cas, compute, stateful, stateless, connect),
# set by SAS's IaC projects and read by its deployment's node affinities: the CR matches a
# node that has it, whatever its class.
SAS_POOL_LABEL = "workload.sas.com/class"


class _LiteralDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, writing a multi-line string as a literal block (the profile reads
    as the tuned.conf it is); PyYAML itself falls back to a quoted scalar where a literal
    block could not hold the text, so any string stays data."""


def _string(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_LiteralDumper.add_representer(str, _string)


# The profile template's sections (remediations.profile_files' TUNED_SECTIONS) by the
# "[section] option" a rule says sascheck's profile sets it with (its tuned_sets).
SECTION_OF_OPTION = {"[cpu] governor": "cpu", "[vm] transparent_hugepages": "vm",
                     "[vm] transparent_hugepage.defrag": "vm", "[disk] readahead": "disk",
                     "[sysctl] vm.dirty_ratio": "dirty_ratio"}


def _sections(catalogue: Catalogue, fix: FixInput) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The sections the rules of the fix's profile are set by, and what each sets: only what
    a profile's rules say (viya4_node asks nothing of THP, read-ahead or the governor: its CR
    sets none of them), and each failing sysctl by its key."""
    asked = {SECTION_OF_OPTION.get(catalogue.rules[rule].tuned_sets)
             for rule in catalogue.profile(fix.profile).rule_ids}
    sections = tuple(name for name in TUNED_SECTIONS if name in asked)
    parts = tuple(TUNED_SECTIONS[name] for name in sections)
    return sections, parts + tuple(key for key, _ in fix.tuned_sysctl)


def _pool_match(pools: tuple[str, ...]) -> list[dict[str, str]]:
    """A node of one of the profile's pools (the match list is an OR), else any SAS pool."""
    if not pools:
        return [{"label": SAS_POOL_LABEL}]
    return [{"label": SAS_POOL_LABEL, "value": pool} for pool in pools]


def tuned_cr_object(catalogue: Catalogue, fix: FixInput) -> dict[str, Any]:
    """The Tuned CR as data. Its profile is the tuned format's, including openshift-node; the
    operator's tuned is a current release, so ">" bounds are used whatever the scanned node's
    own tuned (an RHCOS node runs the operator's, not one of its own)."""
    sections, parts = _sections(catalogue, fix)
    if not parts:
        raise FixError(f"profile {fix.profile} asks nothing a tuned profile sets, and no "
                       "sysctl of it failed: a Tuned CR would change nothing")
    operand = dataclasses.replace(fix, tuned_version=None, tuned_site_profile="")
    data = tuned_profile(operand, include=OPERATOR_NODE_PROFILE, sections=sections,
                         parts=parts, carrier=f"the Tuned CR {CR_NAME}")
    return {
        "apiVersion": API_VERSION,
        "kind": "Tuned",
        "metadata": {"name": CR_NAME, "namespace": NAMESPACE,
                     "labels": {"app.kubernetes.io/managed-by": "sascheck"}},
        "spec": {
            "profile": [{"name": TUNED_PROFILE_NAME, "data": data}],
            "recommend": [{"match": _pool_match(catalogue.profile(fix.profile).node_pools),
                           "priority": PRIORITY, "profile": TUNED_PROFILE_NAME}],
        },
    }


def tuned_cr(catalogue: Catalogue, fix: FixInput) -> str:
    pools = catalogue.profile(fix.profile).node_pools
    which = "=" + "|".join(pools) if pools else ""
    header = (f"# A Tuned CR for the Node Tuning Operator, written by sascheck from the scan of\n"
              f"# one node (profile {fix.profile}). Every node labelled {SAS_POOL_LABEL}{which}\n"
              f"# gets {TUNED_PROFILE_NAME} (priority {PRIORITY}, before the operator's "
              f"openshift-node at {OPERATOR_PRIORITIES['openshift-node']}).\n"
              f"#   apply: oc apply -f FILE\n"
              f"#   check: oc get profiles.tuned.openshift.io -n {NAMESPACE}\n"
              f"#   undo:  {revert_command()}\n")
    return header + yaml.dump(tuned_cr_object(catalogue, fix), Dumper=_LiteralDumper, sort_keys=False,
                              default_flow_style=False, allow_unicode=False, width=100)


def revert_command() -> str:
    """What undoes the fix: deleting the CR; the operator then gives each node the profile
    its own CR recommends, and tuned reverts what sas-performance set."""
    return shlex.join(["oc", "delete", f"tuneds.tuned.openshift.io/{CR_NAME}", "-n", NAMESPACE])
