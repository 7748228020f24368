"""The fleet page in Chromium: host rows drawn from its index, paged, searched, filtered and
sorted; hostile host text inert (the host sections: test_fleet_page_sections)."""

from __future__ import annotations

import copy
import json
from typing import Any

from sascheck.cli import main

from .support.browser import fleet_index, open_page, screenshot
from .support.fleet_pages import PAGE_ROWS, needs_browser
from .support.fleet_pages import drawn_rows as _rows
from .support.fleet_pages import fleet_page as _fleet


@needs_browser
def test_rows_page_search_filter_and_sort(tmp_path, example_scan_results):
    page_path = _fleet(tmp_path, example_scan_results, PAGE_ROWS + 50)
    index = fleet_index(page_path.read_text())
    with open_page(page_path) as (page, log):
        assert len(_rows(page)) == PAGE_ROWS
        # "N shown of M matching" counts the rows drawn, then the rows that match
        assert page.locator("#hosts-shown").text_content() == str(PAGE_ROWS)
        assert page.locator("#hosts-matching").text_content() == str(PAGE_ROWS + 50)
        assert _rows(page)[0] == index["hosts"][0]["n"]  # worst first, as the index is
        page.locator("#more-hosts").click()
        assert len(_rows(page)) == PAGE_ROWS + 50 and page.locator("#more-hosts").is_hidden()
        assert page.locator("#hosts-shown").text_content() == str(PAGE_ROWS + 50)

        page.fill("#host-search", "SAS0012")  # any case, any part of the name
        assert sorted(_rows(page)) == [f"sas0012{digit}" for digit in range(10)]
        page.fill("#host-search", "")

        page.locator("#only-failing").check()
        failing = [host["n"] for host in index["hosts"] if set(host["r"]) & {"f", "e"}]
        assert page.locator("#hosts-matching").text_content() == str(len(failing))
        assert page.locator("#hosts-shown").text_content() == str(min(PAGE_ROWS, len(failing)))
        assert 0 < len(failing) < PAGE_ROWS + 50
        assert set(_rows(page)) <= set(failing)
        page.locator("#only-failing").uncheck()

        page.select_option("#host-sort", "name")
        assert _rows(page) == sorted(host["n"] for host in index["hosts"])[:PAGE_ROWS]
        page.select_option("#host-sort", "score-asc")
        scores = [int(text.split("%")[0]) for text in page.locator(  # "92% of 12"
            "#matrix-rows tr td:nth-child(2)").all_text_contents() if text != "-"]
        assert scores == sorted(scores) and scores[0] < scores[-1]
    assert log.console_errors == []


@needs_browser
def test_matrix_names_its_columns_explains_its_symbols_and_ranks_worst_first(tmp_path,
                                                                            example_scan_results):
    def ranked(data: dict[str, Any], index: int) -> None:
        # Two hosts alike in failures, differing only in a pass turned notchecked: the one
        # with fewer judged passes has the lower score and must come first.
        if index == 1:
            next(r for r in data["rules"] if r["result"] == "pass")["result"] = "notchecked"

    page_path = _fleet(tmp_path, example_scan_results[:1] * 2, 2, ranked)
    index = fleet_index(page_path.read_text())
    assert [host["n"] for host in index["hosts"]] == ["sas00001", "sas00000"]
    assert index["hosts"][0]["sc"] < index["hosts"][1]["sc"]
    with open_page(page_path) as (page, log):
        headers = page.locator("table.matrix th.rule").all_text_contents()
        assert headers == sorted(rule["id"] for rule in index["rules"])  # the ids, in order
        legend = page.locator("#matrix-legend")
        assert "\u2718 fail" in legend.inner_text() and "Worst first" in legend.inner_text()
        assert legend.evaluate("p => p.compareDocumentPosition(document.querySelector("
                               "'table.matrix')) & Node.DOCUMENT_POSITION_FOLLOWING") > 0
        assert page.locator("table.matrix thead th").first.evaluate(
            "th => getComputedStyle(th).position") == "sticky"
    assert log.console_errors == []


