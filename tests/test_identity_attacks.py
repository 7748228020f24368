"""Issue 44, round 4: the controller, not the host, decides who a host is.

With the playbook's sascheck and oscap engines a results file is written on the host and
fetched as it is, so anything inside it is the host's word. Each attack below is made with
the real consumer (`sascheck report`, ansible-playbook reading the limit file, the fleet
page's index) and shown inert: the file's name in a fleet directory is the key, the
results' own `inventory_name` is only compared with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sascheck.cli import main
from sascheck.reports.failing import limit_names
from sascheck.reports.loading import load
from sascheck.reports.model import HostView, RuleView
from sascheck.rules import load_catalogue

from .support.browser import browser_available, fleet_index, fleet_text, open_page
from .support.hosts import BASELINE_SETS, sas_host
from .support.lab import require
from .support.remedy import ansible_available, limited_hosts
from .test_iotest_reports import measured_result, measurement
from .test_reports import _scan_json

THP_ON = "[always] madvise never"
CATALOGUE = load_catalogue()


@pytest.fixture(scope="module")
def scans(tmp_path_factory) -> dict[str, dict[str, Any]]:
    """One failing (THP on) and one passing host's results, to copy as each host's."""
    base = tmp_path_factory.mktemp("scans")
    failing = sas_host(base / "failing", thp_enabled=THP_ON)
    passing = sas_host(base / "passing")
    return {"fail": json.loads(_scan_json(failing, BASELINE_SETS, base / "f.json").read_text()),
            "pass": json.loads(_scan_json(passing, BASELINE_SETS, base / "p.json").read_text()),
            "measured": measured_result(passing, [measurement("/saswork", ("WORK",),
                                                              1200, 1300)])}


def _results(scan: dict[str, Any], hostname: str, **host: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(scan))
    data["host"].update(hostname=hostname, **host)
    return data


def _fleet(tmp_path: Path, files: dict[str, dict[str, Any]],
           groups: dict[str, list[str]] | None = None) -> Path:
    """A results directory as fleet-scan.yml leaves it: the marker, each host's file named
    by its inventory name, the groups record."""
    results = tmp_path / "results"
    results.mkdir()
    (results / ".sascheck-fleet").write_text("written by fleet-scan.yml\n")
    for name, data in files.items():
        (results / name).write_text(json.dumps(data))
    if groups is not None:
        (results / ".sascheck-groups").write_text(json.dumps(groups))
    return results


def _failing(capsys, *argv: str) -> tuple[list[str], str]:
    assert main(["report", "--failing", "thp_disabled", *argv]) == 0
    out, err = capsys.readouterr()
    return out.splitlines(), err


def test_a_host_naming_itself_all_cannot_widen_a_limit(tmp_path, scans, capsys):
    """evil's own results say inventory_name 'all'; read as its key, --failing printed
    'all' and the limit ran on every host of the inventory, other groups included."""
    require(None if ansible_available() else "ansible-playbook is not installed", "ansible")
    results = _fleet(tmp_path, {
        "sasgrid01.json": _results(scans["fail"], "sasgrid01", inventory_name="sasgrid01"),
        "sasgrid02.json": _results(scans["pass"], "sasgrid02", inventory_name="sasgrid02"),
        "evil.json": _results(scans["fail"], "evil", inventory_name="all"),
    }, {"sasgrid01": ["sas"], "sasgrid02": ["sas"], "evil": ["dmz"]})
    names, said = _failing(capsys, str(results))
    assert names == ["evil", "sasgrid01"] and "all" not in said.split("\n")
    limit = tmp_path / "failing.txt"
    limit.write_text("\n".join(names) + "\n")
    listed = limited_hosts(
        tmp_path, "[sas]\nsasgrid01\nsasgrid02\n[dmz]\nevil\n[payments]\nledger01\n", limit)
    assert listed == ["evil", "sasgrid01"]  # never ledger01 nor sasgrid02


def test_a_host_posing_as_another_keeps_neither_its_row_nor_its_failure(tmp_path, scans):
    """evil returns passing results naming the victim's inventory name, with measurements
    and dated 2099: merged by that name, the victim's failing row was replaced by evil's
    passing one. Keyed by the controller's file names, both rows stay, evil flagged."""
    forged = _results(scans["measured"], "evil", inventory_name="victim")
    forged["scanned_at"] = "2099-01-01T00:00:00+00:00"
    results = _fleet(tmp_path, {
        "victim.json": _results(scans["fail"], "victim", inventory_name="victim"),
        "evil.json": forged})
    page = tmp_path / "fleet.html"
    assert main(["report", "--fleet", str(results), "-o", str(page)]) == 0
    hosts = {row["n"]: row for row in fleet_index(page.read_text())["hosts"]}
    assert sorted(hosts) == ["evil", "victim"]
    assert "f" in hosts["victim"]["r"]  # its failure stays, under its name
    evil = load(str(results / "evil.json"), CATALOGUE)
    assert evil.key == "inventory:evil"
    assert any("name the inventory host 'victim', but the controller stored them as 'evil'"
               in problem for problem in evil.problems)
    assert "but the controller stored them as" in fleet_text(page.read_text()).replace("&#39;", "'")


