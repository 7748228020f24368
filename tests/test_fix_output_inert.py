"""Host data is never code in what a fix writes: udev rules (read by udev's own grammar), bash
comments, tuned sections and results files a fix is made from, each attack performed against
the real consumer and shown inert."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from sascheck.cli import main
from sascheck.remediations.generate import generate
from sascheck.remediations.rendering import FixInput
from tests.support.rootbuilder import RootBuilder

from .support.hosts import HostSpec, SasFs, build_host, sas_host

HOSTILE_NAME = 'x", RUN+="/bin/touch /tmp/sascheck-pwned'
MARKER = "sascheck-pwned"


# -- udev: the rules as udev's own grammar reads them ---------------------------------------
# systemd's udev-rules.c: KEY or KEY{ATTR}, an operator, a double-quoted value in which only
# \" does not end it; pairs separated by commas. Anything else makes the line invalid.
_UDEV_PAIR = re.compile(r'\s*([A-Z_]+(?:\{[^}]*\})?)\s*(==|!=|\+=|-=|:=|=)\s*"((?:\\"|[^"])*)"\s*')
SAFE_KEYS = {"ACTION", "SUBSYSTEM", "ENV{DEVTYPE}", "KERNEL", "ENV{DM_NAME}", "ENV{DM_UUID}",
             "ATTRS{wwid}", "ENV{ID_SERIAL}",
             "ATTR{queue/scheduler}", "ATTR{queue/read_ahead_kb}"}


def udev_keys(text: str) -> list[list[tuple[str, str, str]]]:
    """Every rule line as (key, operator, value) triples, as udev parses it."""
    rules = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        pairs, position = [], 0
        while position < len(line):
            match = _UDEV_PAIR.match(line, position)
            assert match, f"line {number} is not valid udev syntax: {line!r}"
            pairs.append(match.groups())
            position = match.end()
            if position < len(line):
                assert line[position] == ",", f"line {number}: {line!r}"
                position += 1
        rules.append(pairs)
    return rules


def assert_udev_inert(text: str) -> None:
    rules = udev_keys(text)
    assert rules, text
    for pairs in rules:
        keys = {key for key, _, _ in pairs}
        assert keys <= SAFE_KEYS, f"unexpected keys {keys - SAFE_KEYS} in {pairs}"
        assert all("RUN" not in value and '"' not in value for _, _, value in pairs)


def _hostile_storage_host(path: Path) -> Path:
    """A SAS file system on an LV whose device-mapper name would close the udev match, over
    a SCSI disk whose wwid (supplied by the storage) does the same."""
    root = build_host(path, HostSpec(filesystems=[SasFs("sasdata", "/sasdata")]))
    builder = RootBuilder(path)
    builder.disk("sdx", wwid=f"naa.{HOSTILE_NAME}", scheduler="[none] mq-deadline")
    builder.dm("dm-9", HOSTILE_NAME.replace("/", "_"), ["sdx"], uuid="LVM-safeuuid0123")
    root.mount(f"/dev/mapper/{HOSTILE_NAME.replace('/', '_')}", "/saswork", "xfs", "rw,relatime")
    root.write_mounts()
    return path


def test_udev_rules_never_carry_hostile_names(tmp_path):
    root = _hostile_storage_host(tmp_path / "root")
    sets = ["--set", "sas_data_dirs=/sasdata", "--set", "sas_work_dirs=/saswork"]
    rules = tmp_path / "99.rules"
    assert main(["fix", "--format", "udev", "--root", str(root), "--all", *sets,
                 "-o", str(rules)]) == 0
    text = rules.read_text()
    assert_udev_inert(text)
    # The hostile LV still gets its settings, matched by its device-mapper UUID instead.
    assert 'ENV{DM_UUID}=="LVM-safeuuid0123"' in text
    assert "cannot carry safely" in text


def test_udev_rules_from_a_doctored_results_file(tmp_path):
    root = sas_host(tmp_path / "root")
    results = tmp_path / "r.json"
    main(["scan", "--root", str(root), "--set", "sas_data_dirs=/sasdata", "--quiet",
          "--json", str(results)])
    data = json.loads(results.read_text())
    for filesystem in data["storage"]:
        for layer in filesystem["layers"]:
            layer["dm_name"] = HOSTILE_NAME
            layer["dm_uuid"] = "a*b"  # a glob would match other devices
            layer["wwid"] = "\nRUN+=\"/bin/sh\""
            layer["device"] = 'sd"b'
    results.write_text(json.dumps(data))
    rules = tmp_path / "99.rules"
    status = main(["fix", "--format", "udev", "--from", str(results), "--all", "-o", str(rules)])
    assert status == 1 and not rules.exists()  # nothing safe to match: refused, said why


def test_bash_script_writes_only_inert_udev_rules(tmp_path):
    root = _hostile_storage_host(tmp_path / "root")
    script = tmp_path / "fix.sh"
    assert main(["fix", "--format", "bash", "--root", str(root), "--rule", "io_tuning_at_boot",
                 "--all", "--set", "sas_data_dirs=/sasdata", "--set", "sas_work_dirs=/saswork",
                 "-o", str(script)]) == 0
    completed = subprocess.run(["bash", str(script)], env={**os.environ,
                               "SASCHECK_ROOT": str(root)}, capture_output=True, text=True,
                               timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert "cannot carry safely" in completed.stderr
    assert_udev_inert((root / "etc/udev/rules.d/99-sascheck-io.rules").read_text())


# -- fix --from: results files are untrusted ---------------------------------------------
@pytest.fixture
def results(tmp_path):
    root = sas_host(tmp_path / "root", thp_enabled="[always] madvise never",
                    read_ahead_kb=128)
    path = tmp_path / "results.json"
    main(["scan", "--root", str(root), "--set", "sas_data_dirs=/sasdata", "--quiet",
          "--json", str(path)])
    return path, root


@pytest.mark.parametrize("field, value", [
    (("profile",), f"default\ntouch {MARKER}"),
    (("role", "name"), "bare_metal; touch x"),
    (("values", "allowed_schedulers"), ["deadline\n[script]\nscript=/tmp/x.sh"]),
    (("values", "allowed_schedulers"), ["{{ lookup('pipe', 'touch x') }}"]),
    (("values", "read_ahead_min_kb"), "4096; touch x"),
    (("values", "unknown_value"), 1),
    (("rules",), "not a list"),
    (("storage",), 5),
])
def test_fix_from_refuses_malformed_results(results, tmp_path, capsys, field, value):
    path, _ = results
    data = json.loads(path.read_text())
    target = data
    for key in field[:-1]:
        target = target[key]
    target[field[-1]] = value
    path.write_text(json.dumps(data))
    for fmt in ("bash", "ansible", "tuned"):
        output = tmp_path / f"fix.{fmt}"
        assert main(["fix", "--format", fmt, "--from", str(path), "-o", str(output)]) == 1
        assert not output.exists()
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and "Traceback" not in error, error


def test_deeply_nested_results_are_one_line(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text('{"schema": "sascheck-result/1", "host": ' + "[" * 100000 + "]" * 100000 + "}")
    assert main(["fix", "--format", "bash", "--from", str(path), "-o", str(tmp_path / "x")]) == 1
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 1
    assert "Traceback" not in capsys.readouterr().err


def _hostile_fix_input(root_values: dict[str, object]) -> FixInput:
    """A FixInput whose free-text fields hold commands, as if validation had been bypassed:
    the templates' own escaping must still keep them inert."""
    values = {"sas_data_dirs": ["/sasdata"], "sas_work_dirs": [], "sas_utilloc_dirs": [],
              "sas_config_files": [], "read_ahead_min_kb": 2048,
              "allowed_schedulers": ["mq-deadline", "none"], "allowed_fs_types": ["xfs"],
              "allowed_tuned_profiles": ["throughput-performance"],
              "storage_cache_protected": False, "dirty_ratio": 40, **root_values}
    return FixInput(host=f"evil\ntouch {MARKER}\u2028touch {MARKER}\x85touch {MARKER}",
                    role="bare_metal", profile=f"default\ntouch {MARKER}",
                    kernel="4.18.0", values=values,
                    rule_ids=("thp_disabled", "vm_dirty_ratio", "io_tuning_at_boot"))


def test_bash_comments_carry_no_commands(catalogue, tmp_path):
    root = sas_host(tmp_path / "root", dirty_ratio=20)
    script = tmp_path / "fix.sh"
    script.write_text(generate("bash", catalogue, _hostile_fix_input({})))
    completed = subprocess.run(["bash", str(script)], cwd=tmp_path, capture_output=True,
                               text=True, env={**os.environ, "SASCHECK_ROOT": str(root)},
                               timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert not list(tmp_path.rglob(f"*{MARKER}*"))
    assert "changes made" in completed.stdout


def test_tuned_profile_has_only_its_own_sections(catalogue):
    text = generate("tuned", catalogue, _hostile_fix_input({}))
    sections = re.findall(r"^\[(\w+)\]", text, re.MULTILINE)
    assert sections == ["main", "cpu", "vm", "disk", "sysctl"]
    assert all(line.startswith("#") or MARKER not in line for line in text.splitlines())
