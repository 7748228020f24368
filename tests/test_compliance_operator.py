"""The content in OpenShift's Compliance Operator: the sample objects in
deploy/compliance-operator validate against the operator's own CRDs
(tests/data/compliance-operator, with its origin), name what the operator makes of the data
stream, and the scan the operator runs (oscap with the node's root as OSCAP_PROBE_ROOT and
the tailoring it writes from a TailoredProfile) gives sascheck's verdicts.

The operator's logic is read from its source at 456557cc3fb6759aed3c66aa0fa849023d63847a
and cited where it is mirrored here."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from lxml import etree

from sascheck.cli import main
from sascheck.content.xccdf import profile_id

from .support.crd import refusals, served_schema
from .support.hosts import SasFs
from .support.oscap import BEYOND_OVAL, DATASTREAM, PROJECT, run_oscap
from .support.rhcos import NODES, rhcos_node
from .test_parity import KNOWN_DIFFERENCES
from .test_viya4_node import RHCOS_KERNEL, RULES, STATEFUL_NODES
from .test_viya4_node import _node as viya4_node

DEPLOY = PROJECT / "deploy" / "compliance-operator"
CRDS = Path(__file__).parent / "data" / "compliance-operator"
XCCDF = "http://checklists.nist.gov/xccdf/1.2"
OPERATOR_XCCDF = "compliance.openshift.io"  # pkg/xccdf/tailoring.go XCCDFNamespace


def _crd(plural: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return served_schema(CRDS / f"compliance.openshift.io_{plural}.yaml")


def _sample(name: str) -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / f"{name}.yaml").read_text())


def _operator_name(xccdf_id: str) -> str:
    """pkg/xccdf/tailoring.go GetProfileNameFromID / GetVariableNameFromID: the ssgproject
    prefix trimmed (sascheck's ids do not have it), "_" to "-", lower case."""
    trimmed = re.sub(r"^xccdf_org\.ssgproject\.content_(profile|rule|value)_", "", xccdf_id)
    return trimmed.replace("_", "-").lower()


def _bundle_objects(bundle: str) -> dict[str, str]:
    """The Profile, Rule and Variable objects the operator makes of the data stream, by name
    (pkg/profileparser/profileparser.go: GetPrefixedName(bundle, name)) -> XCCDF id."""
    tree = etree.parse(str(DATASTREAM))
    return {f"{bundle}-{_operator_name(element.get('id'))}": element.get("id")
            for element in tree.iterfind(f".//{{{XCCDF}}}Benchmark//*[@id]")
            if etree.QName(element).localname in ("Profile", "Rule", "Value")}


def _drop_content_file(obj: dict[str, Any]) -> None:
    del obj["spec"]["contentFile"]


def _drop_a_rationale(obj: dict[str, Any]) -> None:
    tailored = obj["spec"].get("setValues") or obj["spec"]["disableRules"]
    del tailored[0]["rationale"]


def _profiles_not_a_list(obj: dict[str, Any]) -> None:
    obj["profiles"] = {"name": "sascheck-sas-nodes"}


@pytest.mark.parametrize(("sample", "plural", "break_it"), [
    ("profilebundle", "profilebundles", _drop_content_file),
    ("tailoredprofile", "tailoredprofiles", _drop_a_rationale),
    ("tailoredprofile-viya4-node", "tailoredprofiles", _drop_a_rationale),
    ("scansettingbinding", "scansettingbindings", _profiles_not_a_list)])
def test_each_sample_is_valid_to_the_operators_crd(sample, plural, break_it):
    crd, schema = _crd(plural)
    obj = _sample(sample)
    assert refusals(schema, obj) == []
    assert obj["kind"] == crd["spec"]["names"]["kind"]
    break_it(obj)  # the schema is not vacuous: the same object, broken, is refused
    assert refusals(schema, obj)


def test_the_operator_makes_a_node_scan_of_the_benchmark():
    """parseProductTypeAndName: the Benchmark's first platform's CPE part "o" is a node scan,
    anything else a platform scan of the cluster's API."""
    tree = etree.parse(str(DATASTREAM))
    benchmark = tree.find(f".//{{{XCCDF}}}Benchmark")
    first = benchmark.find(f"{{{XCCDF}}}platform")
    part = first.get("idref").removeprefix("cpe:/").split(":")[0]
    assert part == "o", first.get("idref")
    assert all(p.find(f"{{{XCCDF}}}platform") is None
               for p in benchmark.iterfind(f"{{{XCCDF}}}Profile"))  # none overrides it


def test_the_samples_name_what_the_operator_makes_of_the_content():
    bundle = _sample("profilebundle")
    objects = _bundle_objects(bundle["metadata"]["name"])
    tailored = _sample("tailoredprofile")
    assert objects[tailored["spec"]["extends"]] == profile_id("default")
    for item in tailored["spec"]["setValues"]:
        assert objects[item["name"]].startswith("xccdf_org.sascheck.content_value_"), item
    stateful = _sample("tailoredprofile-viya4-node")
    assert objects[stateful["spec"]["extends"]] == profile_id("viya4_node")
    assert [objects[item["name"]] for item in stateful["spec"]["disableRules"]] == [
        "xccdf_org.sascheck.content_rule_max_map_count_at_boot"]
    binding = _sample("scansettingbinding")
    assert {(p["kind"], p["name"]) for p in binding["profiles"]} == {
        ("TailoredProfile", tailored["metadata"]["name"]),
        ("TailoredProfile", stateful["metadata"]["name"])}
    # the content image holds the data stream where the operator copies it from
    containerfile = (DEPLOY / "Containerfile").read_text()
    copy = re.search(r"^COPY .*?(\S+) (\S+)$", containerfile, re.MULTILINE)
    assert copy and (PROJECT / copy.group(1)).resolve() == DATASTREAM
    assert copy.group(2) == "/" + bundle["spec"]["contentFile"]


def operator_tailoring(tailored: dict[str, Any], bundle: dict[str, Any], output: Path) -> str:
    """The tailoring file the operator writes for a TailoredProfile (pkg/xccdf/tailoring.go,
    TailoredProfileToXML), its profile's id returned: the extended profile's groups selected,
    each setValue as a set-value of the Variable's XCCDF id."""
    objects = _bundle_objects(bundle["metadata"]["name"])
    name = tailored["metadata"]["name"]
    nsmap = {"xccdf-1.2": XCCDF}
    root = etree.Element(f"{{{XCCDF}}}Tailoring", nsmap=nsmap,
                         id=f"xccdf_{OPERATOR_XCCDF}_tailoring_{name}")
    etree.SubElement(root, f"{{{XCCDF}}}benchmark", href=f"/content/{bundle['spec']['contentFile']}")
    etree.SubElement(root, f"{{{XCCDF}}}version", time="2026-11-29T00:00:00Z").text = "1"
    tailored_id = f"xccdf_{OPERATOR_XCCDF}_profile_{name}"
    profile = etree.SubElement(root, f"{{{XCCDF}}}Profile", id=tailored_id,
                               extends=objects[tailored["spec"]["extends"]])
    for field in ("title", "description"):
        etree.SubElement(profile, f"{{{XCCDF}}}{field}", override="true").text = \
            tailored["spec"][field]
    groups = etree.parse(str(DATASTREAM)).iterfind(f".//{{{XCCDF}}}Group")
    for group in groups:
        etree.SubElement(profile, f"{{{XCCDF}}}select", idref=group.get("id"), selected="true")
    for item in tailored["spec"].get("disableRules", []):
        etree.SubElement(profile, f"{{{XCCDF}}}select", idref=objects[item["name"]],
                         selected="false")
    for item in tailored["spec"].get("setValues", []):
        etree.SubElement(profile, f"{{{XCCDF}}}set-value",
                         idref=objects[item["name"]]).text = item["value"]
    output.write_bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8",
                                      pretty_print=True))
    return tailored_id