HOSTILE = ['</script><script>window.__pwned=1</script>', '<img src=x onerror="window.__pwned=2">',
           "<!--", "]]><svg onload=window.__pwned=3>", "\u2028'\"&amp;"]


@needs_browser
def test_hostile_host_text_is_shown_not_run(tmp_path, example_scan_results):
    def hostile(data: dict[str, Any], index: int) -> None:
        text = HOSTILE[index % len(HOSTILE)]
        data["host"]["hostname"] = f"{text} {index}"
        data["host"]["os"] = text
        data["sas_dirs"] = [{"role": "DATA", "path": text, "source": text}]
        for rule in data["rules"]:
            rule["message"] = text
            for item in rule["evidence"]:
                item["actual"], item["note"], item["source"] = text, text, text
        for filesystem in data["storage"]:
            filesystem["mountpoint"] = text

    page_path = _fleet(tmp_path, example_scan_results, len(HOSTILE), hostile)
    source = page_path.read_text()
    assert "<script>window.__pwned" not in source and "<img src=x" not in source
    # the index's, the rule texts', each details chunk's and the page script's own
    assert source.count("</script>") == 3 + source.count('class="fleet-chunk"')
    with open_page(page_path) as (page, log):
        names = _rows(page)
        assert sorted(names) == sorted(f"{text} {i}" for i, text in enumerate(HOSTILE))
        for position in range(len(HOSTILE)):
            page.locator("#matrix-rows a").nth(position).click()
            section = page.locator(f"section#h{position}")
            text = section.inner_text()
            assert names[position] in text
            assert section.locator("script, img:not(figure img), svg").count() == 0
        page.fill("#host-search", "<img")
        assert _rows(page) == [n for n in names if "<img" in n]
        assert page.evaluate("typeof window.__pwned") == "undefined"
    assert log.dialogs == [] and log.console_errors == []
    assert [url for url in log.requests if not url.startswith("file://")] == []


@needs_browser
def test_a_rules_failing_hosts_and_the_fact_columns_on_1000_hosts(tmp_path, example_scan_results, capsys):
    """Issue 38: on a fleet of 1,000 scanned hosts and one the fleet scan could not reach,
    each rule's failing hosts are one click away (the matrix filtered, their count, their
    names as `report --failing` prints them); the matrix sorts by OS, kernel, tuned version,
    role and inventory group; the host not scanned counts in no rule's column."""
    results = tmp_path / "results"
    results.mkdir()
    (results / ".sascheck-fleet").write_text("")  # the fleet playbook's: names by inventory
    kernels = ["4.18.0-513.5.1.el8_9.x86_64", "5.14.0-427.13.1.el9_4.x86_64",
               "3.10.0-1160.el7.x86_64"]
    groups = {}
    for index in range(1000):
        data = copy.deepcopy(example_scan_results[index % len(example_scan_results)])
        name = f"sas{index:05d}"
        data["host"].update(hostname=name, kernel=kernels[index % 3],
                            tuned_version=f"2.{20 + index % 7}.0")
        (results / f"{name}.json").write_text(json.dumps(data))
        groups[name] = ["sas_grid", f"site{index % 4}"]
    (results / "sasgone.failed.json").write_text(json.dumps({
        "schema": "sascheck-failure/1", "stage": "collect",
        "host": {"hostname": "sasgone", "inventory_name": "sasgone"}, "source": "",
        "profile": "default", "reason": "UNREACHABLE: ssh timed out",
        "recorded_at": "2026-11-26T07:00:00+00:00"}))
    # The groups file is as untrusted as the results: a group's name is shown, never run.
    groups["sas00999"] = ['zz<img src=x onerror="window.__pwned=1">']
    (results / ".sascheck-groups").write_text(json.dumps(groups))
    page_path = tmp_path / "fleet.html"
    assert main(["report", "--fleet", str(results), "-o", str(page_path)]) == 0
    index = fleet_index(page_path.read_text())
    column = {rule["id"]: c for c, rule in enumerate(index["rules"])}
    failing = {rule: sorted(h["n"] for h in index["hosts"] if h["r"][c] == "f")
               for rule, c in column.items()}
    rule = next(r for r, names in sorted(failing.items()) if 0 < len(names) < 1000)
    assert main(["report", "--failing", rule, str(results)]) == 0
    assert capsys.readouterr().out.split() == failing[rule]
    with open_page(page_path) as (page, log):
        counts = page.locator("table.counts tr").nth(1 + column[rule])
        cells = counts.locator("td").all_text_contents()
        assert sum(int(cell) for cell in cells[2:6]) == 1000  # sasgone counts nowhere
        counts.locator("button.rule-hosts").click()
        assert page.locator("#rule-view-title").text_content() == (
            f"{len(failing[rule])} hosts fail {rule}")
        assert page.locator("#hosts-matching").text_content() == str(len(failing[rule]))
        assert page.locator("#rule-view-names").text_content().split("\n") == failing[rule]
        assert set(_rows(page)) <= set(failing[rule]) and "sasgone" not in _rows(page)
        page.locator("#rule-view-clear").click()
        assert page.locator("#rule-view").is_hidden()
        assert page.locator("#hosts-matching").text_content() == "1001"
        page.locator("th.fact button[data-sort=k]").click()
        shown = page.locator("#matrix-rows tr td:nth-child(4)").all_text_contents()
        assert shown[0] == kernels[2] and shown[-1] == kernels[2]  # 3.10 first (200 rows)
        page.select_option("#host-sort", "g")
        # Host, Score, OS, kernel, tuned, role, profile, group
        assert page.locator("#matrix-rows tr td:nth-child(8)").first.text_content() == (
            "sas_grid, site0")
        page.fill("#host-search", "sas00999")
        assert page.locator("#matrix-rows tr td:nth-child(8)").first.text_content() == (
            'zz<img src=x onerror="window.__pwned=1">')
        assert page.evaluate("typeof window.__pwned") == "undefined"
        page.fill("#host-search", "")
        screenshot(page, "fleet-rule-view.png")
    assert log.console_errors == []


