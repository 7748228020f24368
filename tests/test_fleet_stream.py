"""The fleet page read on every core, holding a few bytes per host (issue 39): the same page
as one process reading every host at once, whatever merges, claims and bad files the fleet
holds (reports/fleet_read.py against model.merge_measured, merge_engines and
flag_claimed_names with html.render_fleet)."""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

from sascheck.cli import main
from sascheck.cli_reports import _load_results
from sascheck.remediations.generate import rule_snippets
from sascheck.reports import fleet_workers
from sascheck.reports.html import render_fleet

from .support.browser import fleet_details, fleet_index
from .support.example_roots import EXAMPLE_VALUES, EXAMPLES
from .test_fleet_bad_files import BAD
from .test_reports import _scan_json

ARF = """<?xml version="1.0" encoding="UTF-8"?>
<arf:asset-report-collection xmlns:arf="http://scap.nist.gov/schema/asset-reporting-format/1.1">
 <arf:reports><arf:report id="xccdf1"><arf:content>
  <TestResult xmlns="http://checklists.nist.gov/xccdf/1.2" id="xccdf_org.open-scap_testresult_x"
      start-time="2026-11-21T10:00:00">
   <profile idref="xccdf_org.sascheck.content_profile_default_tailored"/>
   <target>{host}</target>
{results}
  </TestResult></arf:content></arf:report></arf:reports>
</arf:asset-report-collection>
"""
HOSTS = 90  # past fleet_workers.PARALLEL_FROM: read by a pool of workers


