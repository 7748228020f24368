"""The contributor docs work as written: docs/adding-a-rule.md is followed step by step in a
temporary copy of rules/ (its YAML blocks are the files it writes), then a scan uses the new
rule; docs/adding-a-check-kind.md names every place a kind lives."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from sascheck.rules import load_catalogue
from sascheck.rules.loader import RULES_DIR
from sascheck.scanner.scan import run_scan

from .hosts import BASELINE_SETS, sas_host

DOCS = Path(__file__).resolve().parent.parent / "docs"
# A fenced YAML block whose first line names the file it belongs in.
BLOCK = re.compile(r"```yaml\n# rules/(?P<file>[\w./-]+)(?P<append> \(append\))?\n(?P<body>.*?)```",
                   re.S)


def _follow_adding_a_rule(directory: Path) -> str:
    """Apply the doc's blocks to ``directory``; the new rule's id."""
    new_rule = ""
    for block in BLOCK.finditer((DOCS / "adding-a-rule.md").read_text(encoding="utf-8")):
        target = directory / block["file"]
        if block["append"]:
            target.write_text(target.read_text(encoding="utf-8") + block["body"],
                              encoding="utf-8")
        else:
            assert not target.exists(), f"the doc's example rule {target.name} exists already"
            target.write_text(block["body"], encoding="utf-8")
            new_rule = target.stem
    assert new_rule, "adding-a-rule.md has no rule block"
    return new_rule


@pytest.mark.parametrize(("value", "expected"), [(10, "pass"), (35, "fail")])
def test_adding_a_rule_as_the_doc_says(tmp_path, value, expected):
    directory = tmp_path / "rules"
    shutil.copytree(RULES_DIR, directory, ignore=shutil.ignore_patterns(
        "*.py", "__pycache__", "validated.sha256"))
    rule_id = _follow_adding_a_rule(directory)
    catalogue = load_catalogue(directory)  # the full schema pass: not stamped
    assert rule_id in catalogue.profile("default").rule_ids
    rule = catalogue.rules[rule_id]
    assert rule.values == ("dirty_background_ratio",)
    root = sas_host(tmp_path / "root",
                    extra_files={"/proc/sys/vm/dirty_background_ratio": f"{value}\n"})
    result = run_scan(catalogue, "default", BASELINE_SETS, str(root), "bare_metal").to_dict()
    verdict = {r["id"]: r for r in result["rules"]}[rule_id]
    assert verdict["result"] == expected, verdict
    assert verdict["references"][0]["citation"].startswith("Red Hat, Comparing the Performance")


def test_adding_a_check_kind_names_every_place_a_kind_lives():
    text = (DOCS / "adding-a-check-kind.md").read_text(encoding="utf-8")
    for place in ("rules/check_kinds.py", "scanner/checks/", "CHECKS", "content/checks/",
                  "GENERATORS", "remediations/templates/bash/", "scripts/update-generated",
                  "tests/test_check_kinds.py", "tests/test_parity.py", "host_layout.py"):
        assert place in text, place


def test_docs_cite_nothing_outside_the_repository():
    """A reader of a clone has the repository only (issue 24, item 10): no path above it.
    A page in docs/ may point up to the repository's own files (../README.md), never past
    it; and whatever it points to exists."""
    docs = Path(__file__).resolve().parent.parent / "docs"
    project = docs.parent
    for page in sorted(docs.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        assert "shared/" not in text and "../../" not in text, page.name
        for path in re.findall(r"\]\(([^)#\s]+)\)", text):  # the page's links
            if re.match(r"[a-z]+:", path):
                continue
            target = (docs / path).resolve()
            assert target.is_relative_to(project), f"{page.name}: {path}"
            assert target.exists(), f"{page.name}: {path}"
