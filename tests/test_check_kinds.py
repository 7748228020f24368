"""Each check kind is declared once (rules/check_kinds.py) and implemented by every engine."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from ansible.parsing.yaml.loader import AnsibleLoader
from lxml import etree

from sascheck.content.build import compile_catalogue
from sascheck.content.checks import GENERATORS
from sascheck.content.oval import OvalDocument
from sascheck.content.platforms import build_facts
from sascheck.remediations.generate import ansible_playbook
from sascheck.remediations.rendering import TEMPLATES, FixInput
from sascheck.rules import CatalogueError, load_catalogue
from sascheck.rules.check_kinds import APPLICABILITY_FACTS, GROUPS, KINDS, schema_with_current_kinds
from sascheck.rules.loader import RULES_DIR
from sascheck.scanner.checks import CHECKS
from sascheck.scanner.engine import MISSING_FACT

NS = {"x": "http://checklists.nist.gov/xccdf/1.2",
      "o": "http://oval.mitre.org/XMLSchema/oval-definitions-5"}


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


def test_every_kind_has_an_evaluator_a_generator_and_a_fix():
    assert set(CHECKS) == set(KINDS), "scanner/checks CHECKS"
    assert set(GENERATORS) == {name for name, kind in KINDS.items() if kind.has_oval}, \
        "content/checks GENERATORS (measured kinds, and those OVAL cannot express, have none)"
    for kind in KINDS.values():
        template = TEMPLATES / "bash" / f"{kind.name}.sh.j2"
        assert template.exists() == kind.automatic_fix, template


def test_every_rule_has_ansible_tasks_that_make_its_planned_changes(catalogue):
    fix = FixInput(host="h", role="bare_metal", profile="default", kernel="",
                   values={n: v.default for n, v in catalogue.variables.items()},
                   rule_ids=tuple(catalogue.rules))
    play = AnsibleLoader(ansible_playbook(catalogue, fix)).get_single_data()[0]
    blocks = {task["tags"][0]: task for task in play["tasks"] if "block" in task}
    for rule in catalogue.rules.values():
        assert rule.id in blocks, rule.id
        assert f"'equalto', '{rule.id}'" in blocks[rule.id]["vars"]["sascheck_actions"]
        assert blocks[rule.id]["block"], rule.id


def test_applicability_facts_are_implemented_by_both_engines():
    assert set(MISSING_FACT) == set(APPLICABILITY_FACTS)
    assert set(APPLICABILITY_FACTS) <= set(build_facts(OvalDocument(namespace="t")))
    assert {need for kind in KINDS.values() for need in kind.needs} <= set(APPLICABILITY_FACTS)


def test_committed_rule_schema_lists_the_current_kinds():
    text = (RULES_DIR / "schema.json").read_text(encoding="utf-8")
    assert text == schema_with_current_kinds(text), "run scripts/update-generated"


def _externals_referenced(oval: etree._Element, definition_id: str) -> set[str]:
    """The site values (external variables' comments) an OVAL definition reaches."""
    by_id = {element.get("id"): element for element in oval.iter() if element.get("id")}
    seen: set[str] = set()
    pending = [definition_id]
    names: set[str] = set()
    while pending:
        current = pending.pop()
        if current in seen or current not in by_id:
            continue
        seen.add(current)
        element = by_id[current]
        if etree.QName(element).localname == "external_variable":
            names.add(element.get("comment", ""))
            continue
        for node in element.iter():
            pending += [node.get(a) for a in ("test_ref", "object_ref", "state_ref", "var_ref",
                                              "definition_ref")  # a shared part (oval_share)
                        if node.get(a)]
            if node.text and node.text.startswith("oval:"):
                pending.append(node.text)
    return names


def test_declared_site_values_are_what_the_oval_reads_and_xccdf_exports(catalogue):
    stream = etree.fromstring(compile_catalogue(catalogue))
    oval = next(o for o in stream.iterfind(".//o:oval_definitions", NS)
                if "cpe" not in o.find(".//o:definition", NS).get("id"))
    for rule in catalogue.rules.values():
        xccdf_rule = stream.find(f".//x:Rule[@id='xccdf_org.sascheck.content_rule_{rule.id}']",
                                 NS)
        if not KINDS[rule.kind].has_oval:  # iotest or the scanner alone judges it: no check
            assert xccdf_rule.findall("x:check", NS) == [], rule.id
            continue
        check = xccdf_rule.findall("x:check", NS)[-1]
        exported = {e.get("value-id").rsplit("_value_", 1)[-1]
                    for e in check.findall("x:check-export", NS)}
        definition = check.find("x:check-content-ref", NS).get("name")
        assert exported == set(rule.values), rule.id
        assert _externals_referenced(oval, definition) == set(rule.values), rule.id


def _copy_catalogue(tmp_path: Path) -> Path:
    directory = tmp_path / "rules"
    shutil.copytree(RULES_DIR, directory, ignore=shutil.ignore_patterns("*.py", "__pycache__",
                                                                        "validated.sha256"))
    return directory


def test_a_manual_kind_needs_manual_steps_in_the_rule_file(tmp_path):
    directory = _copy_catalogue(tmp_path)
    rule_file = directory / "sas_fs_type.yml"
    text = rule_file.read_text()
    rule_file.write_text(text[:text.index("manual_fix:")])
    with pytest.raises(CatalogueError) as caught:
        load_catalogue(directory)
    assert "sas_fs_type.yml:" in str(caught.value)
    assert "field 'manual_fix'" in str(caught.value)


def test_an_unknown_source_is_named_with_its_line(tmp_path):
    directory = _copy_catalogue(tmp_path)
    rule_file = directory / "read_ahead.yml"
    rule_file.write_text(rule_file.read_text().replace("source: rh-sas92-ra", "source: nowhere",
                                                       1))
    with pytest.raises(CatalogueError) as caught:
        load_catalogue(directory)
    message = str(caught.value)
    assert "read_ahead.yml:" in message and "unknown source 'nowhere'" in message
    assert "references.0.source" in message


def test_an_unknown_kind_is_refused_by_the_generated_schema(tmp_path):
    directory = _copy_catalogue(tmp_path)
    rule_file = directory / "read_ahead.yml"
    rule_file.write_text(rule_file.read_text().replace("kind: block_read_ahead",
                                                       "kind: block_readahead"))
    with pytest.raises(CatalogueError) as caught:
        load_catalogue(directory)
    assert "read_ahead.yml:" in str(caught.value) and "check.kind" in str(caught.value)


def test_rules_cite_sources_by_title_publisher_and_year(catalogue):
    reference = catalogue.rules["thp_disabled"].references[0]
    assert reference.citation == ("Red Hat, Optimizing RHEL for SAS 9.2 (2011), "
                                  "§5.3 Transparent Huge Pages")
    for source in catalogue.sources.values():
        if source.url:  # a public page, not a seed text
            assert source.url.startswith("https://") and not source.file, source.id
            continue
        assert (RULES_DIR.parent.parent / "shared" / "seeds" / source.file).exists() or \
            not (RULES_DIR.parent.parent / "shared" / "seeds").exists(), source.file


def test_every_site_value_a_fix_block_reads_is_set_in_every_fix_format(catalogue):
    """Issue 47: a value a rule's fix reads reached no fix format unless it was added by
    hand to three lists. Each rule's bash block is read for the site values it uses
    (${NAME}); each must be set in the rule's own XCCDF bash fix, its Ansible tasks'
    environment, and the playbook and planner `sascheck fix` writes for it."""
    from sascheck.remediations.generate import (
        _rule_context,
        _template_for,
        ansible_planner,
    )
    from sascheck.remediations.rendering import environment
    from sascheck.remediations.xccdf_fixes import xccdf_fix_texts

    shell_names = {name.upper(): name for name in catalogue.variables}
    fixes, _ = xccdf_fix_texts(catalogue)
    defaults = {name: variable.default for name, variable in catalogue.variables.items()}
    seen = set()
    for rule in catalogue.rules.values():
        body = environment().get_template(_template_for(rule, "bash")).render(
            **_rule_context(rule))
        read = {shell_names[m] for m in re.findall(r"\$\{?([A-Z][A-Z0-9_]*)", body)
                if m in shell_names}
        seen |= read
        if rule.manual_fix:  # a person's work: fixtext, no <fix> (test_content_fix_text)
            assert fixes[rule.id] == []
            continue
        bash, tasks = (text for _, text in fixes[rule.id])
        fix = FixInput(host="h", role="bare_metal", profile="default", kernel="",
                       values=defaults, rule_ids=(rule.id,))
        playbook, planner = ansible_playbook(catalogue, fix), ansible_planner(catalogue, fix)
        for name in read:
            upper = name.upper()
            assert re.search(rf"^(IFS=, read -r -a )?{upper}[= ]", bash, re.M), (rule.id, name)
            assert f"SASCHECK_{upper}: " in tasks, (rule.id, name)
            assert f"SASCHECK_{upper}: " in playbook and f"sascheck_{name}" in playbook
            assert re.search(rf"^(IFS=, read -r -a )?{upper}[= ]", planner, re.M)
    assert {"dirty_ratio", "storage_cache_protected"} <= seen  # the test reads something


def test_every_kind_sits_in_exactly_one_group():
    """The data stream's XCCDF Groups come from rules/check_kinds.py GROUPS: a new kind
    must name its subsystem there."""
    placed = [kind for _, kinds in GROUPS.values() for kind in kinds]
    assert sorted(placed) == sorted(KINDS)
