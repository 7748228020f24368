"""`scan -v` says what the scan read and how it judged (issue 67: a successor debugging a
verdict on a customer's snapshot had only the evidence line): each file and listing, where
a link took it, what could not be read, and each rule's verdict, on stderr, escaped for the
terminal, since every path and value in it came from the host."""

from __future__ import annotations

import json
import logging
import os

from sascheck.cli import main

from .support.hosts import BASELINE_SETS, sas_host

SETS = [arg for value in BASELINE_SETS for arg in ("--set", value)]
TITLE = "\x1b]0;pwned\x07"  # an escape sequence that retitles a terminal window


def _scan(root, *extra, capsys):
    status = main(["scan", "--root", str(root), *SETS, "--quiet", *extra])
    return status, capsys.readouterr()


def test_verbose_says_what_was_read_and_each_verdict(tmp_path, capsys):
    root = sas_host(tmp_path / "root", dirty_ratio=20)
    status, said = _scan(root, "-v", "--json", str(tmp_path / "r.json"), capsys=capsys)
    lines = said.err.splitlines()
    assert "debug: read /proc/mounts: " in said.err
    assert any(line.startswith("debug: listed /sys/block: ") for line in lines)
    assert any(line.startswith("debug: read /etc/tuned/active_profile: ") for line in lines)
    judged = json.loads((tmp_path / "r.json").read_text())["rules"]
    for rule in judged:  # one line a rule, with the verdict the results file has
        assert any(line.startswith(f"debug: {rule['id']}: {rule['result']}: ")
                   for line in lines), rule["id"]
    assert status == 2  # dirty ratio 20 fails, as without -v


def test_without_verbose_nothing_is_logged_and_no_handler_is_left(tmp_path, capsys):
    root = sas_host(tmp_path / "root")
    _scan(root, "-v", capsys=capsys)
    _, said = _scan(root, capsys=capsys)
    assert "debug:" not in said.err
    assert logging.getLogger("sascheck").handlers == []


def test_a_link_the_host_planted_is_shown_escaped(tmp_path, capsys):
    """A link's target is host text: where it holds a terminal escape, the log shows it
    as \\x1b and \\x07, and the terminal never receives the sequence."""
    root = sas_host(tmp_path / "root")
    mounts = root / "proc/mounts"
    (root / f"proc/{TITLE}mounts").write_bytes(mounts.read_bytes())
    mounts.unlink()
    os.symlink(f"/proc/{TITLE}mounts", mounts)
    _, said = _scan(root, "-v", capsys=capsys)
    assert "debug: read /proc/mounts (at /proc/\\x1b]0;pwned\\x07mounts): " in said.err
    assert "\x1b" not in said.err and "\x07" not in said.err
