"""The first screen of a scan (issue 24 items 4 and 9): a score only over judged rules that
says how many were not judged, a reason many rules share said once at the top, problems
named there, and a terminal table legible at 80 columns (cron mail)."""

from __future__ import annotations

import json
import re
import shutil

from lxml import html as lxml_html

from sascheck.cli import main

from .support.hosts import sas_host


def _scan(tmp_path, capsys, monkeypatch, columns: int, *sets: str) -> tuple[dict, str, str]:
    """Scan a host with no SAS mounts or configuration: a table, JSON and HTML."""
    monkeypatch.setenv("COLUMNS", str(columns))
    root = sas_host(tmp_path / "root", filesystems=[], sas_local_cfg=None)
    shutil.rmtree(root / "opt/sas")  # no SAS installation to discover directories from
    main(["scan", "--root", str(root), *[f"--set={s}" for s in sets],
          "--json", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html")])
    out = capsys.readouterr().out
    return (json.loads((tmp_path / "r.json").read_text()), out,
            (tmp_path / "r.html").read_text())


def test_a_shared_reason_is_one_banner_and_the_score_is_not_green(tmp_path, capsys,
                                                                    monkeypatch):
    result, out, page = _scan(tmp_path, capsys, monkeypatch, 120)
    unjudged = [r for r in result["rules"] if r["result"] == "notchecked"]
    reasons = {r["message"] for r in unjudged}
    shared = next(m for m in reasons if sum(r["message"] == m for r in unjudged) >= 3)
    document = lxml_html.fromstring(page)
    banner = document.find_class("banner")
    assert len(banner) == 1
    assert sum(shared in p.text_content() for p in banner[0].iter("p")) == 1
    cards = [a for a in document.iter("article") if a.get("data-result") == "notchecked"]
    told = [a for a in cards if "See the note at the top." in a.text_content()]
    assert len(told) >= 3 and not any(shared in a.text_content() for a in told)
    score = next(div for div in document.find_class("big")
                 if div.getparent().text_content().startswith("Score"))
    assert "score-good" not in score.get("class")
    counts = result["summary"]
    judged = counts.get("pass", 0) + counts.get("fail", 0) + counts.get("error", 0)
    assert f"of {judged} judged rules pass; {len(unjudged)} not judged" in page
    assert f"of {judged} judged rules; {len(unjudged)} not judged" in out
    note = next(n for n in result["sas_discovery_notes"] if "SAS DATA" in n)
    assert note in " ".join(banner[0].text_content().split())
    assert out.index(f"note: {note[:40]}") < out.index("sas_fs_noatime")


def test_problems_are_named_at_the_top_of_the_table_and_the_page(tmp_path, capsys,
                                                                 monkeypatch):
    result, out, page = _scan(tmp_path, capsys, monkeypatch, 120, "sas_data_dirs=/sasdta")
    problem = next(p for p in result["problems"] if "/sasdta" in p)
    assert out.index("problem: DATA directory /sasdta") < out.index("sas_fs_noatime")
    banner = lxml_html.fromstring(page).find_class("banner")[0].text_content()
    assert problem in " ".join(banner.split())


def test_at_80_columns_rule_ids_stay_whole_and_lines_fit(tmp_path, capsys, monkeypatch):
    result, out, _ = _scan(tmp_path, capsys, monkeypatch, 80, "sas_data_dirs=/sasdata")
    lines = out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    for rule in result["rules"]:
        assert any(re.search(rf"\s{re.escape(rule['id'])}\s", f" {line} ") for line in lines), \
            rule["id"]
    assert not any("│" in line for line in lines)  # a list, not a squeezed table


def _table_through(tmp_path, env: dict[str, str], tty: bool) -> str:
    """The scan table as a terminal (a pseudo-terminal) or a pipe (cron mail) receives it."""
    import os
    import pty
    import subprocess
    import sys

    root = sas_host(tmp_path / f"root-{tty}-{len(env)}")
    argv = [sys.executable, "-m", "sascheck", "scan", "--root", str(root),
            "--set=sas_data_dirs=/sasdata"]
    environment = {**{k: v for k, v in os.environ.items() if k not in ("NO_COLOR",
                                                                         "FORCE_COLOR")},
                   "TERM": "xterm-256color", "COLUMNS": "80", **env}
    if not tty:
        return subprocess.run(argv, capture_output=True, text=True, env=environment,
                              timeout=120).stdout
    leader, follower = pty.openpty()
    process = subprocess.Popen(argv, stdout=follower, stderr=follower, env=environment)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_colour_only_on_a_terminal_and_never_with_no_color(tmp_path):
    """Issue 24, item 9: cron mail and pipes get plain text, NO_COLOR is honoured
    (no-color.org), and a terminal without it gets colour."""
    escape = "\x1b["
    assert escape in _table_through(tmp_path, {}, tty=True)  # the control: colour works
    assert escape not in _table_through(tmp_path, {"NO_COLOR": "1"}, tty=True)
    piped = _table_through(tmp_path, {}, tty=False)
    assert escape not in piped and "thp_disabled_at_boot" in piped
