"""The fleet from the controller (issue 25): hosts run nothing but collect.sh, the controller
scans their snapshots across its cores, and a host that could not be collected or scanned
is a row of errors saying why, never a host missing from the page."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from sascheck.cli import main
from sascheck.scanner.sources.collect_script import SCRIPT
from tests.support.example_roots import EXAMPLE_VALUES, EXAMPLES

from .support.browser import browser_available, fleet_index, fleet_text, open_page
from .support.oscap import oscap_available

PROJECT = Path(__file__).resolve().parent.parent
PLAYBOOK = PROJECT / "reports/playbooks/fleet-scan.yml"
SASCHECK = str(Path(sys.executable).parent / "sascheck")


def _example_roots(base: Path) -> dict[str, tuple[Path, list[str]]]:
    """host<N> -> (root, site values) of each example system, built under ``base``."""
    roots = {}
    for index, name in enumerate(sorted(EXAMPLES)):
        EXAMPLES[name](base / name)
        roots[f"host{index}"] = (base / name, EXAMPLE_VALUES[name])
    return roots


def _ini_sets(host: str, sets: list[str]) -> str:
    """An INI inventory's sascheck_sets: a plain string of NAME=VALUE words for host1 (the
    form an INI line gives, which the playbook once split into characters), else a list."""
    if host == "host1" and sets:
        return f"sascheck_sets={shlex.quote(' '.join(sets))}"
    return f"sascheck_sets='{json.dumps(sets)}'"


def _run_playbook(tmp_path: Path, hosts: dict[str, str], inventory: Path | None = None,
                  outputs: bool = True, extra: list[str] = ()) -> subprocess.CompletedProcess[str]:
    """ansible-playbook fleet-scan.yml over local "hosts" (each line's host variables), or
    over the ``inventory`` given; ``outputs``: name the results directory and the page
    (tmp_path/results, tmp_path/fleet.html), else leave them to the playbook's defaults."""
    from .support.remedy import ANSIBLE_BIN

    if inventory is None:
        inventory = tmp_path / "inventory.ini"
        inventory.write_text("[sas]\n" + "".join(
            f"{host} ansible_connection=local {variables}\n" for host, variables in hosts.items()))
    return subprocess.run(
        [str(ANSIBLE_BIN / "ansible-playbook"), "-i", str(inventory), str(PLAYBOOK),
         "-e", "ansible_become=false", "-e", f"sascheck_command={SASCHECK}",
         "-e", f"sascheck_controller_command={SASCHECK}",
         "-e", f"sascheck_remote_dir={tmp_path}",
         *(["-e", f"sascheck_results_dir={tmp_path / 'results'}",
            "-e", f"sascheck_fleet_report={tmp_path / 'fleet.html'}"] if outputs else []),
         *extra],
        capture_output=True, text=True, timeout=600,
        env={"PATH": f"{ANSIBLE_BIN}:/usr/bin:/bin:/usr/sbin:/sbin", "ANSIBLE_NOCOLOR": "1",
             "HOME": str(tmp_path), "ANSIBLE_LOCALHOST_WARNING": "0"})


def _needs_ansible() -> None:
    from .support.remedy import ansible_available

    if not ansible_available():
        pytest.skip("ansible-core not installed")


def test_agentless_playbook_needs_nothing_but_sh_on_the_hosts(tmp_path):
    """Each host's Python is a path that does not exist, so any module run there fails: the
    snapshots come back through ansible.builtin.script alone. host3's collection fails
    (its root is gone) and it is on the page as such, with the others' verdicts."""
    _needs_ansible()
    hosts = {host: (f"sascheck_root={root} {_ini_sets(host, sets)} "
                    "ansible_python_interpreter=/nonexistent/python3")
             for host, (root, sets) in _example_roots(tmp_path / "roots").items()}
    hosts["host3"] = ("sascheck_root=/nonexistent/root "
                      "ansible_python_interpreter=/nonexistent/python3")
    hosts["host2"] += " sascheck_profile=viya3"  # a Viya host among Grid hosts (issue 65)
    completed = _run_playbook(tmp_path, hosts)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    results = tmp_path / "results"
    assert sorted(path.name for path in results.glob("*.tar.gz")) == [
        "host0.tar.gz", "host1.tar.gz", "host2.tar.gz"]
    # The site values given per host travel in its archive and were used on the controller.
    for host, name in zip(("host0", "host1", "host2"), sorted(EXAMPLES)):
        data = json.loads((results / f"{host}.json").read_text())
        assert data["source"]["kind"] == "snapshot"
        assert data["host"]["root"].endswith(f"{host}.tar.gz")
        given = [note for note in data["source"]["notes"] if note.startswith("site values")]
        values = EXAMPLE_VALUES[name]
        assert given == (["site values given to the collection: " + ", ".join(values)]
                         if values else [])
        assert {f"sas_data_dirs={d['path']}" for d in data["sas_dirs"]
                if d["source"] == "--set"} == {v for v in values if v.startswith("sas_data")}
    # Each host is scanned under its own profile, and its results say which.
    profiles = {host: json.loads((results / f"{host}.json").read_text())["profile"]
                for host in ("host0", "host1", "host2")}
    assert profiles == {"host0": "default", "host1": "default", "host2": "viya3"}
    viya_rules = {rule["id"] for rule in json.loads((results / "host2.json").read_text())["rules"]}
    assert {"vm_max_map_count", "sas_accounts_stack"} <= viya_rules
    assert json.loads((results / ".sascheck-profiles").read_text())["host2"] == "viya3"
    failed = json.loads((results / "host3.failed.json").read_text())
    assert failed["stage"] == "collect"
    assert "SASCHECK_ROOT=/nonexistent/root is not a directory" in failed["reason"]
    hosts_on_page = {row["n"]: row for row in
                     fleet_index((tmp_path / "fleet.html").read_text())["hosts"]}
    # The fleet's key is the inventory name; what each host calls itself is said beside it.
    assert sorted(hosts_on_page) == ["host0", "host1", "host2", "host3"]
    # every rule of its profile an error, none a pass ('-': host2's viya3 rules, not in its)
    assert set(hosts_on_page["host3"]["r"]) == {"e", "-"}
    assert {"p", "f"} <= set(hosts_on_page["host1"]["r"])
    # the profile column: each host's own, and a rule outside it has no verdict there
    assert [hosts_on_page[host]["pr"] for host in ("host0", "host2")] == ["default", "viya3"]
    page = fleet_text((tmp_path / "fleet.html").read_text())
    assert "calls itself 'sasprod01'; it is reported under its inventory name 'host1'" in page
    # The inventory's groups, recorded by the play for the page's group column (issue 38).
    groups = json.loads((results / ".sascheck-groups").read_text())
    assert groups == {host: ["sas"] for host in ("host0", "host1", "host2", "host3")}
    assert {row["g"] for row in hosts_on_page.values()} == {"sas"}


def test_a_hostile_inventory_name_makes_no_path_outside_the_results(tmp_path):
    """A dynamic inventory may name a host '../outside/victim': the controller's files for it
    are named by the percent-encoded name, inside the results directory, and the page shows
    the name as text."""
    _needs_ansible()
    root, sets = _example_roots(tmp_path / "roots")["host0"]
    name = "../outside/victim"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.json").write_text("kept\n")
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(json.dumps({"all": {"hosts": {name: {
        "ansible_connection": "local", "sascheck_root": str(root), "sascheck_sets": sets,
        "ansible_python_interpreter": "/nonexistent/python3"}}}}))
    completed = _run_playbook(tmp_path, {}, inventory)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert sorted(p.name for p in outside.iterdir()) == ["victim.json"]
    assert (outside / "victim.json").read_text() == "kept\n"
    results = tmp_path / "results"
    assert (results / "%2E.%2Foutside%2Fvictim.json").is_file()
    hosts = [row["n"] for row in fleet_index((tmp_path / "fleet.html").read_text())["hosts"]]
    assert hosts == [name]


@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
def test_playbook_still_runs_sascheck_and_oscap_where_hosts_have_them(tmp_path):
    from .support.oscap import DATASTREAM

    _needs_ansible()
    hosts = {host: (f"sascheck_root={root} sascheck_sets='{json.dumps(sets)}' "
                    f"sascheck_engine={'oscap' if host == 'host0' else 'sascheck'} "
                    f"sascheck_datastream={DATASTREAM} "
                    f"ansible_python_interpreter={sys.executable}"
                    + (" sascheck_profile=viya3" if host in ("host0", "host1") else ""))
             for host, (root, sets) in _example_roots(tmp_path / "roots").items()}
    completed = _run_playbook(tmp_path, hosts)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    fetched = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert fetched == [".sascheck-fleet", ".sascheck-groups", "host0.arf.xml", "host1.json",
                       "host2.json"]
    hosts_on_page = fleet_index((tmp_path / "fleet.html").read_text())["hosts"]
    assert sorted(host["n"] for host in hosts_on_page) == ["host0", "host1", "host2"]
    # sascheck_profile reaches both engines: oscap's tailored profile and sascheck's --profile
    arf = (tmp_path / "results/host0.arf.xml").read_text()
    assert 'idref="xccdf_org.sascheck.content_profile_viya3_tailored"' in arf
    results = tmp_path / "results"
    assert [json.loads((results / f"{host}.json").read_text())["profile"]
            for host in ("host1", "host2")] == ["viya3", "default"]
    # Nothing was left on the hosts: the results were written in a private directory.
    assert not list(tmp_path.glob("sascheck-*"))


def test_fleet_playbook_is_ansible_lint_clean():
    from .support.remedy import lint_playbook

    _needs_ansible()
    lint = lint_playbook(PLAYBOOK)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def _collect(root: Path, output: Path, *arguments: str) -> Path:
    completed = subprocess.run(["sh", "-c", SCRIPT, "collect.sh", "-o", str(output),
                                *arguments], capture_output=True, text=True, timeout=120,
                               env={**os.environ, "SASCHECK_ROOT": str(root)})
    assert completed.returncode == 0, completed.stderr
    return output


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory) -> Path:
    """One collect.sh archive per example host (with its site values), and a broken one."""
    base = tmp_path_factory.mktemp("snapshots")
    archives = base / "archives"
    archives.mkdir()
    for host, (root, sets) in _example_roots(base / "roots").items():
        _collect(root, archives / f"{host}.tar.gz", *[f"--set={value}" for value in sets])
    (archives / "broken.tar.gz").write_bytes(b"\x1f\x8b not really gzip")
    return archives


