"""The command line: output formats, exit codes, clear one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from sascheck.cli import main

SCHEMA = json.loads((Path(__file__).parent.parent / "reports/result-schema.json").read_text())
EXAMPLES = Path(__file__).parent.parent / "examples/roots"


def test_scan_writes_valid_json_and_exits_2_on_failures(tmp_path, capsys):
    out = tmp_path / "r.json"
    status = main(["scan", "--root", str(EXAMPLES / "rhel6-defaults"), "--json", str(out),
                   "--set", "sas_data_dirs=/sasdata"])
    assert status == 2
    data = json.loads(out.read_text())
    jsonschema.validate(data, SCHEMA)
    assert data["schema"] == "sascheck-result/1"
    assert data["host"]["hostname"] == "sasprod01"
    table = capsys.readouterr().out
    assert "✘ fail" in table and "sas_fs_type" in table


def test_compliant_example_exits_0_and_json_to_stdout(capsys):
    status = main(["scan", "--root", str(EXAMPLES / "rhel8-tuned-sas"), "--json", "-",
                   "--set", "sas_data_dirs=/sasdata", "--set", "sas_accounts=sas"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)  # the table went to stderr
    assert status == 0
    verdicts = {rule["id"]: rule["result"] for rule in data["rules"]}
    # Every rule that applies to this bare-metal host passes (the KVM host's do not apply);
    # throughput is measured by sascheck iotest only.
    assert verdicts.pop("thp_enabled_on_kvm_host") == "notapplicable"
    assert verdicts.pop("kvm_guest_disks_direct") == "notapplicable"
    assert verdicts.pop("sas_fs_throughput") == "notchecked"
    assert set(verdicts.values()) == {"pass"}
    assert data["summary"]["pass"] == len(verdicts) and data["summary"]["fail"] == 0
    assert "sascheck sasgrid07" in captured.err


USAGE_ERRORS = [
    (["scan", "--set", "no_such=1"], "unknown site value 'no_such'"),
    (["scan", "--set", "read_ahead_min_kb=lots"], "read_ahead_min_kb must be a whole number"),
    (["scan", "--set", "storage_cache_protected=maybe"], "must be true or false"),
    (["scan", "--set", "sas_data_dirs=relative/path"], "needs absolute paths"),
    (["scan", "--set", "justaname"], "expected NAME=VALUE"),
    (["scan", "--profile", "nope"], "unknown profile 'nope'"),
    (["scan", "--root", "/does/not/exist"], "is not a directory"),
    (["scan", "--role", "mainframe"], "invalid choice"),
    (["explain", "nope"], "unknown rule 'nope'"),
]
def _exit_code(argv: list[str]) -> int:
    """main()'s status, whether it returns it or argparse raises SystemExit."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.mark.parametrize(("argv", "message"), USAGE_ERRORS)
def test_usage_errors_exit_1_with_one_clear_line(argv, message, capsys):
    assert _exit_code(argv) == 1
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_a_bug_in_a_check_shows_its_traceback_and_its_own_status(monkeypatch, capsys):
    """Issue 47: any KeyError became a usage error, so a programming error inside a check
    printed 'sascheck: error: typo_in_a_check' and exit 1, like a mistake of the user's.
    What the user can mend is a UserInputError; anything else is a bug: its traceback, a
    line saying so, and status 70 (EX_SOFTWARE), as the usage errors above keep theirs."""
    from sascheck.scanner import checks

    def broken(params, facts, values):
        return {}["typo_in_a_check"]

    monkeypatch.setitem(checks.CHECKS, "sysctl_value", broken)
    root = Path(__file__).resolve().parent.parent / "examples/roots/rhel8-tuned-sas"
    assert _exit_code(["scan", "--root", str(root), "--set",
                       "sas_data_dirs=/sasdata"]) == 70
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "KeyError: 'typo_in_a_check'" in err
    assert "internal error: a bug in sascheck" in err
    assert "sascheck: error: typo_in_a_check" not in err


def test_unwritable_json_destination(tmp_path, capsys):
    status = main(["scan", "--root", str(EXAMPLES / "kvm-host"), "--quiet", "--json",
                   str(tmp_path / "missing-dir" / "r.json")])
    assert status == 1
    assert "cannot write" in capsys.readouterr().err


def test_rules_and_explain(capsys):
    assert main(["rules"]) == 0
    listing = capsys.readouterr().out
    assert "thp_disabled_at_boot" in listing
    assert main(["explain", "thp_disabled"]) == 0
    text = capsys.readouterr().out
    assert "25%" in text and "Red Hat, Optimizing RHEL for SAS 9.2 (2011), §5.3" in text
    assert main(["explain", "sas_fs_type"]) == 0
    text = capsys.readouterr().out
    assert ("site values: allowed_fs_types, allowed_shared_data_fs_types, "
            "allowed_work_fs_types, sas_data_dirs") in text
    assert "fix: manual: A file system's type cannot change in place" in text
    assert "Fix (bash):" not in text