def _operator_scan(host: Path, tailoring: Path | None, profile: str, workdir: Path
                   ) -> dict[str, str]:
    """pkg/controller/compliancescan/config.go's entry point: OSCAP_PROBE_ROOT=$HOSTROOT
    (the node's / mounted at /host), oscap xccdf eval [--tailoring-file] --profile
    --results-arf ARF CONTENT (a disconnected cluster: no --fetch-remote-resources)."""
    from sascheck.reports.arf import read_arf

    arf = workdir / "arf.xml"
    argv = ["oscap", "xccdf", "eval", *(["--tailoring-file", str(tailoring)] if tailoring else []),
            "--profile", profile, "--results-arf", str(arf), str(DATASTREAM)]
    completed = run_oscap(argv, {**os.environ, "OSCAP_PROBE_ROOT": str(host)})
    assert completed.returncode in (0, 2), completed.stderr[-2000:]
    return read_arf(str(arf)).results


def _sascheck(host: Path, profile: str, sets: list[str], workdir: Path) -> dict[str, str]:
    import json

    out = workdir / "sascheck.json"
    main(["scan", "--root", str(host), "--profile", profile, "--json", str(out), "--quiet",
          *(arg for value in sets for arg in ("--set", value))])
    return {rule["id"]: rule["result"] for rule in json.loads(out.read_text())["rules"]}


