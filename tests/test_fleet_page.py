"""The fleet page in Chromium: host rows drawn from its index, paged, searched, filtered and
sorted; each host's section built on demand; hostile host text inert in both."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from sascheck.cli import main
from tests.support.example_roots import EXAMPLE_VALUES, EXAMPLES

from .support.browser import browser_available, fleet_index, open_page, screenshot

needs_browser = pytest.mark.skipif(not browser_available(), reason="chromium/playwright missing")
PAGE_ROWS = 200  # report.js draws this many rows, then more on request


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> list[dict[str, Any]]:
    """A real scan of each example host."""
    base = tmp_path_factory.mktemp("fleet-samples")
    results = []
    for name, build in EXAMPLES.items():
        build(base / name)
        output = base / f"{name}.json"
        main(["scan", "--root", str(base / name), "--quiet", "--json", str(output),
              *[f"--set={value}" for value in EXAMPLE_VALUES[name]]])
        results.append(json.loads(output.read_text()))
    return results


def _fleet(tmp_path: Path, samples: list[dict[str, Any]], count: int,
           edit: Any = None) -> Path:
    """``count`` hosts named sas00000..., each a copy of a sample; ``edit`` may change each."""
    results = tmp_path / "results"
    results.mkdir()
    for index in range(count):
        data = copy.deepcopy(samples[index % len(samples)])
        data["host"]["hostname"] = f"sas{index:05d}"
        if edit:
            edit(data, index)
        (results / f"{index}.json").write_text(json.dumps(data))
    page = tmp_path / "fleet.html"
    assert main(["report", "--fleet", str(results), "-o", str(page)]) == 0
    return page


def _rows(page: Any) -> list[str]:
    return page.locator("#matrix-rows tr td:first-child a").all_text_contents()


@needs_browser
def test_rows_page_search_filter_and_sort(tmp_path, samples):
    page_path = _fleet(tmp_path, samples, PAGE_ROWS + 50)
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
                                                                            samples):
    def ranked(data: dict[str, Any], index: int) -> None:
        # Two hosts alike in failures, differing only in a pass turned notchecked: the one
        # with fewer judged passes has the lower score and must come first.
        if index == 1:
            next(r for r in data["rules"] if r["result"] == "pass")["result"] = "notchecked"

    page_path = _fleet(tmp_path, samples[:1] * 2, 2, ranked)
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


@needs_browser
def test_a_host_section_is_built_when_opened(tmp_path, samples):
    page_path = _fleet(tmp_path, samples, len(samples))
    index = fleet_index(page_path.read_text())
    assert "article" not in page_path.read_text().split('id="fleet-index"')[0]
    with open_page(page_path) as (page, log):
        assert page.locator("section.host").count() == 0  # nothing built before it is asked
        # no "(0 shown)" beside the filters while no host is open (issue 65)
        assert not page.locator("#shown-count").is_visible()
        page.locator("#matrix-rows a").nth(1).click()
        assert page.url.endswith("#h1")
        section = page.locator("section#h1")
        host = index["hosts"][1]
        assert section.locator("h2").inner_text().startswith(host["n"])
        judged = [code for code in host["r"] if code != "-"]
        assert section.locator("article.rule").count() == len(judged)
        sample = next(s for s in samples if s["host"]["os"] and section.locator(
            "dl.facts").inner_text().find(s["host"]["os"]) >= 0)
        assert section.locator("figure img").count() == len(sample["storage"])
        for image in section.locator("figure img").all():
            assert image.get_attribute("src").startswith("data:image/svg+xml;base64,")
            assert image.evaluate("img => img.naturalWidth") > 0  # the diagram decodes
        visible = section.locator("article.rule:visible").count()
        assert page.locator("#shown-count").inner_text() == str(visible)
        page.locator("input[data-filter=result][value=pass]").uncheck()
        assert section.locator("article.rule:visible").count() < visible
        # the first shown rule with something to copy (a manual rule's advice has none)
        button = section.locator("article.rule:visible button.copy").first
        button.locator("xpath=ancestor::details").evaluate("d => d.open = true")
        button.click()
        assert button.text_content() == "copied"
        page.locator("#matrix-rows a").first.click()  # another host replaces it
        assert page.locator("section.host").count() == 1 and page.locator("#h0").count() == 1
        screenshot(page, "fleet-host-on-demand.png")
    assert log.console_errors == [] and len(log.requests) == 1


HOSTILE = ['</script><script>window.__pwned=1</script>', '<img src=x onerror="window.__pwned=2">',
           "<!--", "]]><svg onload=window.__pwned=3>", "\u2028'\"&amp;"]


@needs_browser
def test_hostile_host_text_is_shown_not_run(tmp_path, samples):
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

    page_path = _fleet(tmp_path, samples, len(HOSTILE), hostile)
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
def test_a_rules_failing_hosts_and_the_fact_columns_on_1000_hosts(tmp_path, samples, capsys):
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
        data = copy.deepcopy(samples[index % len(samples)])
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
        tmp_path, samples):
    """Issue 48: every score beside the count of rules judged, the tuned column the active
    profile with the release beside it, and the rule table in the order a window fixes the
    rules (the fleet's fix order), with a toggle to rule ids."""
    from sascheck.rules import load_catalogue
    from sascheck.scanner.fix_order import catalogue_ranks

    page_path = _fleet(tmp_path, samples, len(samples))
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


@needs_browser
def test_a_host_section_shows_the_window_as_the_host_page_does(tmp_path, samples):
    """Issue 49: the fleet page's host section has the host page's step headings, each
    step's command, and each failing rule's measured figure and step, word for word."""
    from lxml import html as lxml_html

    page_path = _fleet(tmp_path, samples, len(samples))
    index = fleet_index(page_path.read_text())
    failing = max(range(len(samples)), key=lambda n: len(samples[n]["fix_order"]))
    sample = copy.deepcopy(samples[failing])
    sample["host"]["hostname"] = f"sas{failing:05d}"
    (tmp_path / "one.json").write_text(json.dumps(sample))
    assert main(["report", str(tmp_path / "one.json"), "-o", str(tmp_path / "host.html")]) == 0
    host_page = lxml_html.fromstring((tmp_path / "host.html").read_text())

    def texts(xpath: str) -> list[str]:
        return [" ".join(node.text_content().split()) for node in host_page.xpath(xpath)]

    place = next(n for n, host in enumerate(index["hosts"]) if host["n"] == f"sas{failing:05d}")
    with open_page(page_path) as (page, log):
        page.goto(page_path.as_uri() + f"#h{place}")
        section = page.locator(f"section#h{place}")
        # all_text_contents does not wait: the section is drawn from the page's data first
        section.locator("h3.fix-step").first.wait_for()
        headings = [" ".join(t.split()) for t in section.locator("h3.fix-step").all_text_contents()]
        assert headings == texts("//h3[@class='fix-step']") and len(headings) >= 3
        assert [" ".join(t.split()) for t in section.locator("pre.step-command").all_text_contents()] \
            == texts("//pre[@class='step-command']")
        measured = [" ".join(t.split()) for t in section.locator("p.impact").all_text_contents()]
        assert measured == texts("//p[@class='impact']") and measured
        steps = [" ".join(t.split()) for t in section.locator("article.rule p.muted").all_text_contents()
                 if t.startswith("Fix step:")]
        assert steps == [t for t in texts("//article//p[@class='muted']") if t.startswith("Fix step:")]
        assert steps
        # each rule's own reason for its step (issue 65), as the page's script draws it
        assert any("mended by the same action as read_ahead" in step for step in steps)
        assert any("[disk] readahead sets each disk's read-ahead" in step for step in steps)
        assert any("mended by the same action as barrier_requires_protected_cache" in step
                   for step in steps)
    assert not log.console_errors


# What a section shows, its diagrams aside (inline <svg> on the host page, <img> on the
# fleet page): every text, the closed <details> included, in document order.
SECTION_TEXT = """section => {
    const copy = section.cloneNode(true);
    copy.querySelectorAll('svg, img').forEach(picture => picture.remove());
    return copy.textContent.split(/\\s+/).join(' ').trim();
}"""


@needs_browser
def test_a_host_reads_the_same_on_the_host_page_and_the_fleet_page(tmp_path, samples):
    """Issue 47: one renderer (reports/section.py) for a host's section. The fleet page had
    drifted (no 'Measured:' line, other score notes); now each example host's section, as
    Chromium shows it on its own page and opened on the fleet page, is the same text, word
    for word, rationale, fix snippets and copy commands included."""
    page_path = _fleet(tmp_path, samples, len(samples))
    index = fleet_index(page_path.read_text())
    shown = []
    for number in range(len(samples)):
        one = tmp_path / f"host{number}.html"
        assert main(["report", str(tmp_path / "results" / f"{number}.json"), "-o", str(one)]) == 0
        with open_page(one) as (page, log):
            alone = page.locator("section.host").evaluate(SECTION_TEXT)
        assert not log.console_errors
        place = next(n for n, host in enumerate(index["hosts"])
                     if host["n"] == f"sas{number:05d}")
        with open_page(page_path) as (page, log):
            page.goto(page_path.as_uri() + f"#h{place}")
            in_fleet = page.locator(f"section#h{place}").evaluate(SECTION_TEXT)
        assert not log.console_errors
        assert in_fleet == alone
        assert "judged rules pass" in alone and "Why, sources and remediation" in alone
        shown.append(alone)
    # what had drifted is there: a failing rule's measured figure, a step and its command
    assert any("Measured:" in text and "Fix this step alone:" in text for text in shown)


@needs_browser
def test_a_large_fleet_decodes_only_the_chunks_a_host_needs(tmp_path, samples, monkeypatch):
    """Issue 52: the details are compressed chunks, read when a host is opened. With chunks
    made small, so that this fleet has many, the page still filters, searches and opens any
    host, word for word as the host page shows it, having decoded only that host's chunks."""
    from sascheck.reports import fleet

    monkeypatch.setattr(fleet, "CHUNK_BYTES", 4096)
    page_path = _fleet(tmp_path, samples, 60)
    source = page_path.read_text()
    chunks = {part: source.count(f'data-part="{part}"') for part in ("hosts", "results", "images")}
    assert chunks["hosts"] > 10 and chunks["results"] > 1, chunks
    index = fleet_index(source)
    # the last row with a failure (worst first: the farthest such into the chunks)
    last = max(n for n, host in enumerate(index["hosts"]) if set(host["r"]) & {"f", "e"})
    name = index["hosts"][last]["n"]
    number = int(name.removeprefix("sas"))
    one = tmp_path / "one.html"
    assert main(["report", str(tmp_path / "results" / f"{number}.json"), "-o", str(one)]) == 0
    with open_page(one) as (page, log):
        alone = page.locator("section.host").evaluate(SECTION_TEXT)
    with open_page(page_path) as (page, log):
        page.locator("#host-search").fill(name)
        assert _rows(page) == [name]
        page.locator("#only-failing").check()
        page.locator("#matrix-rows a").first.click()
        section = page.locator(f"section#h{last}")
        assert section.evaluate(SECTION_TEXT) == alone
        read = page.locator("script.fleet-chunk[data-read]").count()
        assert 1 <= read < sum(chunks.values()) // 2  # its own chunks, not the fleet's
        page.goto(page_path.as_uri() + "#h0")  # a host of another chunk
        assert page.locator("section#h0 h2").inner_text().startswith(index["hosts"][0]["n"])
    assert log.console_errors == []