@needs_browser
def test_what_an_admin_reads_scores_with_what_they_are_of_tuned_and_the_fix_order(
        tmp_path, example_scan_results):
    """Issue 48: every score beside the count of rules judged, the tuned column the active
    profile with the release beside it, and the rule table in the order a window fixes the
    rules (the fleet's fix order), with a toggle to rule ids."""
    from sascheck.rules import load_catalogue
    from sascheck.scanner.fix_order import catalogue_ranks

    page_path = _fleet(tmp_path, example_scan_results, len(example_scan_results))
    index = fleet_index(page_path.read_text())
    with open_page(page_path) as (page, log):
        rows = page.locator("#matrix-rows tr")
        for number in range(rows.count()):
            name = rows.nth(number).locator("td").first.locator("a").text_content()
            host = next(h for h in index["hosts"] if h["n"] == name)
            score = rows.nth(number).locator("td").nth(1)
            if host["sc"] is not None:
                assert score.text_content() == f"{host['sc']}% of {host['j']}"
                assert score.get_attribute("title").startswith(f"of {host['j']} judged rules")
        tuned = page.locator("#matrix-rows tr td.fact").all_text_contents()
        assert any(text.startswith("sas-performance") for text in tuned), tuned
        ids = [rule["id"] for rule in index["rules"]]
        ranks = catalogue_ranks(load_catalogue(), ids)
        shown = page.locator("#rule-counts tr").evaluate_all(
            "rows => rows.map(r => r.dataset.ruleId)")
        assert shown == sorted(ids, key=lambda r: (ranks.get(r, 1 << 30), r)) != sorted(ids)
        page.select_option("#rule-order", "id")
        shown = page.locator("#rule-counts tr").evaluate_all(
            "rows => rows.map(r => r.dataset.ruleId)")
        assert shown == sorted(ids)
        page.locator("#matrix-rows a").first.click()
        assert "judged rules pass" in page.locator("section#h0 .summary").first.text_content()
        assert not log.console_errors
