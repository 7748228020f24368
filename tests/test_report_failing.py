"""A rule's hosts (issue 38): `report --failing RULE` prints the failing hosts one a line, as
`ansible-playbook --limit @FILE` takes them, and `--csv` writes the matrix for a
spreadsheet, a hostile value kept from running as a formula."""

from __future__ import annotations

import csv

from sascheck.cli import main

from .support.hosts import BASELINE_SETS, sas_host
from .support.lab import require
from .support.remedy import ansible_available, limited_hosts
from .test_reports import _scan_json

THP_ON = "[always] madvise never"


def _fleet(tmp_path):
    files = []
    for name, thp in (("sasgrid01", THP_ON), ("sasgrid02", None), ("sasgrid03", THP_ON)):
        changes = {"thp_enabled": thp} if thp else {}
        root = sas_host(tmp_path / f"root-{name}", extra_files={"/etc/hostname": f"{name}\n"},
                        **changes)
        files.append(_scan_json(root, BASELINE_SETS, tmp_path / f"{name}.json"))
    return files


def test_failing_hosts_feed_ansible_limit(tmp_path, capsys):
    require(None if ansible_available() else "ansible-playbook is not installed", "ansible")
    files = _fleet(tmp_path)
    assert main(["report", "--failing", "thp_disabled", *map(str, files)]) == 0
    listed = capsys.readouterr().out
    assert listed.splitlines() == ["sasgrid01", "sasgrid03"]
    limit = tmp_path / "failing.txt"
    limit.write_text(listed)
    hosts = limited_hosts(tmp_path, "[sas]\nsasgrid01\nsasgrid02\nsasgrid03\n", limit)
    assert sorted(hosts) == ["sasgrid01", "sasgrid03"]  # ansible lists in its own order


def test_csv_matrix_keeps_host_values_from_running_as_formulas(tmp_path):
    files = _fleet(tmp_path)
    hostile = tmp_path / "hostile.json"
    text = files[1].read_text().replace('"hostname": "sasgrid02"',
                                        '"hostname": "=HYPERLINK(\\"http://x\\")"')
    hostile.write_text(text)
    out = tmp_path / "matrix.csv"
    assert main(["report", "--csv", str(out), str(files[0]), str(hostile)]) == 0
    rows = list(csv.DictReader(out.read_text().splitlines()))
    assert {row["host"] for row in rows} == {"sasgrid01", "'=HYPERLINK(\"http://x\")"}
    thp = [row for row in rows if row["host"] == "sasgrid01" and row["rule"] == "thp_disabled"]
    assert thp[0]["result"] == "fail" and "always" in thp[0]["actual"]


def test_a_name_limit_would_read_as_a_pattern_is_left_out(tmp_path, capsys):
    files = _fleet(tmp_path)
    text = files[0].read_text().replace('"hostname": "sasgrid01"', '"hostname": "sas*"')
    files[0].write_text(text)
    assert main(["report", "--failing", "thp_disabled", *map(str, files)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["sasgrid03"]
    assert "left out 'sas*': not a plain host name for --limit" in err
