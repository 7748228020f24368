"""One host scanned by both engines is one host on the fleet page (issue 24, item 7): the
sascheck results, with a line saying where oscap's ARF for the same host agrees and differs."""

from __future__ import annotations

import json

import pytest

from sascheck.cli import main
from sascheck.reports.loading import load
from sascheck.reports.merging import merge_engines
from sascheck.reports.model import HostView, RuleView
from sascheck.rules import load_catalogue

from .support.browser import browser_available, open_page
from .support.hosts import BASELINE_SETS, sas_host
from .support.oscap import oscap_available, oscap_eval, tailor

needs_tools = pytest.mark.skipif(not (oscap_available() and browser_available()),
                                 reason="oscap or chromium missing")


@needs_tools
def test_a_host_scanned_by_both_engines_is_one_row(tmp_path):
    root = sas_host(tmp_path / "root", thp_enabled="[always] madvise never")
    work = tmp_path / "work"
    work.mkdir()
    oscap_eval(root, tailor(root, BASELINE_SETS, work / "t.xml"), work, as_users_run_it=True)
    arf = work / "results-arf.xml"
    # oscap reads the host name from the probed root, as sascheck does
    name = load(str(arf), load_catalogue()).name
    ours = tmp_path / "host.json"
    main(["scan", "--root", str(root), "--quiet", "--json", str(ours),
          *[f"--set={s}" for s in BASELINE_SETS]])
    other, other_root = tmp_path / "other.json", sas_host(tmp_path / "other")
    for path in ("etc/hostname", "proc/sys/kernel/hostname"):
        (other_root / path).write_text("sasother\n")
    main(["scan", "--root", str(other_root), "--quiet", "--json", str(other),
          *[f"--set={s}" for s in BASELINE_SETS]])
    assert json.loads(ours.read_text())["host"]["hostname"] == name
    html = tmp_path / "fleet.html"
    assert main(["report", str(ours), str(arf), str(other), "--fleet", "-o", str(html)]) == 0
    with open_page(html) as (page, log):
        rows = page.locator("table.matrix tr").count() - 1
        assert rows == 2  # the twice-scanned host once, and the other host
        assert page.locator("#hosts-shown").text_content() == "2"
        page.locator("table.matrix a", has_text=name).first.click()
        page.locator("article.rule").first.wait_for(state="visible")
        text = page.locator("#" + page.url.rsplit("#", 1)[1]).text_content()
    assert "Also scanned by oscap" in text and str(arf) in text
    assert "the engines agree on" in text
    assert log.console_errors == []
    # The two files alone: that host's page, with oscap's word beside sascheck's (issue 38).
    page_file = tmp_path / "host.html"
    assert main(["report", str(ours), str(arf), "-o", str(page_file)]) == 0
    with open_page(page_file) as (page, log):
        assert page.locator("section.host").count() == 1
        line = page.locator("p.engines").text_content()
    assert line.startswith("Also scanned by oscap:") and str(arf) in line
    assert "the engines agree on" in line


def _view(name: str, source: str) -> HostView:
    return HostView(name=name, source=source, path=f"{name}.{source}",
                    rules=[RuleView(id="thp_disabled", title="", severity="", result="pass")])


@pytest.mark.parametrize(("ours", "theirs", "merged"), [
    ("db1", "db1.example.com", True),  # one name without its domain
    ("DB1.example.com", "db1.example.com", True),
    ("db1.site-a.example", "db1.site-b.example", False),  # two hosts of one short name
    ("db1", "db2", False),
])
def test_engines_meet_on_the_host_name(ours, theirs, merged):
    hosts = merge_engines([_view(ours, "sascheck"), _view(theirs, "oscap")])
    assert len(hosts) == (1 if merged else 2)
    if merged:
        assert hosts[0].source == "sascheck"
        assert hosts[0].other_engines == [f"{theirs}.oscap (time unknown): the engines agree "
                                          "on 1 rules"]
