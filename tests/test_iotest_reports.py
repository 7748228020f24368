"""sas_fs_throughput judged from measurements, and measurements in reports: the verdict per
role and target, a scan and an iotest of one host read together, the chart in Chromium with
hostile mount points inert, the fleet column.

Measurements are made with iotest's own types (a Plan, fio PhaseResults) and go through
run_scan as sascheck iotest sends them; fio itself runs in test_iotest.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sascheck.cli import main
from sascheck.iotest.fio import PhaseResult
from sascheck.iotest.plan import Plan, Target
from sascheck.iotest.runner import Measurement
from sascheck.reports.loading import load
from sascheck.rules import load_catalogue
from sascheck.scanner.scan import run_scan

from .support.browser import browser_available, open_page
from .support.hosts import BASELINE_SETS, sas_host

CATALOGUE = load_catalogue()
needs_browser = pytest.mark.skipif(not browser_available(), reason="chromium/playwright missing")
MIB = 1 << 20


def measurement(mountpoint: str, roles: tuple[str, ...], write_mb_s: float, read_mb_s: float,
                cores: int = 8) -> dict[str, Any]:
    """What sascheck iotest records for one file system after a 60 s run of 8 jobs (at
    least iotest_min_seconds, so it is judged)."""
    plan = Plan(Target(mountpoint, mountpoint, "xfs", "/dev/mapper/sasvg-x", roles), jobs=8,
                block_bytes=256 * 1024, block_source="no -BUFSIZE configured: 256 KiB",
                size_bytes=1024 * MIB, size_source="--size", runtime_s=None, direct=True,
                free_bytes=100 * 1024 * MIB)

    def phase(rw: str, mb_s: float) -> PhaseResult:
        total = int(mb_s * 1e6 * 60)
        return PhaseResult(rw, total, (total // 8,) * 8, mb_s * 1e6, mb_s * 4, 60_000,
                           {"p50": 800.0, "p99": 2100.0})
    data = Measurement(plan, phase("write", write_mb_s), phase("read", read_mb_s),
                       [["fio", "--rw=write"], ["fio", "--rw=read"]]).to_dict("fio-3.33")
    return {**data, "cores": cores, "cores_basis": "physical cores (physical id, core id ...)"}


def measured_result(root: Path, measurements: list[dict[str, Any]],
                    sets: tuple[str, ...] = ()) -> dict[str, Any]:
    def attach(facts: Any, values: Any) -> None:
        facts.measurements = measurements
    result = run_scan(CATALOGUE, "default", [*BASELINE_SETS, *sets], str(root), "bare_metal",
                      measure=attach)
    return result.to_dict()


def _throughput(result: dict[str, Any]) -> dict[str, Any]:
    return next(rule for rule in result["rules"] if rule["id"] == "sas_fs_throughput")


@pytest.fixture(scope="module")
def host_root(tmp_path_factory) -> Path:
    return sas_host(tmp_path_factory.mktemp("host") / "root")


@pytest.mark.parametrize(("roles", "rates", "sets", "expected"), [
    (("WORK",), (1200, 1300), (), "pass"),  # 150 and 162 MB/s per core >= 100
    (("UTILLOC",), (640, 1300), (), "fail"),  # write 80 per core < 100
    (("DATA",), (880, 900), (), "pass"),  # 110 per core >= SAS's minimum of 100
    (("DATA",), (480, 900), (), "fail"),  # 60 per core: the old target of 50 passed it
    (("DATA",), (880, 900), ("io_mb_per_core_data=120",), "fail"),
    (("DATA", "WORK"), (480, 900), (), "fail"),  # WORK shares it: the WORK target applies
])
def test_verdict_per_core_against_the_role_target(host_root, roles, rates, sets, expected):
    result = measured_result(host_root, [measurement("/sas", roles, *rates)], sets)
    rule = _throughput(result)
    assert rule["result"] == expected, rule
    assert rule["evidence"][0]["subject"] == f"/sas ({'/'.join(roles)})"


def test_a_scan_leaves_throughput_notchecked_and_says_how(host_root, tmp_path):
    out = tmp_path / "scan.json"
    main(["scan", "--root", str(host_root), "--quiet", "--json", str(out),
          *[arg for value in BASELINE_SETS for arg in ("--set", value)]])
    rule = _throughput(json.loads(out.read_text()))
    assert rule["result"] == "notchecked" and "sascheck iotest" in rule["message"]


def test_scan_and_iotest_of_one_host_report_as_one(host_root, tmp_path):
    scan = tmp_path / "scan.json"
    main(["scan", "--root", str(host_root), "--quiet", "--json", str(scan),
          *[arg for value in BASELINE_SETS for arg in ("--set", value)]])
    iotest = measured_result(host_root, [measurement("/saswork", ("WORK",), 640, 700)])
    iotest["scanned_at"] = "2000-01-01T00:00:00+00:00"  # older than the scan
    (tmp_path / "iotest.json").write_text(json.dumps(iotest))
    html = tmp_path / "report.html"
    assert main(["report", str(scan), str(tmp_path / "iotest.json"), "-o", str(html)]) == 0
    page = html.read_text()
    assert page.count('<section class="host"') == 1  # merged, not two hosts
    assert 'class="throughput"' in page and "/saswork" in page
    host = load(str(tmp_path / "iotest.json"), CATALOGUE)
    assert host.slowest_per_core() == pytest.approx(80.0)


def test_a_run_shorter_than_the_minimum_is_notchecked_not_passed(host_root):
    fast = measurement("/sas", ("WORK",), 1200, 1300)
    fast["write"]["runtime_ms"] = 300  # a 0.3 s burst into caches
    rule = _throughput(measured_result(host_root, [fast]))
    assert rule["result"] == "notchecked"
    assert rule["evidence"][0]["note"].startswith("too short to judge: write 0.3 s")
    # with the other file system judged and passing, the rule still says not judged
    rule = _throughput(measured_result(host_root, [fast, measurement("/d", ("DATA",), 900, 900)]))
    assert rule["result"] == "notchecked" and "too short" in rule["message"]


def test_measurements_are_validated_when_read(host_root, tmp_path):
    result = measured_result(host_root, [measurement("/sas", ("WORK",), 1200, 1300)])
    result["measurements"][0]["write"]["mb_s"] = "fast"
    (tmp_path / "bad.json").write_text(json.dumps(result))
    status = main(["report", str(tmp_path / "bad.json"), "-o", str(tmp_path / "r.html")])
    assert status == 1 and not (tmp_path / "r.html").exists()


HOSTILE = '/sas</text></svg><script>window.__pwned=1</script><svg><text>'


@needs_browser
def test_chart_in_chromium_with_a_hostile_mount_point(host_root, tmp_path):
    measurements = [measurement("/saswork", ("WORK",), 1200, 640),
                    measurement(HOSTILE, ("DATA",), 480, 900)]
    (tmp_path / "io.json").write_text(json.dumps(measured_result(
        host_root, measurements, ("io_mb_per_core_data=50",))))
    html = tmp_path / "io.html"
    assert main(["report", str(tmp_path / "io.json"), "-o", str(html)]) == 0
    with open_page(html) as (page, log):
        assert page.evaluate("typeof window.__pwned") == "undefined"
        bars = page.locator("svg.throughput rect.bar")
        assert bars.count() == 4
        rates = [float(bars.nth(i).get_attribute("data-mb-per-core")) for i in range(4)]
        assert rates == [150.0, 80.0, 60.0, 112.5]
        widths = [float(bars.nth(i).get_attribute("width")) for i in range(4)]
        assert widths[0] > widths[3] > widths[1] > widths[2]  # drawn to scale
        targets = page.locator("svg.throughput line.target")
        assert [targets.nth(i).get_attribute("data-target") for i in range(2)] == ["100", "50"]
        assert HOSTILE in page.locator("table.measurements").inner_text()
        assert log.console_errors == []


@needs_browser
def test_fleet_has_a_throughput_column(host_root, tmp_path):
    measured = measured_result(host_root, [measurement("/sas", ("WORK",), 800, 1600)])
    measured["host"]["hostname"] = "measured"
    plain = measured_result(host_root, [])
    plain.pop("measurements")
    plain["host"]["hostname"] = "plain"
    for name, data in (("a", measured), ("b", plain)):
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    html = tmp_path / "fleet.html"
    assert main(["report", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "-o",
                 str(html)]) == 0
    with open_page(html) as (page, _):
        cells = page.locator("table.matrix td.mbcore")
        assert sorted(cells.nth(i).inner_text() for i in range(2)) == ["-", "100.0"]


def test_a_run_too_short_says_why_and_draws_no_verdict(host_root):
    """Issue 38: the terminal says why a run is notchecked; its chart draws it grey, never
    the red of a failure (a run is not judged slow from a burst into caches)."""
    import io

    from rich.console import Console

    from sascheck.iotest.command import print_measurements
    from sascheck.reports import throughput_svg

    fast = measurement("/sas", ("WORK",), 10, 10)  # far below the target, but a burst
    fast["write"]["runtime_ms"] = 300
    result = measured_result(host_root, [fast])
    out = io.StringIO()
    print_measurements(result, Console(file=out, width=300))
    assert "sas_fs_throughput: notchecked: too short to judge: write 0.3 s" in out.getvalue()
    targets = {"io_mb_per_core_work": 150, "io_mb_per_core_data": 100, "iotest_min_seconds": 30}
    chart = throughput_svg.render([fast], targets)
    assert throughput_svg.FAIL not in chart and throughput_svg.NOT_JUDGED in chart
    assert "too short to judge" in chart
    slow = measurement("/sas", ("WORK",), 10, 10)
    assert throughput_svg.FAIL in throughput_svg.render([slow], targets)


@pytest.mark.parametrize(("size_mib", "said"), [
    (64, "(0.8 % of RAM: the page cache can hold it)"), (16 * 1024, "(2.0 x RAM)")])
def test_the_plan_says_the_size_against_ram_in_words_that_mean_something(size_mib, said):
    plan = Plan(Target("/sas", "/sas", "xfs", "/dev/sdb", ("WORK",)), jobs=1,
                block_bytes=256 * 1024, block_source="", size_bytes=size_mib * MIB,
                size_source="--size", runtime_s=None, direct=False, free_bytes=1 << 40,
                ram_bytes=8 * 1024 * MIB)
    assert said in plan.describe() and "0.0 x RAM" not in plan.describe()
