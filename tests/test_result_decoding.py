"""Results files as the reports decode them: a JSON escape can make a lone surrogate (a
string no UTF-8 output can hold), which decoding turns into visible text once; the check
for it runs only where the raw text has such an escape (issue 52: it was a second
encoding of every host's whole result)."""

from __future__ import annotations

import json

import pytest

from sascheck.reports.loading import load
from sascheck.reports.resultfile import decode_json


@pytest.mark.parametrize(("escaped", "decoded"), [
    ("x\\ud800y", "x\\ud800y"),  # lone high surrogate: shown as its escape
    ("\\uDFFF", "\\udfff"),  # lone low surrogate, upper-case escape
    ("\\ud83d\\ude00", "\U0001F600"),  # a pair is one character
    ("\\\\ud800", "\\ud800"),  # an escaped backslash: text, not an escape
    ("plain", "plain"),
])
def test_lone_surrogates_become_visible_text(escaped, decoded):
    data = decode_json(f'{{"a": ["{escaped}"], "{escaped}": 1}}'.encode(), "r.json")
    assert data == {"a": [decoded], decoded: 1}
    json.dumps(data, ensure_ascii=False).encode("utf-8")  # any output can hold it


def test_a_result_with_a_lone_surrogate_loads_and_renders(tmp_path, host, scan, catalogue):
    from sascheck.cli import main

    result = scan(host())
    del result["by_id"]
    result["rules"][0]["actual"] = "ACTUAL"
    raw = json.dumps(result).replace('"ACTUAL"', '"bad \\udc80 byte"')
    path = tmp_path / "host.json"
    path.write_text(raw)
    view = load(str(path), catalogue)
    assert any(rule.actual == "bad \\udc80 byte" for rule in view.rules)
    page = tmp_path / "host.html"
    assert main(["report", str(path), "-o", str(page)]) == 0
    assert "bad \\udc80 byte" in page.read_text(encoding="utf-8")
