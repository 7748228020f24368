"""Headless Chromium (Debian's) driven by Playwright, offline: the way a person opens a report."""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-quic"]


def browser_available() -> bool:
    try:
        import playwright  # noqa: F401
    except ImportError:
        return False
    return Path(CHROMIUM).exists()


@dataclass
class PageLog:
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@contextmanager
def open_page(path: Path) -> Iterator[tuple[Any, PageLog]]:
    from playwright.sync_api import sync_playwright

    log = PageLog()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1600})
            page.on("console", lambda m: log.console_errors.append(m.text)
                    if m.type == "error" else None)
            page.on("pageerror", lambda e: log.console_errors.append(str(e)))
            page.on("request", lambda r: log.requests.append(r.url))

            def dialog(d: Any) -> None:
                log.dialogs.append(d.message)
                d.dismiss()

            page.on("dialog", dialog)
            page.goto(path.resolve().as_uri())
            page.wait_for_load_state("load")
            yield page, log
        finally:
            browser.close()


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    target = ARTIFACTS / name
    page.screenshot(path=str(target), full_page=False)
    return target


def fleet_index(page_text: str) -> dict[str, Any]:
    """The fleet page's host index (its JSON block), as the page's script reads it."""
    found = re.search(r'<script type="application/json" id="fleet-index">(.*?)</script>',
                      page_text, re.S)
    assert found, "no fleet index in the page"
    return json.loads(found.group(1))  # type: ignore[no-any-return]



CHUNK = re.compile(r'<script type="application/octet-stream" class="fleet-chunk" '
                   r'data-part="(\w+)" data-first="(\d+)" data-count="(\d+)">([^<]*)</script>')


def _chunk_items(text: str) -> list[Any]:
    return json.loads(gzip.decompress(base64.b64decode(text)))  # type: ignore[no-any-return]


def fleet_details(page_text: str) -> dict[str, Any]:
    """The fleet page's details as its script reads them: the rule texts, and each part's
    chunks (gzip, base64) decoded and joined in order."""
    rules = re.search(r'<script type="application/json" id="fleet-rules">(.*?)</script>',
                      page_text, re.S)
    assert rules, "no rule texts in the page"
    details: dict[str, Any] = {"rules": json.loads(rules.group(1)), "hosts": [], "results": [],
                               "images": []}
    for part, first, count, text in CHUNK.findall(page_text):
        items = _chunk_items(text)
        assert len(items) == int(count) and len(details[part]) == int(first)
        details[part] += items
    return details


def fleet_text(page_text: str) -> str:
    """The page with its compressed details decoded in place (as JSON text): what a search
    of the page for a host's words reads."""
    return CHUNK.sub(lambda found: json.dumps(_chunk_items(found.group(4)),
                                              ensure_ascii=False), page_text)
