"""The fleet page's test fleets: a real scan of each example host, copied to as many hosts as
a test needs and rendered with sascheck report --fleet."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from sascheck.cli import main

from .browser import browser_available
from .example_roots import EXAMPLE_VALUES, EXAMPLES

needs_browser = pytest.mark.skipif(not browser_available(), reason="chromium/playwright missing")
PAGE_ROWS = 200  # report.js draws this many rows, then more on request


def example_scans(base: Path) -> list[dict[str, Any]]:
    """A real scan of each example host."""
    results = []
    for name, build in EXAMPLES.items():
        build(base / name)
        output = base / f"{name}.json"
        main(["scan", "--root", str(base / name), "--quiet", "--json", str(output),
              *[f"--set={value}" for value in EXAMPLE_VALUES[name]]])
        results.append(json.loads(output.read_text()))
    return results


def fleet_page(tmp_path: Path, samples: list[dict[str, Any]], count: int,
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


def drawn_rows(page: Any) -> list[str]:
    return page.locator("#matrix-rows tr td:first-child a").all_text_contents()
