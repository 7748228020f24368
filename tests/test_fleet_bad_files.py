"""One bad results file is one error row (issue 39): a fleet report over good results and
each kind of unreadable file lists the good hosts as usual, names each bad file with its
reason, and exits 3 ("something was unreadable"), not 2 and not a usage error; diff alike."""

from __future__ import annotations

import json
from pathlib import Path

from lxml import html as lxml_html

from sascheck.cli import main

from .support.browser import browser_available, fleet_index, open_page
from .support.hosts import BASELINE_SETS, sas_host
from .test_reports import _scan_json

# name: (file name, content), each a results file the report cannot take
BAD = {
    "truncated": ("truncated.json", '{"schema": "sascheck-result/1", "host": {'),
    "non-finite": ("nonfinite.json", '{"schema": "sascheck-result/1", "x": 1e999}'),
    "wrong schema": ("wrongschema.json", '{"schema": "sascheck-result/1", "rules": 7}'),
    "not an ARF": ("notarf.xml", "<html><body>not an ARF</body></html>"),
}


def _fleet(tmp_path: Path) -> Path:
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    for name in ("sasgrid01", "sasgrid02"):
        root = sas_host(tmp_path / f"root-{name}", extra_files={"/etc/hostname": f"{name}\n"})
        _scan_json(root, BASELINE_SETS, fleet / f"{name}.json")
    for file, text in BAD.values():
        (fleet / file).write_text(text)
    return fleet


def test_each_bad_file_is_an_error_row_and_the_rest_is_reported(tmp_path, capsys):
    fleet = _fleet(tmp_path)
    page = tmp_path / "fleet.html"
    assert main(["report", "--fleet", str(fleet), "-o", str(page)]) == 3
    said = capsys.readouterr().err
    rows = {row["n"]: row for row in fleet_index(page.read_text())["hosts"]}
    assert {"sasgrid01", "sasgrid02"} <= set(rows)
    for file, _ in BAD.values():
        assert file in rows and set(rows[file]["r"]) == {"e"}
        assert f"unreadable results (an error row on the page): {fleet / file}" in said
        # not scanned: no failures by severity, no score, the reason (issue 38's counts)
        assert rows[file]["f"] == [0, 0, 0] and rows[file]["sc"] is None
        assert rows[file]["x"].startswith("results file unreadable:")
    tree = lxml_html.fromstring(page.read_text())
    errors = tree.xpath("//table[@class='counts']//tr[td[contains(., 'thp_disabled')]]/td[4]")
    assert [cell.text_content().strip() for cell in errors][:1] == ["0"]
    assert tree.xpath("//div[@class='card'][div[contains(., 'Not scanned')]]"
                      "/div[contains(@class, 'big')]/text()") == [str(len(BAD))]
    assert {"p"} <= set(rows["sasgrid01"]["r"])
    if not browser_available():
        return
    with open_page(page) as (browser_page, log):
        browser_page.locator("#matrix-rows a", has_text="truncated.json").click()
        section = browser_page.locator("section.host").first
        assert "results file unreadable" in section.text_content()
        assert "not valid JSON" in section.text_content()
        assert "Not scanned" in section.text_content()
        assert "Failed, high" not in section.text_content()
        # Counts that mean one thing (issue 38): the shown count is of rule articles, never
        # the matrix's header cells, which a filter leaves alone.
        browser_page.locator("#matrix-rows a", has_text="sasgrid01").click()
        headers = browser_page.locator("table.matrix th.rule:visible").count()
        browser_page.locator("input[data-filter=result][value=pass]").uncheck()
        shown = int(browser_page.locator("#shown-count").text_content())
        assert shown == browser_page.locator("article.rule:visible").count() > 0
        assert browser_page.locator("table.matrix th.rule:visible").count() == headers
        cards = browser_page.locator("section.host .card").all_text_contents()
        assert any(c.startswith("Not judged") and "notchecked / unknown" in c for c in cards)
        assert any(c.startswith("Not applicable") for c in cards)
    assert log.console_errors == []


def test_diff_takes_a_bad_file_as_one_line(tmp_path):
    fleet = _fleet(tmp_path)
    baseline = tmp_path / "baseline"
    baseline.mkdir()
    for name in ("sasgrid01", "sasgrid02"):
        (baseline / f"{name}.json").write_text((fleet / f"{name}.json").read_text())
    out = tmp_path / "diff.json"
    assert main(["diff", str(baseline), str(fleet), "--quiet", "--json", str(out)]) == 3
    changes = json.loads(out.read_text())["changes"]
    bad = [c for c in changes if c["host"] in {file for file, _ in BAD.values()}]
    assert len(bad) == len(BAD) and not any(c["worse"] for c in changes)


def test_one_file_alone_still_stops_with_its_reason(tmp_path, capsys):
    bad = tmp_path / "truncated.json"
    bad.write_text(BAD["truncated"][1])
    assert main(["report", str(bad), "-o", str(tmp_path / "page.html")]) == 1
    assert "not valid JSON" in capsys.readouterr().err
