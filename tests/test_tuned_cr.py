"""`sascheck fix --format tuned-cr`: a Tuned CR the Node Tuning Operator takes, judged by the
operator's own CRD schema (tests/data/node-tuning-operator, with its origin), its own default
CR's priorities, and tuned's own profile loader over the profiles the operator's tuned has."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sascheck.cli import main
from sascheck.remediations import tuned_cr

from .support import tuned_loader
from .support.crd import refusals, served_schema
from .support.rhcos import NODES, rhcos_node
from .test_viya4_node import MACHINE_CONFIG_SYSCTL, RHCOS_KERNEL

NTO = Path(__file__).parent / "data" / "node-tuning-operator"
CRD, SCHEMA = served_schema(NTO / "20-tuned.crd.yaml")
[VERSION] = CRD["spec"]["versions"]
OCP_416 = NODES["RHCOS 4.16 (RHEL 9.4)"]


def _node(tmp_path: Path, **changes: Any) -> Path:
    os_release, ocp, *_ = OCP_416
    return rhcos_node(tmp_path / "node", os_release, ocp, **changes)


def _cr(tmp_path: Path, root: Path, profile: str = "viya3") -> tuple[str, dict[str, Any]]:
    """The CR for a node scanned under ``profile`` (viya3: SAS 9 papers' THP, read-ahead,
    governor and dirty ratio, and Viya's sysctls, max_map_count among them)."""
    out = tmp_path / "sas-tuned.yaml"
    assert main(["fix", "--format", "tuned-cr", "--root", str(root), "--profile", profile,
                 "--set", "sas_data_dirs=/sasdata", "-o", str(out)]) == 0
    text = out.read_text()
    return text, yaml.safe_load(text)


def _valid(cr: dict[str, Any]) -> list[str]:
    return refusals(SCHEMA, cr)


def test_the_schema_judges_the_operators_own_example_and_refuses_a_broken_cr():
    example = yaml.safe_load((NTO / "elasticsearch.yaml").read_text())
    assert _valid(example) == []
    broken = yaml.safe_load((NTO / "elasticsearch.yaml").read_text())
    broken["spec"]["recommend"][0]["priority"] = -1
    broken["spec"]["recommend"][0]["match"][0]["type"] = "namespace"
    del broken["spec"]["profile"][0]["name"]
    broken["spec"]["recomend"] = []
    assert len(_valid(broken)) == 4, _valid(broken)


def test_the_cr_for_a_failing_rhcos_node_is_valid_to_the_operators_crd(tmp_path):
    root = _node(tmp_path, thp_enabled="always", dirty_ratio=20, kernel=RHCOS_KERNEL,
                 extra_files={"/proc/sys/vm/max_map_count": "65530\n"})
    text, cr = _cr(tmp_path, root)
    assert _valid(cr) == [], _valid(cr)
    assert (cr["apiVersion"], cr["kind"]) == (
        f"{CRD['spec']['group']}/{VERSION['name']}", CRD["spec"]["names"]["kind"])
    assert cr["metadata"]["namespace"] == "openshift-cluster-node-tuning-operator"
    [profile] = cr["spec"]["profile"]
    [recommend] = cr["spec"]["recommend"]
    assert recommend["profile"] == profile["name"] == "sas-performance"
    assert recommend["match"] == [{"label": "workload.sas.com/class"}]
    assert "include=openshift-node\n" in profile["data"]
    assert "transparent_hugepages=never\n" in profile["data"]
    assert "vm.dirty_ratio=40\n" in profile["data"]
    assert "[bootloader]" not in profile["data"]  # not fully supported by the operator
    assert text.startswith("# ") and "oc delete tuneds.tuned.openshift.io/sas-performance" in text


def test_a_viya4_node_cr_sets_only_what_its_profile_asks_on_its_pool(tmp_path):
    """viya4_node asks vm.max_map_count of the stateful pool and nothing of THP, read-ahead
    or the governor (docs/kubernetes.md): its CR sets the one key, on those nodes alone."""
    root = _node(tmp_path, thp_enabled="always", kernel=RHCOS_KERNEL,
                 extra_files={"/proc/sys/vm/max_map_count": "65530\n"})
    out = tmp_path / "cr.yaml"
    assert main(["fix", "--format", "tuned-cr", "--root", str(root), "--profile", "viya4_node",
                 "-o", str(out)]) == 0
    cr = yaml.safe_load(out.read_text())
    assert _valid(cr) == []
    assert cr["spec"]["recommend"][0]["match"] == [
        {"label": "workload.sas.com/class", "value": "stateful"}]
    data = cr["spec"]["profile"][0]["data"]
    sections = [line for line in data.splitlines() if line.startswith("[")]
    assert sections == ["[main]", "[sysctl]"], data
    assert "vm.max_map_count=>262144\n" in data


def test_a_cr_that_would_change_nothing_is_refused(tmp_path, capsys):
    root = _node(tmp_path, kernel=RHCOS_KERNEL, extra_files={
        "/proc/sys/vm/max_map_count": "262144\n", **MACHINE_CONFIG_SYSCTL})
    assert main(["fix", "--format", "tuned-cr", "--root", str(root), "--profile", "viya4_node",
                 "-o", str(tmp_path / "cr.yaml")]) != 0
    assert "a Tuned CR would change nothing" in capsys.readouterr().err
    assert not (tmp_path / "cr.yaml").exists()


def test_every_option_a_rule_names_has_its_section(catalogue):
    """A rule's tuned_sets (the option of sascheck's profile that carries it) decides which
    section a CR holds: a new option must be given one."""
    named = {rule.tuned_sets for rule in catalogue.rules.values() if rule.tuned_sets}
    assert named and named <= set(tuned_cr.SECTION_OF_OPTION)


def test_its_priority_comes_before_the_operators_own_profiles():
    """Lower numbers win (the CRD: "Highest priority is 0"): the operator's default CR as it
    ships is read, not a copy of its numbers."""
    default = yaml.safe_load((NTO / "default-cr-tuned.yaml").read_text())
    shipped = {item["profile"]: item["priority"] for item in default["spec"]["recommend"]}
    assert shipped == tuned_cr.OPERATOR_PRIORITIES
    assert 0 <= tuned_cr.PRIORITY < min(shipped.values())


def _operator_profiles(root: Path, data: str) -> list[str]:
    """The profile directories the operator's tuned reads: the profiles tuned ships (here
    Debian's tuned 2.20, which has tuned's openshift profiles) and the CR's profiles, which
    the operand writes to /var/lib/ocp-tuned/profiles/NAME/tuned.conf (pkg/tuned/controller.go:
    tunedProfilesDirCustom, at the commit tests/data/node-tuning-operator names)."""
    shipped = tuned_loader.PACKAGE.parents[3] / "usr/lib/tuned"
    system = root / "usr/lib/tuned"
    for name in ("openshift", "openshift-node", "throughput-performance", "virtual-guest",
                 "functions"):
        source = shipped / name
        if source.is_dir():
            shutil.copytree(source, system / name)
        else:
            shutil.copy(source, system / name)
    custom = root / "var/lib/ocp-tuned/profiles"
    (custom / "sas-performance").mkdir(parents=True)
    (custom / "sas-performance/tuned.conf").write_text(data)
    return [str(system), str(custom)]


def test_tuned_loads_the_crs_profile_over_the_operators_openshift_node(tmp_path):
    tuned_loader.require()
    _, cr = _cr(tmp_path, _node(tmp_path, thp_enabled="always", dirty_ratio=20,
                                kernel=RHCOS_KERNEL,
                                extra_files={"/proc/sys/vm/max_map_count": "65530\n"}))
    directories = _operator_profiles(tmp_path / "operand", cr["spec"]["profile"][0]["data"])
    loaded = tuned_loader.load_from(directories, "sas-performance")
    assert "error" not in loaded, loaded
    units = loaded["units"]
    assert units["vm"]["transparent_hugepages"] == "never"
    assert units["cpu"]["governor"] == "performance"
    assert units["disk"]["readahead"] == ">4096"
    # the node failed max_map_count: sascheck's bound (only ever raising the key) replaces
    # the openshift profile's 262144; the rest of openshift's [sysctl] stays
    assert units["sysctl"]["vm.max_map_count"] == ">262144"
    assert units["sysctl"]["kernel.pid_max"] == ">4194304"
    assert units["sysctl"]["vm.dirty_ratio"] == "40"


def test_revert_prints_the_delete_for_the_cr_the_fix_wrote(tmp_path, capsys):
    _, cr = _cr(tmp_path, _node(tmp_path))
    capsys.readouterr()
    assert main(["fix", "--format", "tuned-cr", "--revert"]) == 0
    said = capsys.readouterr().out.split()
    assert said == ["oc", "delete", f"tuneds.tuned.openshift.io/{cr['metadata']['name']}",
                    "-n", cr["metadata"]["namespace"]]


@pytest.mark.parametrize(("argv", "message"), [
    (["--format", "bash", "--revert"], "--revert MANIFEST"),
    (["--format", "tuned-cr", "--root", "/"], "-o FILE is needed"),
])
def test_what_fix_refuses_is_said(argv, message):
    completed = subprocess.run([sys.executable, "-m", "sascheck", "fix", *argv],
                               capture_output=True, text=True, timeout=60)
    assert completed.returncode != 0 and message in completed.stderr, completed.stderr
    assert "Traceback" not in completed.stderr
