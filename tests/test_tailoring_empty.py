"""Issue 66: a list value a tailoring tool set empty (SCAP Workbench's <set-value/>, a hand
edit's <set-value></set-value>) names none. oscap 1.3.7 hands OVAL the white space beside the
element as its value ("\\n    ", seen in its --verbose INFO trace), which named a directory
that is not there: every SAS file-system rule was `error`. The content trims it, and judges
sas_fs_type's WORK-on-GFS2 test with no DATA named; both engines then agree."""

from __future__ import annotations

import re

import pytest

from .support.example_roots import EXAMPLES
from .support.oscap import BEYOND_OVAL, oscap_available, oscap_eval, tailor

DATA_VALUE = "xccdf_org.sascheck.content_value_sas_data_dirs"


@pytest.mark.skipif(not oscap_available(), reason="oscap not installed")
@pytest.mark.parametrize("emptied", ["<xccdf:set-value idref=\"{id}\"/>",
                                     "<xccdf:set-value idref=\"{id}\"></xccdf:set-value>"],
                         ids=["self-closing", "no text"])
def test_an_empty_set_value_names_none_in_both_engines(tmp_path, scan, emptied):
    root = tmp_path / "root"
    EXAMPLES["rhel8-tuned-sas"](root)  # WORK and UTILLOC in sasv9_local.cfg, DATA unnamed
    tailoring = tailor(root, ["sas_data_dirs=/sasdata"], tmp_path / "tailoring.xml")
    pattern = f'<xccdf:set-value idref="{DATA_VALUE}">[^<]*</xccdf:set-value>'
    text, count = re.subn(pattern, emptied.format(id=DATA_VALUE), tailoring.read_text())
    assert count == 1
    tailoring.write_text(text)
    theirs = oscap_eval(root, tailoring, tmp_path)
    ours = {rule_id: rule["result"] for rule_id, rule in
            scan(root, "sas_data_dirs=", baseline_sets=False)["by_id"].items()}
    assert "error" not in theirs.values(), theirs
    assert {rule_id: verdict for rule_id, verdict in theirs.items()
            if rule_id not in BEYOND_OVAL and verdict != "notselected"} == {
        rule_id: verdict for rule_id, verdict in ours.items() if rule_id not in BEYOND_OVAL}
    assert theirs["sas_fs_type"] == "pass"  # WORK and UTILLOC judged, DATA's absence no error
