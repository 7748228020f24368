"""Issue 63: no host file can stall a scan. Every pattern the scanner applies to host text is
RE2's (scanner/linear_re.py: linear in the subject by construction), and every parser in
scanner/parsers/ does work in proportion to what it reads on the classic pathological
inputs: very long lines, long runs of blanks before a letter, openers never closed, deep
nesting. Work is counted, never timed: the characters handed to RE2 (its time is that
times a constant of the pattern) and the Python lines run (sys.settrace), compared across
two sizes of the same input."""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sascheck.scanner import linear_re
from sascheck.scanner.parsers import (
    boot,
    cas_config,
    dm_multipath,
    libvirt,
    lvm_metadata,
    mounts,
    multipath_conf,
    sas_config,
    selection,
    simple,
    sos_commands,
    tuned_conf,
    udev_rules,
    vxfs,
)

SCANNER = Path(__file__).resolve().parent.parent / "scanner"
CAS_READ_LIMIT = 1024 * 1024  # scanner/storage/cas_cache.py reads CAS files up to 1 MiB


def _tolerant(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """A parser may refuse what it reads (ValueError and its kin): that is an answer too."""
    def run(text: str) -> Any:
        try:
            return parse(text)
        except ValueError:
            return None
    return run


PARSERS: dict[str, Callable[[str], Any]] = {
    "grub_defaults_args": boot.grub_defaults_args,
    "bls_entry_args": boot.bls_entry_args,
    "bls_entry_field": lambda text: boot.bls_entry_field(text, "options"),
    "rpm_version_key": boot.rpm_version_key,
    "cmdline_args": boot.cmdline_args,
    "grubenv_vars": boot.grubenv_vars,
    "grub2_menu": boot.grub2_menu,
    "legacy_grub_menu": boot.legacy_grub_menu,
    "cas_lua": cas_config.lua_settings,
    "cas_shell": cas_config.shell_settings,
    "dm_tables": lambda text: dm_multipath.parse_status(text, dm_multipath.parse_tables(text)),
    "libvirt": lambda text: libvirt.parse_domain(text.encode()),
    "lvm_metadata": lvm_metadata.lv_read_ahead,
    "mounts": mounts.parse_mounts,
    "mountinfo": mounts.parse_mountinfo,
    "mount_options": mounts.split_options,
    "multipath_conf": multipath_conf.parse_multipath_conf,
    "sas_config": sas_config.parse_sas_config,
    "sas_size": sas_config.sas_size_bytes,
    "selection": selection.parse_selection,
    "cpuinfo": lambda text: (simple.cpuinfo_flags(text), simple.cpuinfo_count(text),
                             simple.cpuinfo_physical_cores(text)),
    "meminfo": simple.meminfo_kib,
    "shell_assignments": simple.shell_assignments,
    "ascii_int": simple.ascii_int,
    "lsblk_pairs": sos_commands.parse_lsblk_pairs,
    "lsblk_tree": sos_commands.parse_lsblk_tree,
    "multipath_ll": sos_commands.parse_multipath_ll,
    "dmsetup_info": sos_commands.parse_dmsetup_info,
    "sysctl_a": sos_commands.parse_sysctl_a,
    "installed_versions": sos_commands.installed_versions,
    "tuned_active": tuned_conf.parse_active_profile,
    "udev_rules": udev_rules.parse_udev_rules,
    "vxfs": vxfs.parse_tunefstab,
}

# Each file format's own openers: what its parser looks for at the start of a line or value.
PREFIXES = ("env.CAS_DISK_CACHE = '/x'", "export CAS_DISK_CACHE=/x", "-WORK /saswork",
            "options ", "GRUB_CMDLINE_LINUX=\"", "vendor \"", "KERNEL==\"", "NAME=\"",
            "kernel ", "menuentry '", "title ", "MemTotal:", "flags\t\t: ", "vm.x = ",
            "read_ahead = ", "<domain>", "0 1024 multipath ", "/dev/sda / xfs ")


def pathological(size: int) -> dict[str, str]:
    """The classic shapes of input that make a backtracking matcher, or a parser that
    rescans, do work out of proportion to their size, each about ``size`` characters."""
    blanks = {f"blanks after {prefix!r}": prefix + " " * size + "a" for prefix in PREFIXES}
    return {
        "one long line": "a" * size,
        "long run of blanks, then a letter": " " * size + "a",
        "tabs and blanks, then a letter": " \t" * (size // 2) + "a",
        **blanks,
        "unclosed Lua comments": "--[[" * (size // 4),
        "unclosed Lua comment with levels": "--[" + "=" * size,
        "Lua comment openers": "--[" * (size // 3),
        "unclosed quotes": "'" * (size // 2) + '"' * (size // 2),
        "an opening quote and blanks": "\"" + " " * size + "a",
        "unclosed braces": "{" * size,
        "deep nesting": "{" * (size // 2) + "}" * (size // 2),
        "unclosed brackets": "[" * size,
        "parentheses": "(" * (size // 2) + ")" * (size // 2),
        "many short lines": "a = b\n" * (size // 6),
        "many blank lines": "\n" * size,
        "equals signs": "=" * size,
        "backslashes": "\\" * size,
        "percent escapes": "\\x" * (size // 2),
        "octal escapes": "\\0" * (size // 2),
    }


def _regex_work(parse: Callable[[str], Any], text: str) -> int:
    linear_re.WORK.characters = 0
    parse(text)
    return linear_re.WORK.characters


def _python_lines(parse: Callable[[str], Any], text: str) -> int:
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        parse(text)
    finally:
        sys.settrace(None)
    return count


def test_no_scanner_module_applies_a_backtracking_pattern():
    """Python's re is imported nowhere in the scanner: every pattern there is RE2's."""
    offenders = []
    for path in sorted(SCANNER.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{path.relative_to(SCANNER)}:{node.lineno}" for name in names
                          if name in ("re", "regex") or name.startswith("re.")]
    assert offenders == []


def test_the_linear_matcher_refuses_what_would_backtrack_and_keeps_host_names():
    with pytest.raises(linear_re.error):
        linear_re.compile(r"(['\"])x\1")  # a back-reference: RE2 cannot run it linearly
    with pytest.raises(linear_re.error):
        linear_re.compile(r"a(?!b)")  # look-around likewise
    # a host's file name carries bytes that are not UTF-8 (surrogateescape): matched, and
    # the groups are the caller's own characters
    match = linear_re.search(r"/dev/(\S+)", "mount /dev/sd\udcffa")
    assert match is not None and match.group(1) == "sd\udcffa"


# The shapes that stalled a scan (issue 63), fed whole at the read limit; every shape is fed
# at two smaller sizes below (a parser that tokenizes 1 MiB of braces is linear but slow).
AT_THE_LIMIT = ("one long line", "long run of blanks, then a letter",
                "unclosed Lua comments", "unclosed Lua comment with levels",
                "an opening quote and blanks", *(f"blanks after {p!r}" for p in PREFIXES))


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_each_parser_does_work_in_proportion_to_its_input(name):
    parse = _tolerant(PARSERS[name])
    at_the_limit = pathological(CAS_READ_LIMIT)
    for shape in AT_THE_LIMIT:
        # RE2's work at the read limit: a bounded number of passes over the text
        text = at_the_limit[shape]
        work = _regex_work(parse, text)
        assert work <= 64 * len(text) + 4096, (shape, work, len(text))
    for shape, small in pathological(4096).items():
        large = pathological(16384)[shape]
        # Python's work: four times the input, about four times the lines run (a parser
        # that rescans from each position would run sixteen times as many)
        lines_small, lines_large = _python_lines(parse, small), _python_lines(parse, large)
        assert lines_large <= 5 * lines_small + 200, (shape, lines_small, lines_large)
        assert _regex_work(parse, large) <= 5 * _regex_work(parse, small) + 4096, shape


def test_a_hostile_cas_file_is_read_as_lua_and_the_shell_read_it():
    """The inputs of issue 63's report, whole: they are read, and what they set is said."""
    stalled = "env.CAS_DISK_CACHE = '/x'" + " " * 300_000 + "a\n"
    [setting] = cas_config.lua_settings(stalled)
    assert setting.problem == "not a plain Lua string"
    [setting] = cas_config.shell_settings("CAS_DISK_CACHE=/x" + " " * 300_000 + "a\n")
    assert setting.problem.startswith("not a literal value")
    # an unclosed block comment runs to the end of the file, as Lua's lexer reads it
    # (llex.c, read_long_string: the comment ends only at its matching close)
    unclosed = "env.CAS_DISK_CACHE = '/a'\n--[[\nenv.CAS_DISK_CACHE = '/b'\n" + "--[[" * 250_000
    assert [s.paths for s in cas_config.lua_settings(unclosed)] == [("/a",)]
    closed = "--[==[ env.CAS_DISK_CACHE = '/old' ]] still comment\n]==]\nenv.CAS_DISK_CACHE = '/c'\n"
    [setting] = cas_config.lua_settings(closed)
    assert setting.paths == ("/c",) and setting.line == 3