def test_scan_snapshots_in_parallel_matches_one_scan_each(tmp_path, snapshots, capsys):
    status = main(["scan-snapshots", "--jobs", "2", "-d", str(tmp_path / "out"),
                   str(snapshots)])
    assert status == 2  # findings, and one archive not scanned
    err = capsys.readouterr().err
    assert "broken.tar.gz: not scanned: " in err and "1 not scanned" in err
    for host in ("host0", "host1", "host2"):
        one = tmp_path / f"{host}-alone.json"
        main(["scan", "--snapshot", str(snapshots / f"{host}.tar.gz"), "--quiet",
              "--json", str(one)])
        alone = {r["id"]: r["result"] for r in json.loads(one.read_text())["rules"]}
        batch = json.loads((tmp_path / "out" / f"{host}.json").read_text())
        assert {r["id"]: r["result"] for r in batch["rules"]} == alone
    broken = json.loads((tmp_path / "out" / "broken.json").read_text())
    assert (broken["schema"], broken["stage"]) == ("sascheck-failure/1", "scan")
    assert "not a readable tar archive" in broken["reason"]


def test_a_failure_record_is_a_row_of_errors_with_its_reason(tmp_path, snapshots, capsys):
    main(["scan-snapshots", "--quiet", "-d", str(tmp_path / "out"), str(snapshots)])
    page = tmp_path / "fleet.html"
    assert main(["report", "--fleet", str(tmp_path / "out"), "-o", str(page)]) == 0
    assert capsys.readouterr().err == f"{page}: fleet report of 4 hosts; open it in a browser\n"
    rows = {row["n"]: row for row in fleet_index(page.read_text())["hosts"]}
    # not scanned: every rule an error, no score and no failures by severity (issue 38)
    assert set(rows["broken"]["r"]) == {"e"} and rows["broken"]["sc"] is None
    assert rows["broken"]["f"] == [0, 0, 0] and rows["broken"]["x"].startswith("the scan failed")
    if not browser_available():
        pytest.skip("chromium/playwright missing")
    with open_page(page) as (browser_page, log):
        browser_page.locator("#matrix-rows a", has_text="broken").click()
        banner = browser_page.locator("section.host .banner").inner_text()
        assert "Problem: not scanned: the scan failed:" in banner
        assert "not a readable tar archive" in banner
    assert log.console_errors == []