def _mount_unit(lv: str, where: str) -> str:
    """A MachineConfig's systemd mount unit, as OpenShift's docs write one for a secondary
    disk (enabled: the Machine Config Daemon links it into local-fs.target.wants)."""
    return (f"[Unit]\nDescription=Mount {where}\n\n[Mount]\nWhat=/dev/mapper/sasvg-{lv}\n"
            f"Where={where}\nType=xfs\nOptions=defaults,noatime\n\n"
            "[Install]\nWantedBy=local-fs.target\n")


def _sas_node(path: Path) -> Path:
    """An RHCOS 4.16 node of SAS's compute or CAS pool: SASWORK and the CAS cache on local
    disks a MachineConfig mounts under /var/mnt (no fstab line), where the sample
    TailoredProfile says they are."""
    os_release, ocp, *_ = NODES["RHCOS 4.16 (RHEL 9.4)"]
    units = {"var-mnt-saswork.mount": ("saswork", "/var/mnt/saswork"),
             "var-mnt-cascache.mount": ("sasutil", "/var/mnt/cascache")}
    return rhcos_node(
        path, os_release, ocp, kernel=RHCOS_KERNEL, sas_local_cfg=None,
        filesystems=[SasFs(lv, where, fstab=None) for lv, where in units.values()],
        extra_files={f"/etc/systemd/system/{name}": _mount_unit(*unit)
                     for name, unit in units.items()},
        extra_links={f"/etc/systemd/system/local-fs.target.wants/{name}":
                     f"/etc/systemd/system/{name}" for name in units})


def test_the_operators_scan_of_the_tailored_profile_agrees_with_sascheck(tmp_path):
    """The TailoredProfile as the operator turns it into a tailoring file and runs it on the
    node: both engines give the same verdicts but where OVAL cannot read a mount unit (the
    listed difference of tests/test_parity.py, stricter: never a false pass)."""
    host = _sas_node(tmp_path / "host")
    tailored, bundle = _sample("tailoredprofile"), _sample("profilebundle")
    tailoring = tmp_path / "tailoring.xml"
    theirs = _operator_scan(host, tailoring, operator_tailoring(tailored, bundle, tailoring),
                            tmp_path)
    variables = _bundle_objects(bundle["metadata"]["name"])
    sets = [f"{variables[item['name']].removeprefix('xccdf_org.sascheck.content_value_')}="
            f"{item['value']}" for item in tailored["spec"]["setValues"]]
    ours = _sascheck(host, "default", sets, tmp_path)
    assert {"sas_fs_type", "sas_dirs_separate", "sas_fs_noatime", "read_ahead"} <= {
        rule for rule, result in ours.items() if result == "pass"}  # the directories judged
    differences = {rule: (ours[rule], theirs.get(rule)) for rule in ours
                   if rule not in BEYOND_OVAL and ours[rule] != theirs.get(rule)}
    assert differences == KNOWN_DIFFERENCES[
        "boot mounts: an enabled mount unit without an fstab line"]


@pytest.mark.parametrize("case", sorted(STATEFUL_NODES))
def test_the_operators_scans_of_viya4_node_agree_with_sascheck(tmp_path, case):
    """viya4_node on the stateful nodes of tests/test_viya4_node.py: as its Profile
    (untailored) and as the sample TailoredProfile, which leaves the at-boot rule out."""
    system, files, running, at_boot = STATEFUL_NODES[case]
    host = viya4_node(tmp_path / "host", system, files)
    ours = _sascheck(host, "viya4_node", [], tmp_path)
    judged = {rule: ours[rule] for rule in RULES}
    assert judged == {"vm_max_map_count": running, "max_map_count_at_boot": at_boot}
    untailored = _operator_scan(host, None, profile_id("viya4_node"), tmp_path)
    assert {rule: untailored[rule] for rule in RULES} == judged
    tailoring = tmp_path / "tailoring.xml"
    tailored_id = operator_tailoring(_sample("tailoredprofile-viya4-node"),
                                     _sample("profilebundle"), tailoring)
    tailored = _operator_scan(host, tailoring, tailored_id, tmp_path)
    assert {rule: tailored[rule] for rule in RULES} == {
        "vm_max_map_count": running, "max_map_count_at_boot": "notselected"}