def test_a_failure_record_from_the_host_is_keyed_by_its_file_name(tmp_path, scans):
    """A host can return any JSON, a failure record naming another host among it."""
    record = {"schema": "sascheck-failure/1", "stage": "scan", "source": "", "reason": "x",
              "host": {"hostname": "victim", "inventory_name": "victim"}}
    results = _fleet(tmp_path, {"evil.json": record,
                                "victim.json": _results(scans["fail"], "victim")})
    assert load(str(results / "evil.json"), CATALOGUE).key == "inventory:evil"
    page = tmp_path / "fleet.html"
    assert main(["report", "--fleet", str(results), "-o", str(page)]) == 0
    assert sorted(row["n"] for row in fleet_index(page.read_text())["hosts"]) == [
        "evil", "victim"]


def test_outside_a_fleet_directory_the_claimed_inventory_name_is_no_key(tmp_path, scans):
    path = tmp_path / "copied.json"
    path.write_text(json.dumps(_results(scans["fail"], "sasdev", inventory_name="sasprod")))
    host = load(str(path), CATALOGUE)
    assert (host.inventory, host.name, host.key) == ("", "sasdev", "name:sasdev")
    assert any("nothing on the controller vouches" in problem for problem in host.problems)


def test_scan_snapshots_output_is_a_fleet_directory(tmp_path):
    """scan-snapshots names each output after its archive: the marker makes that name,
    not the results', the host's key."""
    archives = tmp_path / "archives"
    archives.mkdir()
    assert main(["collect", "--root", str(sas_host(tmp_path / "root")),
                 "-o", str(archives / "sas%2Fweird.tar.gz")]) == 0
    out = tmp_path / "out"
    assert main(["scan-snapshots", "-d", str(out), "--quiet", str(archives)]) in (0, 2)
    assert (out / ".sascheck-fleet").is_file()
    host = load(str(out / "sas%2Fweird.json"), CATALOGUE)
    assert (host.inventory, host.problems[:1]) == ("sas/weird", host.problems[:1])
    assert not any("inventory host" in problem for problem in host.problems)


@pytest.mark.skipif(not browser_available(), reason="chromium/playwright missing")
def test_the_pages_names_for_limit_are_those_report_failing_prints(tmp_path, scans, capsys):
    """The fleet page's rule view offers names to copy into a limit file: the same names
    as --failing, a host outside the inventory record (a stray file) left out, and said."""
    results = _fleet(tmp_path, {
        "sasgrid01.json": _results(scans["fail"], "sasgrid01"),
        "stray.json": _results(scans["fail"], "stray"),
        "sas.json": _results(scans["fail"], "sas")},
        {"sasgrid01": ["sas"], "sas": ["sas"]})
    names, err = _failing(capsys, str(results))
    assert names == ["sasgrid01"] and "left out 'stray'" in err and "left out 'sas'" in err
    page_path = tmp_path / "fleet.html"
    assert main(["report", "--fleet", str(results), "-o", str(page_path)]) == 0
    with open_page(page_path) as (page, log):
        page.locator("button.rule-hosts[data-rule=thp_disabled]").click()
        assert page.locator("#rule-view-title").text_content() == "3 hosts fail thp_disabled"
        assert page.locator("#rule-view-names").text_content().split("\n") == names
        assert page.locator("#rule-view-left").text_content().startswith(
            "2 failing hosts are left out of the names")
    assert log.console_errors == []


def _host(name: str, inventory: str = "", result: str = "fail") -> HostView:
    host = HostView(name=name, source="sascheck", path=f"{name}.json", inventory=inventory)
    host.rules = [RuleView("thp_disabled", "", "high", result)]
    return host


@pytest.mark.parametrize(("hosts", "groups", "printed", "said"), [
    # a group of the inventory, even as a controller-given name, is many hosts
    ([_host("sas", "sas"), _host("a", "a")], {"a": ["sas"], "sas": ["sas"]}, ["a"],
     "a group name"),
    # a host the controller's record never saw
    ([_host("ghost", "ghost"), _host("a", "a")], {"a": ["sas"]}, ["a"],
     "not a host of the fleet's inventory record"),
    # names the hosts give themselves: never the controller, never a shared claim
    ([_host("localhost"), _host("a")], {}, ["a"], "reads as the controller"),
    ([_host("twin"), _host("twin"), _host("a")], {}, ["a"], "several hosts' results"),
    ([_host("ungrouped", "ungrouped"), _host("a", "a")], {}, ["a"], "a group name"),
    ([_host("a"), _host("b", result="pass")], {}, ["a"], "the name the host gives itself"),
])
def test_limit_names_match_one_host_each(hosts, groups, printed, said):
    names, remarks = limit_names(hosts, "thp_disabled", groups)
    assert names == printed
    assert any(said in remark for remark in remarks), remarks
