"""Issue 63: the bash fix reads tuned's reapply_sysctl_exclude as tuned does. tuned 2.27
matches each key against each pattern with Python's fnmatch.fnmatch (plugin_sysctl.py, the
patterns split by GlobalConfig.get_list), where only "*", "?" and "[...]" are operators; the
library translates each pattern to an ERE matched by the C library's regexec. Its verdicts
are compared with Python's own fnmatch, and its work is counted in instructions
(valgrind's callgrind), never timed: bash's [[ == ]] read "*(*(*(?)))X" as nested extended
globs and backtracked for minutes on a 25-character key."""

from __future__ import annotations

import fnmatch
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from .support.lab import require

LIBRARY = Path(__file__).resolve().parent.parent / "remediations/templates/bash/lib/sysctl.sh"
KEYS = ("vm.swappiness", "vm.dirty_background_ratio", "kernel.sched_migration_cost_ns",
        "net.core.somaxconn", "a^b", "a]b", "a\\b", "[x", "a.b", "a!b", "a*b")
PATTERNS = (
    "vm.swap*", "kernel.*", "vm.*", "*", "**", "?m.swappiness", "vm.swappines?",
    "[uv]m.swappiness", "[!v]m.swappiness", "[!u]m.swappiness", "[^v]m.swappiness",
    "[a-z]m.*", "[!a-z]m.*", "vm.swap[p]iness", "vm.swap[!p]iness", "vm.s*a*p*",
    # what bash reads as extended globs, and fnmatch as plain characters
    "vm.(swap)*", "vm.swa+(p)iness", "vm.swa@(p)piness", "vm.swa!(x)ppiness",
    "*(*(*(?)))X", "*(*(*(*(?))))X", "vm|kernel", "vm.swap{p,x}iness",
    # regular-expression characters, literal to fnmatch
    "vm.swappiness$", "^vm.swappiness", "vm\\.swappiness", "vm.swap\\*", "a^b", "a]b",
    "a\\b", "a.b",
    # fnmatch's brackets: unclosed, empty, a leading "]" or "!", a literal "^"
    "vm.swap[", "vm.swap[]", "vm.swap[]iness", "[[]x", "[[]vm*", "a[^]b", "a[]]b", "a[\\]b",
    "a[!]b", "a[^x]b", "[\\v]m.*", "a[*]b", "a[?]b",
)


def _bash_verdicts(pairs: list[tuple[str, str]]) -> list[bool]:
    script = [f"source {shlex.quote(str(LIBRARY))}", "warn() { :; }"]
    script += [f"if fnmatch_matches {shlex.quote(key)} {shlex.quote(pattern)}; then echo 1; "
               "else echo 0; fi" for key, pattern in pairs]
    ran = subprocess.run(["bash", "-c", "\n".join(script)], capture_output=True, text=True,
                         timeout=120, check=True)
    return [word == "1" for word in ran.stdout.split()]


def test_the_library_matches_as_pythons_fnmatch():
    pairs = [(key, pattern) for key in KEYS for pattern in PATTERNS]
    assert [(pair, found) for pair, found in zip(pairs, _bash_verdicts(pairs))
            if found != fnmatch.fnmatchcase(*pair)] == []


def _instructions(pattern: str) -> int:
    """Instructions bash runs to source the library and match one long key (callgrind:
    the same count whatever else the machine is doing)."""
    key = "vm.dirty_background_ratio"
    script = (f"source {shlex.quote(str(LIBRARY))}; warn() {{ :; }}; "
              f"fnmatch_matches {key} {shlex.quote(pattern)}; echo $?")
    # A limit for the test's sake only (the old matcher took minutes): the assertion is
    # on the count.
    ran = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                          "bash", "-c", script], capture_output=True, text=True, timeout=300)
    counts = [int(n.replace(",", "")) for n in re.findall(r"Collected : ([0-9,]+)", ran.stderr)]
    assert ran.stdout.strip() == "1" and counts, ran.stderr  # no match, and counted
    return sum(counts)


def test_a_pattern_that_made_bash_backtrack_costs_what_a_plain_one_does():
    require(None if shutil.which("valgrind") else "needs valgrind", "counting instructions")
    plain = _instructions("kernel.*")
    for hostile in ("*(*(*(?)))X", "*(*(*(*(*(?)))))X", "*?*?*?*?*?*?*?*?*?*?*?*?X",
                    "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*X"):
        # translating and matching a pattern of n characters is a few hundred thousand
        # instructions a character; the old backtracking match ran into the billions
        assert _instructions(hostile) <= plain + 400_000 * len(hostile), hostile


@pytest.mark.parametrize("pattern", ["x" * 257, "[[:alpha:]]m.*"])
def test_a_pattern_it_cannot_read_is_said_and_matches_nothing(pattern):
    script = (f"source {shlex.quote(str(LIBRARY))}; warn() {{ printf '%s\\n' \"$*\" >&2; }}; "
              f"fnmatch_matches vm.x {shlex.quote(pattern)}; echo $?")
    ran = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert ran.stdout.strip() == "1"
    assert "reapply_sysctl_exclude pattern is not read" in ran.stderr
    assert pattern not in ran.stderr  # host text never reaches the terminal
