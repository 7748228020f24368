"""The fleet page in Chromium: each host's section built on demand, read as the host page
reads it, and only the chunks a host needs decoded."""

from __future__ import annotations

import copy
import json

from sascheck.cli import main

from .support.browser import fleet_index, open_page, screenshot
from .support.fleet_pages import drawn_rows as _rows
from .support.fleet_pages import fleet_page as _fleet
from .support.fleet_pages import needs_browser


@needs_browser
def test_a_host_section_is_built_when_opened(tmp_path, example_scan_results):
    page_path = _fleet(tmp_path, example_scan_results, len(example_scan_results))
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
        sample = next(s for s in example_scan_results if s["host"]["os"] and section.locator(
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


@needs_browser
def test_a_host_section_shows_the_window_as_the_host_page_does(tmp_path, example_scan_results):
    """Issue 49: the fleet page's host section has the host page's step headings, each
    step's command, and each failing rule's measured figure and step, word for word."""
    from lxml import html as lxml_html

    page_path = _fleet(tmp_path, example_scan_results, len(example_scan_results))
    index = fleet_index(page_path.read_text())
    failing = max(range(len(example_scan_results)), key=lambda n: len(example_scan_results[n]["fix_order"]))
    sample = copy.deepcopy(example_scan_results[failing])
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
def test_a_host_reads_the_same_on_the_host_page_and_the_fleet_page(tmp_path, example_scan_results):
    """Issue 47: one renderer (reports/section.py) for a host's section. The fleet page had
    drifted (no 'Measured:' line, other score notes); now each example host's section, as
    Chromium shows it on its own page and opened on the fleet page, is the same text, word
    for word, rationale, fix snippets and copy commands included."""
    page_path = _fleet(tmp_path, example_scan_results, len(example_scan_results))
    index = fleet_index(page_path.read_text())
    shown = []
    for number in range(len(example_scan_results)):
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
def test_a_large_fleet_decodes_only_the_chunks_a_host_needs(tmp_path, example_scan_results, monkeypatch):
    """Issue 52: the details are compressed chunks, read when a host is opened. With chunks
    made small, so that this fleet has many, the page still filters, searches and opens any
    host, word for word as the host page shows it, having decoded only that host's chunks."""
    from sascheck.reports import fleet

    monkeypatch.setattr(fleet, "CHUNK_BYTES", 4096)
    page_path = _fleet(tmp_path, example_scan_results, 60)
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