@pytest.mark.parametrize(("record", "message"), [
    ({"host": {"hostname": "x"}, "stage": "reboot", "reason": "r"}, "stage 'reboot'"),
    ({"host": "x", "stage": "scan", "reason": "r"}, "'host' is not an object"),
    ({"host": {"hostname": "x"}, "stage": "scan", "reason": ["r"]}, "'reason' is not a string"),
])
def test_a_malformed_failure_record_is_named(tmp_path, capsys, record, message):
    path = tmp_path / "x.failed.json"
    path.write_text(json.dumps({"schema": "sascheck-failure/1", **record}))
    assert main(["report", str(path), "-o", str(tmp_path / "out.html")]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_scan_snapshots_refuses_a_bad_set_before_scanning(tmp_path, snapshots, capsys):
    assert main(["scan-snapshots", "-d", str(tmp_path / "out"), "--set", "no_such=1",
                 str(snapshots)]) == 1
    assert "unknown site value 'no_such'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize(("text", "said"), [
    ('{"host0": "nope"}', "unknown profile 'nope' (known: default, viya3, viya4_node, xtremio), for host0"),
    ("[1]", "not an object of host name to profile name"),
    ("{", "not JSON"),
])
def test_scan_snapshots_refuses_a_bad_profiles_file_before_scanning(tmp_path, snapshots, capsys,
                                                                    text, said):
    profiles = tmp_path / "profiles.json"
    profiles.write_text(text)
    assert main(["scan-snapshots", "-d", str(tmp_path / "out"), "--profiles", str(profiles),
                 str(snapshots)]) == 1
    assert said in capsys.readouterr().err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_collect_script_help_collects_nothing(tmp_path):
    completed = subprocess.run(["sh", "-c", SCRIPT, "collect.sh", "--help"], cwd=tmp_path,
                               capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0 and completed.stdout.startswith("usage: sh collect.sh")
    assert list(tmp_path.iterdir()) == []


def test_sets_given_to_collect_are_kept_and_overridden_by_scan(tmp_path, capsys):
    """`sascheck collect --set` and collect.sh --set: the scan of the archive uses them, and a
    --set given to the scan wins."""
    EXAMPLES["rhel8-tuned-sas"](tmp_path / "root")
    values = EXAMPLE_VALUES["rhel8-tuned-sas"]
    archive = tmp_path / "python.tar.gz"
    assert main(["collect", "--root", str(tmp_path / "root"), "-o", str(archive),
                 *[f"--set={value}" for value in values]]) == 0
    script_archive = _collect(tmp_path / "root", tmp_path / "sh.tar.gz",
                              *[f"--set={value}" for value in values])
    direct = tmp_path / "direct.json"
    main(["scan", "--root", str(tmp_path / "root"), "--quiet", "--json", str(direct),
          *[f"--set={value}" for value in values]])
    expected = json.loads(direct.read_text())
    for each in (archive, script_archive):
        out = tmp_path / "out.json"
        main(["scan", "--snapshot", str(each), "--quiet", "--json", str(out)])
        data = json.loads(out.read_text())
        assert data["sas_dirs"] == expected["sas_dirs"] and data["sas_dirs"]
        assert data["host"]["root"] == str(each)  # the archive, not a removed temp dir
        main(["scan", "--snapshot", str(each), "--quiet", "--json", str(out),
              "--set", "sas_data_dirs=/srv/elsewhere"])
        roles = {d["path"] for d in json.loads(out.read_text())["sas_dirs"]
                 if d["role"] == "DATA"}
        assert roles == {"/srv/elsewhere"}


def test_snapshot_benchmark_runs_and_prints_rates(tmp_path):
    completed = subprocess.run([sys.executable, str(PROJECT / "scripts/bench-snapshots"), "6",
                                str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert "snapshots/s per core" in completed.stdout
    assert "controller pipeline for 6 hosts" in completed.stdout
    assert len(list((tmp_path / "results").glob("*.json"))) == 6


def test_a_hostile_failure_record_is_shown_not_run(tmp_path):
    """A failure record carries a host's words (collect.sh's stderr) into the page: they
    are text there, never markup or script."""
    if not browser_available():
        pytest.skip("chromium/playwright missing")
    hostile = '</script><img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
    record = tmp_path / "evil.failed.json"
    record.write_text(json.dumps({"schema": "sascheck-failure/1", "stage": "collect",
                                  "host": {"hostname": f"evil{hostile}"},
                                  "reason": f"{hostile}\n\x1b[2Jcleared"}))
    page = tmp_path / "fleet.html"
    assert main(["report", "--fleet", str(record), "-o", str(page)]) == 0
    with open_page(page) as (browser_page, log):
        browser_page.locator("#matrix-rows a").first.click()
        banner = browser_page.locator("section.host .banner").inner_text()
        assert hostile in banner
        assert browser_page.evaluate("typeof window.__pwned") == "undefined"
    assert log.console_errors == []


def test_results_and_page_default_to_the_users_home(tmp_path):
    """Issue 36: the playbook the RPM installs lives in /usr/share/sascheck, which is no place
    for data: by default results and the page go to ~/sascheck, and the play says where."""
    _needs_ansible()
    root, _ = _example_roots(tmp_path / "roots")["host0"]
    completed = _run_playbook(tmp_path, {"host0": f"sascheck_root={root} "
                                         "ansible_python_interpreter=/nonexistent/python3"},
                              outputs=False)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert (tmp_path / "sascheck/results/host0.json").is_file()
    assert (tmp_path / "sascheck/fleet.html").is_file()
    assert f"fleet page: {tmp_path}/sascheck/fleet.html; results: {tmp_path}/sascheck/results" \
        in completed.stdout
    assert not (PLAYBOOK.parent / "results").exists()


def test_a_host_removed_from_the_inventory_leaves_the_page(tmp_path):
    """Issue 48: the play judges the results directory against the whole inventory: a host
    no longer in it leaves the page (its files kept in departed/), while a host only left
    out by --limit stays."""
    _needs_ansible()
    roots = _example_roots(tmp_path / "roots")
    hosts = {host: f"sascheck_root={root} sascheck_sets='{json.dumps(sets)}' "
                   "ansible_python_interpreter=/nonexistent/python3"
             for host, (root, sets) in roots.items()}
    completed = _run_playbook(tmp_path, hosts)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    del hosts["host2"]
    inventory = tmp_path / "inventory.ini"
    inventory.write_text("[sas]\n" + "".join(f"{host} ansible_connection=local {variables}\n"
                                             for host, variables in hosts.items()))
    completed = _run_playbook(tmp_path, {}, inventory, extra=["--limit", "host0"])
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    page = fleet_index((tmp_path / "fleet.html").read_text())
    assert sorted(row["n"] for row in page["hosts"]) == ["host0", "host1"]
    results = tmp_path / "results"
    assert sorted(p.name for p in (results / "departed").iterdir()) == [
        "host2.json", "host2.tar.gz"]
    assert json.loads((results / ".sascheck-groups").read_text()) == {
        "host0": ["sas"], "host1": ["sas"]}
