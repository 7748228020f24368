"""Malformed rules and profiles name file, line and field; hostile roots give per-rule
errors with reasons, never a traceback; a scan writes nothing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sascheck.rules import CatalogueError, load_catalogue
from sascheck.rules.loader import RULES_DIR
from tests.support.rootbuilder import RootBuilder

from .support.hosts import tree_digest


@pytest.fixture
def rules_copy(tmp_path: Path) -> Path:
    target = tmp_path / "rules"
    shutil.copytree(RULES_DIR, target, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return target


def _error_for(rules_dir: Path) -> str:
    with pytest.raises(CatalogueError) as info:
        load_catalogue(rules_dir)
    return str(info.value)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_bad_severity_names_file_line_and_field(rules_copy):
    _edit(rules_copy / "read_ahead.yml", "severity: high", "severity: urgent")
    message = _error_for(rules_copy)
    line = next(n for n, text in enumerate((rules_copy / "read_ahead.yml").read_text()
                                           .splitlines(), 1) if text.startswith("severity"))
    assert f"read_ahead.yml:{line}: field 'severity':" in message
    assert "'urgent' is not one of" in message


def test_unknown_check_parameter_is_named(rules_copy):
    _edit(rules_copy / "thp_disabled.yml", "  setting: enabled", "  settting: enabled")
    message = _error_for(rules_copy)
    assert "thp_disabled.yml:" in message and "check" in message
    assert "settting" in message or "'setting' is a required property" in message


def test_yaml_syntax_error_has_a_line(rules_copy):
    (rules_copy / "vm_dirty_ratio.yml").write_text("title: x\n  bad: [unclosed\n")
    message = _error_for(rules_copy)
    assert "vm_dirty_ratio.yml:2" in message and "invalid YAML" in message


def test_rule_referring_to_a_missing_site_value(rules_copy):
    _edit(rules_copy / "vm_dirty_ratio.yml", "value_from: dirty_ratio", "value_from: dirty")
    assert "field 'check.value_from': 'dirty' is not a integer site value" in \
        _error_for(rules_copy)


@pytest.mark.parametrize(("replacement", "said"), [
    ("value_from: dirty_ratio\n  value: 40", "give exactly one of value_from or value"),
    ("value: forty", "field 'check.value': 'forty' is not of type 'integer'"),
    ("compare: equal", "field 'check': give exactly one of value_from or value"),  # neither
])
def test_a_sysctl_rule_names_a_site_value_or_states_a_number(rules_copy, replacement, said):
    _edit(rules_copy / "vm_dirty_ratio.yml", "value_from: dirty_ratio", replacement)
    message = _error_for(rules_copy)
    assert "vm_dirty_ratio.yml:" in message and said in message, message


def test_an_at_boot_rule_for_a_key_whose_kernel_default_is_unknown(rules_copy):
    """A boot that sets nothing leaves the kernel's default: without it both engines would
    judge "unknown" (a fail read from absence). The loader names the field and the table."""
    _edit(rules_copy / "dirty_ratio_at_boot.yml", "key: vm.dirty_ratio",
          "key: vm.dirty_expire_centisecs")
    message = _error_for(rules_copy)
    assert "dirty_ratio_at_boot.yml:" in message and "field 'check.key'" in message
    assert "KERNEL_SYSCTL_DEFAULTS" in message


def test_bad_file_name(rules_copy):
    shutil.copy(rules_copy / "read_ahead.yml", rules_copy / "Read-Ahead.yml")
    assert "Read-Ahead.yml: rule file names must be lower-case ids" in _error_for(rules_copy)


def test_profile_errors(rules_copy):
    profile = rules_copy / "profiles" / "xtremio.yml"
    _edit(profile, "read_ahead_min_kb: 16384", "read_ahead_min_kb: fast")
    line = profile.read_text().splitlines().index("  read_ahead_min_kb: fast") + 1
    assert f"xtremio.yml:{line}: field 'values.read_ahead_min_kb'" in _error_for(rules_copy)
    _edit(profile, "read_ahead_min_kb: fast", "read_ahead_kb: 1")
    assert "unknown site value 'read_ahead_kb'" in _error_for(rules_copy)
    _edit(profile, "extends: default", "extends: xtremio")
    assert "extends itself" in _error_for(rules_copy)
    _edit(profile, "extends: xtremio", "extends: default\nrules: [thp_disabled, nope]")
    assert "field 'rules.1': unknown rule 'nope'" in _error_for(rules_copy)


def test_several_errors_reported_together(rules_copy):
    _edit(rules_copy / "read_ahead.yml", "severity: high", "severity: 3")
    _edit(rules_copy / "sas_fs_type.yml", "severity: high", "severity: 4")
    message = _error_for(rules_copy)
    assert "read_ahead.yml" in message and "sas_fs_type.yml" in message


# -- hostile roots -------------------------------------------------------------------------

def _hostile_root(path: Path) -> Path:
    root = RootBuilder(path)
    root.disk("sdb", scheduler="\x00\x01\x02garbage", read_ahead_kb=None)
    root.file("/sys/devices/pci0000:00/0000:00:1f.2/host0/target0:0:0/0:0:0:0/block/sdb/queue/"
              "read_ahead_kb", "lots\n")
    root.symlink("/sys/block/loopy", "/sys/block/loopy2").symlink("/sys/block/loopy2",
                                                                  "/sys/block/loopy")
    root.mount("/dev/sda", "/", "xfs", "rw")
    root.mount("/dev/sdb", "/sas\nwork", "xfs", "rw,noatime")
    root.mount("/dev/mapper/ghost", "/sasghost", "xfs", "rw,noatime")
    root.mount("server:/export", "/sasnfs", "nfs4", "rw,noatime")
    root.write_mounts()
    with open(path / "proc/mounts", "a") as mounts:
        mounts.write("short line\n\x00\x00\n")
    root.file("/sys/kernel/mm/transparent_hugepage/enabled", b"\xff\xfe\x00")
    root.directory("/sys/kernel/mm/transparent_hugepage/defrag")  # a directory, not a file
    root.directory("/proc/sys/vm/dirty_ratio")
    root.file("/etc/tuned/active_profile", "a\n")
    root.file("/etc/tuned/a/tuned.conf", "[main]\ninclude=a\n")
    root.file("/opt/sas/SASHome/SASFoundation/9.4/sasv9.cfg",
              '-CONFIG "!SASROOT/sasv9.cfg"\n-WORK "/sas\nwork"\n-WORK\n-UTILLOC (\n')
    root.directory("/etc/udev/rules.d/evil.rules")
    root.file("/etc/default/grub", 'GRUB_CMDLINE_LINUX="unterminated\n')
    os.mkfifo(path / "etc/rc.local")
    return path


def test_hostile_root_gives_reasons_not_tracebacks(tmp_path, scan, capsys):
    from sascheck.cli import main

    root = _hostile_root(tmp_path / "root")
    result = scan(root, "sas_data_dirs=/sasghost,/sasnfs", "sas_utilloc_dirs=/sas\nwork",
                  baseline_sets=False)
    by_id = result["by_id"]
    assert by_id["thp_disabled"]["result"] == "error"
    assert "binary content" in by_id["thp_disabled"]["message"]
    assert by_id["thp_defrag_disabled"]["result"] == "error"
    assert by_id["vm_dirty_ratio"]["result"] == "error"
    assert "not a regular file" in by_id["vm_dirty_ratio"]["message"]
    read_ahead = {e["subject"]: e for e in by_id["read_ahead"]["evidence"]}
    assert by_id["read_ahead"]["result"] == "error"
    assert "not a number" in read_ahead["/sas\nwork (UTILLOC) on sdb"]["note"]
    assert read_ahead["/sasghost (DATA)"]["note"].startswith("/dev/mapper/ghost: no matching")
    # NFS read-ahead is the mount's bdi (found through mountinfo), which this root lacks.
    assert read_ahead["/sasnfs (DATA)"]["result"] == "error"
    assert read_ahead["/sasnfs (DATA)"]["note"].startswith("/sys/class/bdi/")
    assert read_ahead["/sasnfs (DATA)"]["note"].endswith("missing")
    assert by_id["tuned_profile"]["result"] == "fail"
    assert "include cycle" in by_id["tuned_profile"]["evidence"][-1]["note"]
    assert any("line" in p for p in result["problems"])
    assert any("loop" in p for p in result["problems"])
    # And through the command line: exit 2 (findings), no traceback.
    status = main(["scan", "--root", str(root), "--quiet", "--set", "sas_data_dirs=/sasghost"])
    assert status == 2
    assert "Traceback" not in capsys.readouterr().err


def test_empty_root_is_all_errors_or_notapplicable(tmp_path, scan):
    result = scan(tmp_path, baseline_sets=False)
    allowed = {"error", "notapplicable", "notchecked", "fail"}
    assert {rule["result"] for rule in result["rules"]} <= allowed
    assert result["by_id"]["sas_fs_type"]["result"] == "error"  # no /proc/mounts
    assert "/proc/mounts: missing" in result["by_id"]["sas_fs_type"]["message"]


def test_scanning_is_read_only(host, scan, tmp_path):
    root = host()
    _hostile_root(tmp_path / "hostile")
    before = (tree_digest(root), tree_digest(tmp_path / "hostile"))
    scan(root)
    scan(tmp_path / "hostile", "sas_data_dirs=/sasghost")
    assert (tree_digest(root), tree_digest(tmp_path / "hostile")) == before


def test_a_thp_file_without_a_choice_is_not_understood_not_unreadable(host, scan):
    """A THP file that was read but has no bracketed choice says so; "unreadable" is kept
    for files that could not be read."""
    rule = scan(host(thp_enabled="always madvise never"))["by_id"]["thp_disabled"]
    assert (rule["result"], rule["actual"]) == ("error", "not understood")
    assert rule["evidence"][0]["actual"] == "not understood"
    assert "no [selected] value in 'always madvise never'" in rule["message"]


def test_build_without_bash_is_one_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    """The build asks bash how it parses the fix pieces: with no bash on PATH (a minimal
    container), the command says so in one line and writes nothing."""
    from sascheck.cli import main

    monkeypatch.setenv("PATH", str(tmp_path / "no-bash-here"))
    output = tmp_path / "ds.xml"
    assert main(["build", "--output", str(output)]) == 1
    error = capsys.readouterr().err
    assert error == ("sascheck: error: building the data stream needs bash on PATH (it asks "
                     "bash which fix pieces it parses alike when indented)\n")
    assert not output.exists()
