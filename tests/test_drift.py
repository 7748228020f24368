"""Drift: `sascheck diff` between two scans (files or directories of them) and the fleet
report's --baseline, on results of real scans of built roots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml import html as lxml_html

from sascheck.cli import main

from .support.browser import browser_available, fleet_index, open_page
from .support.hosts import BASELINE_SETS, sas_host
from .support.oscap import oscap_available, oscap_eval, tailor
from .test_reports import _scan_json

HOSTILE_NAME = '<img src=x onerror="window.__pwned=1">\x1b]0;owned\x07'


def _results(tmp_path: Path, name: str, hostname: str = "sastest", sets: tuple[str, ...] = (),
             **changes: object) -> Path:
    """A scan of the baseline host (with ``changes``) as sascheck JSON."""
    root = sas_host(tmp_path / f"root-{name}", extra_files={"/etc/hostname": f"{hostname}\n"},
                    **changes)
    return _scan_json(root, [*BASELINE_SETS, *sets], tmp_path / f"{name}.json")


def _diff(old: Path, new: Path, out: Path, *extra: str) -> tuple[int, dict]:
    status = main(["diff", str(old), str(new), "--quiet", "--json", str(out), *extra])
    return status, json.loads(out.read_text())


def test_a_rule_that_got_worse_exits_2_and_is_listed_first(tmp_path):
    old = _results(tmp_path, "old")
    new = _results(tmp_path, "new", thp_enabled="[always] madvise never", read_ahead_kb=8192,
                   sets=("dirty_ratio=30",))
    status, report = _diff(old, new, tmp_path / "d.json")
    assert status == 2 and report["worse"] >= 2
    changes = report["changes"]
    first = changes[0]
    assert first["worse"] and first["host"] == "sastest" and first["field"] == "result"
    by_rule = {(c["rule"], c["field"]): c for c in changes}
    assert (by_rule[("thp_disabled", "result")]["old"],
            by_rule[("thp_disabled", "result")]["new"]) == ("pass", "fail")
    assert by_rule[("vm_dirty_ratio", "result")]["worse"]  # 40 is not the site's 30
    # A site value that changed is a change of the host's, not a worse verdict.
    value = by_rule[("", "value dirty_ratio")]
    assert (value["old"], value["new"], value["worse"]) == ("40", "30", False)
    # Actual values that moved without changing the verdict are shown too.
    assert "8192" in by_rule[("read_ahead", "actual")]["new"]
    assert not by_rule[("read_ahead", "actual")]["worse"]


def test_only_improvements_exit_0_and_unchanged_scans_say_nothing(tmp_path):
    bad = _results(tmp_path, "bad", thp_enabled="[always] madvise never")
    good = _results(tmp_path, "good")
    status, report = _diff(bad, good, tmp_path / "d.json")
    assert status == 0 and report["worse"] == 0
    [thp] = [c for c in report["changes"] if (c["rule"], c["field"]) == ("thp_disabled", "result")]
    assert (thp["old"], thp["new"], thp["worse"]) == ("fail", "pass", False)
    status, report = _diff(good, _results(tmp_path, "again"), tmp_path / "same.json")
    assert status == 0 and [c for c in report["changes"] if c["field"] != "actual"] == []


def test_directories_match_hosts_by_name_and_take_the_newest_scan(tmp_path):
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir()
    after.mkdir()
    _results(tmp_path, "a1", "sasgrid01").rename(before / "a.json")
    _results(tmp_path, "b1", "sasgrid02").rename(before / "b.json")
    stale = _results(tmp_path, "a-stale", "sasgrid01", thp_enabled="[always] madvise never")
    data = json.loads(stale.read_text())
    data["scanned_at"] = "2000-01-01T00:00:00+00:00"  # an old scan of the same host
    (after / "a-old.json").write_text(json.dumps(data))
    _results(tmp_path, "a2", "sasgrid01").rename(after / "a-new.json")
    _results(tmp_path, "c2", "sasgrid03").rename(after / "c.json")
    (after / "notes.txt").write_text("not a result")
    status, report = _diff(before, after, tmp_path / "d.json")
    assert status == 0  # the newest scan of sasgrid01 passes as before
    presence = {(c["host"], c["old"], c["new"]) for c in report["changes"] if c["field"] == "host"}
    assert presence == {("sasgrid02", "scanned", "(missing)"), ("sasgrid03", "(missing)", "scanned")}


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
def test_oscap_arf_against_sascheck_json_compares_verdicts_only(tmp_path):
    root = sas_host(tmp_path / "root")
    tailoring = tailor(root, list(BASELINE_SETS), tmp_path / "t.xml")
    oscap_eval(root, tailoring, tmp_path, as_users_run_it=True)
    broken = _results(tmp_path, "new", thp_enabled="[always] madvise never")
    status, report = _diff(tmp_path / "results-arf.xml", broken, tmp_path / "d.json")
    assert status == 2
    fields = {(c["rule"], c["field"]) for c in report["changes"]}
    assert ("thp_disabled", "result") in fields
    assert not [f for f in fields if f[1].startswith("value ")]  # ARF has no site values


def test_hostile_host_names_stay_text_in_the_table_and_the_page(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # one line per change: the escaped name in one piece
    old = _results(tmp_path, "old", HOSTILE_NAME.replace("\x1b]0;owned\x07", ""))
    data = json.loads(old.read_text())
    data["host"]["hostname"] = HOSTILE_NAME
    old.write_text(json.dumps(data))
    new = tmp_path / "new.json"
    data["rules"] = [dict(r, result="fail") if r["id"] == "read_ahead" else r
                     for r in data["rules"]]
    new.write_text(json.dumps(data))
    page = tmp_path / "d.html"
    assert main(["diff", str(old), str(new), "--html", str(page)]) == 2
    terminal = capsys.readouterr()
    assert "\x1b]0;owned" not in terminal.out + terminal.err
    assert "\\x1b]0;owned" in terminal.out + terminal.err
    tree = lxml_html.fromstring(page.read_text())
    assert tree.xpath("//img") == [] and len(tree.xpath("//tr[@class='worse']")) == 1
    if browser_available():
        with open_page(page) as (opened, log):
            assert opened.evaluate("typeof window.__pwned") == "undefined"
            assert "<img src=x" in opened.locator("table.drift").inner_text()
        assert [url for url in log.requests if not url.startswith("file://")] == []


def test_fleet_report_marks_what_regressed_since_the_baseline(tmp_path):
    baseline = tmp_path / "baseline"
    baseline.mkdir()
    _results(tmp_path, "a1", "sasgrid01").rename(baseline / "a.json")
    _results(tmp_path, "b1", "sasgrid02").rename(baseline / "b.json")
    now_a = _results(tmp_path, "a2", "sasgrid01", thp_enabled="[always] madvise never")
    now_b = _results(tmp_path, "b2", "sasgrid02")
    page = tmp_path / "fleet.html"
    assert main(["report", str(now_a), str(now_b), "-o", str(page),
                 "--baseline", str(baseline)]) == 0
    text = page.read_text()
    index = fleet_index(text)
    marked = [(host["n"], index["rules"][column]["id"])
              for host in index["hosts"] for column in host["w"]]
    assert marked == [("sasgrid01", "thp_disabled")]
    tree = lxml_html.fromstring(text)
    cards = tree.xpath("//div[@class='card'][div[contains(., 'worse than the baseline')]]"
                       "/div[contains(@class, 'big')]/text()")
    assert cards == ["1"]
    if not browser_available():
        return
    with open_page(page) as (browser_page, log):  # the marks as the page's script draws them
        cells = browser_page.locator("table.matrix td.regressed")
        assert cells.count() == 1
        assert cells.first.get_attribute("title") == "thp_disabled: fail (worse than the baseline)"
        browser_page.locator("#only-regressed").check()
        assert browser_page.locator("#matrix-rows tr").count() == 1
    assert log.console_errors == []


def test_one_hosts_report_with_a_baseline_marks_what_got_worse(tmp_path):
    """One results file and a baseline: the page that marks what got worse, not a host page
    that would drop the baseline unsaid."""
    baseline = _results(tmp_path, "a1", "sasgrid01")
    now = _results(tmp_path, "a2", "sasgrid01", thp_enabled="[always] madvise never")
    page = tmp_path / "one.html"
    assert main(["report", str(now), "-o", str(page), "--baseline", str(baseline)]) == 0
    index = fleet_index(page.read_text())
    assert [(host["n"], [index["rules"][c]["id"] for c in host["w"]])
            for host in index["hosts"]] == [("sasgrid01", ["thp_disabled"])]


def test_a_long_value_shows_where_it_changed():
    """Issue 24, item 10: the changed part of a long value is shown and marked, not lost
    behind a cut at its start."""
    from sascheck.reports.drift import SHOWN_CHARACTERS, _shown_pair, marked

    head = "; ".join(f"/sas{n} (DATA) on dm-{n}: 4096 KiB" for n in range(12))
    old, new = _shown_pair(head + "; /sasutil: 4096 KiB", head + "; /sasutil: 128 KiB")
    assert len(head) > SHOWN_CHARACTERS
    assert old.endswith("/sasutil: 4096 KiB") and new.endswith("/sasutil: 128 KiB")
    assert old.startswith("\u2026") and len(old) <= SHOWN_CHARACTERS + 2
    assert marked(old, new)[1:3] == ("4096", "128")


def test_the_drift_page_marks_the_changed_part(tmp_path):
    old = _results(tmp_path, "old")
    new = _results(tmp_path, "new", read_ahead_kb=8192)
    page = tmp_path / "drift.html"
    main(["diff", str(old), str(new), "--quiet", "--html", str(page)])
    tree = lxml_html.fromstring(page.read_text(encoding="utf-8"))
    row = next(tr for tr in tree.iter("tr")
               if any(td.text_content() == "read_ahead" for td in tr.iter("td")))
    was, now = row.findall("td")[-2:]
    assert [m.text for m in was.iter("mark")] and [m.text for m in now.iter("mark")]
    assert all("8192" in m.text for m in now.iter("mark"))
    assert was.text_content().replace("4096", "8192") == now.text_content()


def test_an_unreachable_host_is_one_line_not_a_regression(tmp_path):
    """Issue 36: a host whose collection failed (the fleet scan's failure record) is
    "unreachable since T" in diff (and no change while it stays so), not each rule worse; diff exits 0
    for it, and the fleet page's baseline view marks nothing, agreeing with diff."""
    from sascheck.reports.failure import failure_record

    baseline, first, later = (tmp_path / name for name in ("baseline", "first", "later"))
    for directory in (baseline, first, later):
        directory.mkdir()
    _results(tmp_path, "a0", "sasgrid01").rename(baseline / "sasgrid01.json")
    _results(tmp_path, "b0", "sasgrid02").rename(baseline / "sasgrid02.json")
    for directory, when in ((first, "2026-11-20T02:00:00+00:00"),
                            (later, "2026-11-21T02:00:00+00:00")):
        _results(tmp_path, f"a-{directory.name}", "sasgrid01").rename(
            directory / "sasgrid01.json")
        record = failure_record("sasgrid02", "collect", "ssh: connect to host sasgrid02 port "
                                "22: No route to host", "ansible")
        record["recorded_at"] = when
        (directory / "sasgrid02.failed.json").write_text(json.dumps(record))
    status, report = _diff(baseline, first, tmp_path / "first.json")
    lines = [c for c in report["changes"] if c["host"] == "sasgrid02"]
    assert status == 0 and report["worse"] == 0
    assert [(c["field"], c["old"], c["new"][:43]) for c in lines] == [
        ("host", "scanned", "unreachable since 2026-11-20T02:00:00+00:00")]
    status, report = _diff(first, later, tmp_path / "later.json")
    lines = [c for c in report["changes"] if c["host"] == "sasgrid02"]
    assert status == 0 and lines == []  # issue 48: still unreachable is no change
    page = tmp_path / "fleet.html"
    main(["report", str(later / "sasgrid01.json"), str(later / "sasgrid02.failed.json"),
          "-o", str(page), "--baseline", str(baseline)])
    assert [host["w"] for host in fleet_index(page.read_text())["hosts"]] == [[], []]


def test_a_failure_reason_of_several_lines_stays_lines_in_the_terminal(tmp_path, capsys):
    """Issue 48: diff showed a line break of ssh's message as \\x0a; the lines stay lines,
    and a control character in them is still made visible."""
    from sascheck.reports.failure import failure_record

    baseline, later = tmp_path / "baseline", tmp_path / "later"
    baseline.mkdir()
    later.mkdir()
    _results(tmp_path, "a0", "sasgrid01").rename(baseline / "sasgrid01.json")
    record = failure_record("sasgrid01", "collect", "ssh: connect to host sasgrid01\n"
                            "port 22: No route to host \x1b[31m", "ansible")
    (later / "sasgrid01.failed.json").write_text(json.dumps(record))
    capsys.readouterr()
    assert main(["diff", str(baseline), str(later)]) == 0
    out = capsys.readouterr().out
    assert "\\x0a" not in out and "\x1b" not in out
    assert "port 22: No route to host \\x1b[31m" in out


def test_values_are_marked_as_words_not_shared_digits():
    """Issue 65: 150000 -> 20480 shares a trailing 0 and a leading digit with nothing worth
    marking; the number is marked whole, and a change inside a longer value is its word."""
    from sascheck.reports.drift import marked

    assert marked("150000", "20480") == ("", "150000", "20480", "")
    assert marked("PAM sessions of sas: 150000", "PAM sessions of sas: 20480") == (
        "PAM sessions of sas: ", "150000", "20480", "")
    assert marked("/sasdata on dm-2: 4096 KiB", "/sasdata on dm-2: 4000 KiB")[1:3] == (
        "4096", "4000")


def test_a_change_of_profile_is_flagged_and_its_rules_are_a_change_of_scope(tmp_path, capsys):
    """Issue 65: a Viya host scanned under viya3, then (by a fleet scan without its
    sascheck_profile) under default: the profile change is flagged (exit 2) and the viya3
    rules are 'not in profile default', never '(not scanned)'; the drift page shows the same
    words."""
    root = sas_host(tmp_path / "root")
    old, new = tmp_path / "viya3.json", tmp_path / "default.json"
    for profile, out in (("viya3", old), ("default", new)):
        main(["scan", "--root", str(root), "--profile", profile, "--quiet", "--json", str(out),
              *(f"--set={assignment}" for assignment in BASELINE_SETS)])
    status, report = _diff(old, new, tmp_path / "d.json", "--html", str(tmp_path / "d.html"))
    assert status == 2
    changes = report["changes"]
    profile = next(c for c in changes if c["field"] == "profile")
    assert (profile["old"], profile["new"], profile["worse"]) == ("viya3", "default", True)
    scope = {c["rule"]: c for c in changes if c["field"] == "scope"}
    assert {"vm_max_map_count", "sas_accounts_stack", "selinux_viya_deployment"} <= set(scope)
    assert all(c["new"] == "(not in profile default)" for c in scope.values())
    assert not [c for c in changes if "(not scanned)" in (c["old"], c["new"])]
    page = (tmp_path / "d.html").read_text(encoding="utf-8")
    assert "(not in profile default)" in page and "(not scanned)" not in page
    # the same host scanned twice under one profile: no profile change, nothing flagged
    status, report = _diff(new, new, tmp_path / "same.json")
    assert status == 0 and not report["changes"]
    capsys.readouterr()