@pytest.mark.parametrize("columns", [60, 80, 200])
def test_rules_never_cut_an_id_on_a_narrow_terminal(columns, catalogue):
    """Issue 38: an 80-column pipe (cron mail, a plain ssh session) showed
    `barrier_requires_pr…`; an id is what a person copies into explain, fix and --rule."""
    import os
    import subprocess
    import sys

    listing = subprocess.run([sys.executable, "-m", "sascheck", "rules"], capture_output=True,
                             text=True, check=True,
                             env={**os.environ, "COLUMNS": str(columns)}).stdout
    words = set(re.findall(r"[a-z0-9_]+", listing))
    assert set(catalogue.rules) <= words
    assert "\u2026" not in listing  # rich's ellipsis: nothing was cut
    assert max(len(line.rstrip()) for line in listing.splitlines()) <= columns


def test_explain_takes_a_prefix_or_the_xccdf_id_and_shows_the_fix(capsys):
    assert main(["explain", "xccdf_org.sascheck.content_rule_read_ahead"]) == 0
    by_xccdf = capsys.readouterr().out
    assert main(["explain", "read_ah"]) == 0
    assert capsys.readouterr().out == by_xccdf
    assert by_xccdf.startswith("read_ahead: ")
    # its own reason for its step, not THP's (issue 65)
    assert ("Fix step: override (after the tuned profile, whose [disk] readahead sets each "
            "disk's read-ahead as tuned starts)") in by_xccdf
    assert "Fix (bash):" in by_xccdf and "sascheck fix --format bash --rule read_ahead" in by_xccdf
    assert "ansible-playbook -i HOST, sascheck-fix.yml --tags read_ahead" in by_xccdf
    assert main(["explain", "thp_"]) == 1
    err = capsys.readouterr().err
    assert "could be thp_defrag_disabled, thp_disabled" in err


def test_tailor_names_the_profile_and_its_next_command_runs(tmp_path, capsys):
    import os
    import shlex
    import shutil
    import subprocess

    from sascheck.cli import INSTALLED_DATASTREAM

    from .support.oscap import DATASTREAM

    if shutil.which("oscap") is None:
        pytest.skip("oscap is not installed")
    from tests.support.example_roots import EXAMPLE_VALUES, EXAMPLES

    EXAMPLES["rhel8-tuned-sas"](tmp_path / "host")
    tailoring = tmp_path / "t.xml"
    assert main(["tailor", "--root", str(tmp_path / "host"), "-o", str(tailoring),
                 *[f"--set={v}" for v in EXAMPLE_VALUES["rhel8-tuned-sas"]]]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == f"{tailoring}: tailored profile " \
                       "xccdf_org.sascheck.content_profile_default_tailored"
    command = shlex.split(lines[1].removeprefix("next: "))
    command = [str(DATASTREAM) if arg == INSTALLED_DATASTREAM else arg for arg in command]
    ran = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "OSCAP_PROBE_ROOT": str(tmp_path / "host")})
    assert ran.returncode in (0, 2), ran.stderr
    assert (tmp_path / "arf.xml").stat().st_size > 0


def test_rules_values_lists_every_site_value_with_its_default(capsys, catalogue):
    assert main(["rules", "--values"]) == 0
    listing = capsys.readouterr().out
    for name, variable in catalogue.variables.items():
        assert re.search(rf"^{name}  {variable.type}  default: ", listing, re.M), name
    assert "read_ahead_min_kb  integer  default: 2048" in listing


def test_help_ends_with_examples_exit_codes_and_where_the_site_values_are(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "examples:" in text and "exit status:" in text
    assert "sascheck rules --values" in text
    for code in ("0", "1", "2", "3"):
        assert re.search(rf"^  {code}  ", text, re.M), code
    assert "exits 4" in text  # a written fix script's refusal


def test_a_host_that_is_not_rhel_says_nothing_was_judged_in_a_line(tmp_path, capsys):
    """Issue 65: not 29 '[1]' rows and "no score of 0 judged rules", but one line and why, and
    an exit status of its own (4) that a pipeline cannot take for compliant; the JSON keeps
    every rule's verdict."""
    root = tmp_path / "debian"
    (root / "etc").mkdir(parents=True)
    (root / "etc/os-release").write_text(
        'ID=debian\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')
    assert main(["scan", "--root", str(root), "--json", str(tmp_path / "r.json")]) == 4
    out = " ".join(capsys.readouterr().out.split())
    assert "nothing judged: none of the" in out and "(exit status 4)" in out
    assert "this host is Debian GNU/Linux 12 (bookworm)" in out
    assert "notapplicable │" not in out and "[1]" not in out
    rules = json.loads((tmp_path / "r.json").read_text())["rules"]
    assert rules and {rule["result"] for rule in rules} == {"notapplicable"}


def test_scan_help_lists_the_catalogues_profiles(capsys, catalogue):
    """Issue 66: --help said "default or xtremio" after viya3 came."""
    with pytest.raises(SystemExit):
        main(["scan", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "rule profile: " + ", ".join(sorted(catalogue.profiles)) in said
