"""Storage diagrams show each value whole (issue 24, item 6): boxes size to their text, and a
value too long for one line wraps rather than being cut ("ra 409…"). Measured in Chromium:
every text ends inside its own box."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sascheck.reports.storage_svg import render, render_all

from .support.browser import browser_available, open_page

needs_browser = pytest.mark.skipif(not browser_available(), reason="chromium/playwright missing")

WWID = "3600601604a1b2c3d4e5f6a7b8c9d0e1f"
FILESYSTEM = {
    "mountpoint": "/sas/projects/finance-quarterly-close-archive", "fstype": "xfs",
    "roles": ["DATA"],
    "layers": [
        {"device": "dm-2", "depth": 0, "kind": "dm", "dm_name":
         "sasvg_finance-lv_finance_quarterly_close_archive_2026", "scheduler": {},
         "read_ahead_kb": 16384, "io_min": 262144, "io_opt": 1048576},
        {"device": "dm-1", "depth": 1, "parent": "dm-2", "kind": "dm", "dm_name": WWID,
         "scheduler": {"selected": "mq-deadline"}, "read_ahead_kb": 16384},
        *({"device": f"sd{letter}", "depth": 2, "parent": "dm-1", "kind": "disk",
           "scheduler": {"selected": "mq-deadline"}, "read_ahead_kb": 16384}
          for letter in "bcde"),
    ],
}


def test_a_value_longer_than_a_line_wraps_whole():
    long = "/sas/" + "-".join(["quarterly_close"] * 6)  # 100 characters
    svg = render({**FILESYSTEM, "mountpoint": long}, {})
    lines = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert "".join(line for line in lines if line.startswith("/sas/") or
                   line.startswith("quarterly")) == long
    assert all(len(line) <= 64 for line in lines)


def test_no_value_is_cut():
    svg = render(FILESYSTEM, {"dm-2": "pass"})
    assert "\u2026" not in svg
    for value in ("sched mq-deadline, ra 16384 KiB", WWID, "finance-quarterly-close-archive"):
        assert value in svg


@needs_browser
def test_every_text_ends_inside_its_box(tmp_path: Path):
    page_file = tmp_path / "diagram.html"
    page_file.write_text("<!doctype html><html><body>" + render(FILESYSTEM, {}) +
                         "</body></html>", encoding="utf-8")
    with open_page(page_file) as (page, _):
        overflow = page.evaluate("""() => {
            const rects = [...document.querySelectorAll('svg.stack rect')];
            return [...document.querySelectorAll('svg.stack text')].map(text => {
                const x = +text.getAttribute('x'), y = +text.getAttribute('y');
                const box = rects.find(r => +r.getAttribute('x') <= x
                    && x <= +r.getAttribute('x') + +r.getAttribute('width')
                    && +r.getAttribute('y') <= y
                    && y <= +r.getAttribute('y') + +r.getAttribute('height'));
                const right = x + text.getComputedTextLength();
                return box && right <= +box.getAttribute('x') + +box.getAttribute('width')
                    ? null : text.textContent;
            }).filter(t => t !== null);
        }""")
    assert overflow == []


def test_a_tree_shared_by_file_systems_is_drawn_once():
    other = {**FILESYSTEM, "mountpoint": "/saswork", "layers": [
        {**FILESYSTEM["layers"][0], "device": "dm-3", "dm_name": "sasvg-saswork"},
        *FILESYSTEM["layers"][1:]]}
    first, second = render_all([FILESYSTEM, other], {})
    assert first.count(">sd") == 4  # the paths, under the first file system
    assert ">sd" not in second  # not again
    said = "".join(re.findall(r"<text[^>]*>([^<]*)</text>", second))
    assert "drawn under /sas/projects/finance-quarterly-close-archive" in said
    assert WWID in second  # the shared map itself is named