def _rows_and_sections(page: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each row of the matrix with its section, pooled numbers resolved."""
    index, details = fleet_index(page), fleet_details(page)
    shown = []
    for position, row in enumerate(index["hosts"]):
        section = dict(details["hosts"][row.pop("d", position)])
        pooled = details["results"]
        section["head"] = [pooled[n] if isinstance(n, int) else n for n in section["head"]]
        section["items"] = [[item[0], *(pooled[n] for n in item[1:])]
                            for item in section["items"]]
        section["images"] = [details["images"][n] for n in section["images"]]
        shown.append((row, section))
    return shown


def _text(tree: Any) -> str:
    """What a section's nodes (reports/section.py) show, as one string."""
    if isinstance(tree, str):
        return tree
    children = tree[2:] if tree and isinstance(tree[0], str) else tree
    return "".join(_text(child) for child in children)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("fleet")
    samples = []
    for name in ("rhel8-tuned-sas", "rhel6-defaults"):
        EXAMPLES[name](base / name)
        samples.append(json.loads(_scan_json(base / name, EXAMPLE_VALUES[name],
                                             base / f"{name}.json").read_text()))
    results = base / "results"
    results.mkdir()
    (results / ".sascheck-fleet").write_text("")  # the fleet playbook's: files by inventory name
    for index in range(HOSTS):
        data = json.loads(json.dumps(samples[index % 2]))
        data["host"]["hostname"] = f"sas{index:03d}"
        (results / f"sas{index:03d}.json").write_text(json.dumps(data))
    # Inventory host zz-clone calling itself sas003 (both kept, both flagged) and oscap's
    # ARF of sas001 (one host, both engines).
    clone = json.loads((results / "sas002.json").read_text())
    clone["host"]["hostname"] = "sas003"
    (results / "zz-clone.json").write_text(json.dumps(clone))
    rows = "\n".join(f'   <rule-result idref="xccdf_org.sascheck.content_rule_{r["id"]}">'
                     f'<result>{r["result"]}</result></rule-result>' for r in samples[1]["rules"])
    (results / "sas001.arf.xml").write_text(ARF.format(host="sas001", results=rows))
    for file, text in BAD.values():
        (results / file).write_text(text)
    return results


def test_the_page_read_on_every_core_is_the_page_read_at_once(fleet, tmp_path, capsys,
                                                              monkeypatch, catalogue):
    streamed = tmp_path / "streamed.html"
    assert main(["report", "--fleet", str(fleet), "-o", str(streamed)]) == 3
    monkeypatch.setattr(fleet_workers, "PARALLEL_FROM", 1 << 30)  # every file in this process
    serial = tmp_path / "serial.html"
    assert main(["report", "--fleet", str(fleet), "-o", str(serial)]) == 3
    said = capsys.readouterr().err
    for file, _ in BAD.values():
        assert said.count(f"unreadable results (an error row on the page): {fleet / file}") == 2
    # The reference: every host held at once, merged and flagged by model's own functions.
    good = [str(p) for p in sorted(fleet.iterdir()) if p.name[0] != "." and p.name not in
            {file for file, _ in BAD.values()}]
    at_once = "".join(render_fleet(_load_results(catalogue, good), rule_snippets(catalogue)))
    ours, theirs = _rows_and_sections(streamed.read_text()), _rows_and_sections(at_once)
    assert _rows_and_sections(serial.read_text()) == ours
    bad_rows = [row for row, _ in ours if row["n"] in {file for file, _ in BAD.values()}]
    assert len(bad_rows) == len(BAD) and all("x" in row for row in bad_rows)
    assert [pair for pair in ours if pair[0]["n"] not in
            {file for file, _ in BAD.values()}] == theirs
    names = [row["n"] for row, _ in ours]
    assert len(names) == HOSTS + 1 + len(BAD)  # the clone is a row; the ARF is not
    merged = dict((row["n"], section) for row, section in ours if row["n"] == "sas001")
    assert "the engines agree on" in _text(merged["sas001"]["head"])
    flagged = [section for row, section in ours if row["n"] in ("sas003", "zz-clone")]
    assert len(flagged) == 2 and all(
        "also call themselves 'sas003'" in _text(section["head"]) for section in flagged)


def test_diff_of_two_fleet_directories_reads_them_slim(fleet, tmp_path, capsys):
    """`diff` of two fleets (issue 39: drift at scale): each side read on every core without
    evidence; a worse verdict is found, and the bad files make the exit status 2's peers."""
    newer = tmp_path / "newer"
    newer.mkdir()
    for path in fleet.iterdir():
        text = path.read_text()
        if path.name == "sas010.json":
            data = json.loads(text)
            for rule in data["rules"]:
                if rule["id"] == "thp_disabled":
                    rule["result"] = "fail"
            text = json.dumps(data)
        (newer / path.name).write_text(text)
    out = tmp_path / "diff.json"
    assert main(["diff", str(fleet), str(newer), "--json", str(out), "--quiet"]) == 2
    changes = json.loads(out.read_text())["changes"]
    worse = [c for c in changes if c["worse"]]
    assert [(c["host"], c["rule"]) for c in worse] == [("sas010", "thp_disabled")]


def test_the_fleets_prometheus_metrics_count_each_rule_once_per_scanned_host(fleet, tmp_path):
    """`report --prometheus` (issue 39): read with prometheus_client's own parser; a host
    not scanned (each bad file) counts apart and adds to no rule's results."""
    from prometheus_client.parser import text_string_to_metric_families

    metrics = tmp_path / "fleet.prom"
    assert main(["report", str(fleet), "--prometheus", str(metrics)]) == 3
    families = {family.name: family.samples
                for family in text_string_to_metric_families(metrics.read_text())}
    hosts = {sample.labels["state"]: sample.value for sample in families["sascheck_fleet_hosts"]}
    assert hosts == {"scanned": HOSTS + 1, "not_scanned": len(BAD)}
    per_rule: dict[str, float] = {}
    for sample in families["sascheck_fleet_rule_hosts"]:
        per_rule[sample.labels["rule"]] = per_rule.get(sample.labels["rule"], 0) + sample.value
    assert per_rule and set(per_rule.values()) == {HOSTS + 1}
    scores = {sample.labels["host"]: sample.value
              for sample in families["sascheck_fleet_host_score_ratio"]}
    assert len(scores) == HOSTS + 1 and "zz-clone" in scores
    assert all(0 <= value <= 1 for value in scores.values())


def test_a_file_that_holds_its_reader_is_one_error_row(fleet, tmp_path, monkeypatch, capsys):
    """No single file can hang or end the report (issue 39): a results "file" that never
    gives its bytes (a FIFO no one writes) holds its worker past the limit; that worker is
    replaced, its chunk read again a file at a time, and only the FIFO is an error row."""
    import os

    monkeypatch.setattr(fleet_workers, "READ_SECONDS", 3.0)
    stuck = tmp_path / "stuck.json"
    os.mkfifo(stuck)
    files = sorted(str(path) for path in fleet.glob("sas0*.json"))
    page = tmp_path / "page.html"
    assert main(["report", "--fleet", *files[:40], str(stuck), *files[40:],
                 "-o", str(page)]) == 3
    rows = {row["n"]: row for row in fleet_index(page.read_text())["hosts"]}
    assert len(rows) == len(files) + 1
    assert rows["stuck.json"]["x"].startswith(
        "results file unreadable: its reading took longer than 3 s")
    assert f"unreadable results (an error row on the page): {stuck}" in capsys.readouterr().err


@pytest.mark.parametrize("unnamed", [True, False], ids=["O_TMPFILE", "mkstemp"])
def test_the_fleet_reports_scratch_has_no_name_another_user_could_plant(fleet, tmp_path,
                                                                      monkeypatch, unnamed):
    """Issue 44: the page's sections, results and images are spooled to scratch files while
    90 hosts are read on every core. A local user who can predict a scratch name can plant
    a link there; the scratch files are unnamed (O_TMPFILE) or, where the file system lacks
    that, tempfile's random names made with O_EXCL and unlinked at once: a watcher of the
    scratch directory, listing it as fast as it can for the whole report (both ways), sees
    no other name, and nothing is left."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    tempfile.tempdir = None  # read TMPDIR again
    monkeypatch.setattr(tempfile, "_O_TMPFILE_WORKS", unnamed)
    seen: set[str] = set()
    done = threading.Event()
    listings = []  # one per listing made while the report ran: the watch really watched

    def watch() -> None:
        while not done.is_set():
            seen.update(os.listdir(scratch))
            listings.append(1)
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        main(["report", "--fleet", str(fleet), "-o", str(tmp_path / "fleet.html")])
    finally:
        done.set()
        watcher.join()
        tempfile.tempdir = None
    assert (tmp_path / "fleet.html").stat().st_size > 0
    # the race window is the whole report: it was watched throughout, not once or twice
    print(f"scratch listed {len(listings)} times during the report; names seen: {len(seen)}")
    assert len(listings) >= 100, len(listings)
    assert os.listdir(scratch) == []
    # tempfile's names: a prefix (its own, or sascheck's) and eight random characters
    assert all(re.fullmatch(r"(tmp|sascheck-[a-z]+-)?[a-z0-9_]{8}", name) for name in seen), seen


def test_the_streamed_host_series_are_what_prometheus_client_writes():
    """`report --prometheus` writes each host's series from scratch files (issue 52), not
    through a registry holding the fleet: the text is byte for byte what prometheus_client's
    generate_latest makes of the same values (hostile names escaped as it does), its parser
    gives the names back, and a name two hosts give has one series."""
    from prometheus_client import CollectorRegistry, Gauge, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    from sascheck.reports.prometheus import HostMetrics, render_fleet_stream

    names = ['plain', 'quote"d', "back\\slash", "new\nline", "plain"]
    hosts = [HostMetrics(name, True, score, (1, 0, 2), (("thp_disabled", "high", "fail"),))
             for name, score in zip(names, (0.5, float("nan"), 1.0, 0.0, 0.25))]
    text = "".join(render_fleet_stream(hosts, "9.9"))
    registry = CollectorRegistry()
    score = Gauge("sascheck_fleet_host_score_ratio", "Each scanned host's share of judged "
                  "rules that pass; NaN when none was judged", ("host",), registry=registry)
    failed = Gauge("sascheck_fleet_host_failed_rules", "Each scanned host's rules that failed "
                   "(fail or error), by severity", ("host", "severity"), registry=registry)
    for host in hosts[:4]:  # the repeated name keeps its first host's series
        score.labels(host.name).set(host.score)
        for severity, number in zip(("high", "medium", "low"), host.failed):
            failed.labels(host.name, severity).set(number)
    assert text.endswith(generate_latest(registry).decode("utf-8"))
    families = {family.name: family.samples for family in text_string_to_metric_families(text)}
    assert [s.labels["host"] for s in families["sascheck_fleet_host_score_ratio"]] == names[:4]
    assert [s.value for s in families["sascheck_fleet_rule_hosts"]] == [5]


def test_a_diff_side_is_given_one_host_at_a_time(fleet):
    """`diff` takes each side one host at a time and keeps it on disk (issue 52): a side is
    a generator, read once; the diff of the fleet with itself, as the slim full read gives
    it, is the same (none), and the hosts are the slim read's."""
    import types

    from sascheck.reports.drift import diff
    from sascheck.reports.fleet_read import diff_side, read_slim
    from sascheck.rules import load_catalogue

    catalogue = load_catalogue()
    paths = [str(p) for p in sorted(fleet.iterdir()) if p.name[0] != "."]
    assert isinstance(diff_side(paths, catalogue, []), types.GeneratorType)
    side = list(diff_side(paths, catalogue, []))
    assert len(side) == HOSTS + 1 + len(BAD)
    slim = read_slim(paths, catalogue, [])
    assert diff(diff_side(paths, catalogue, []), diff_side(paths, catalogue, [])) == []
    assert diff(side, side) == diff(slim, slim) == []
    assert sorted((h.name, h.host().rules) for h in side) == sorted(
        (h.name, tuple((r.id, r.result, r.actual) for r in h.rules)) for h in slim)
