"""Regular expressions written by the scanned host, run without backtracking.

tuned's ``cpuinfo_regex``/``uname_regex`` and multipath.conf's ``vendor``/``product`` come
from the host, and Python's ``re`` backtracks: ``(a+)+$``, ``(x|x)*y`` or ``(?:a|a)*y``
against a long enough subject would hold a scan for hours, and no syntactic guard catches
every such shape. RE2 (google-re2) matches in time linear in the subject and refuses what
it cannot do that way (back-references, look-around), which is then reported, not run.
"""

from __future__ import annotations

import functools
from typing import Any

import re2

MAX_PATTERN = 4096
# Where RE2's DFA runs out of memory it falls back to an NFA whose time is the pattern's
# size times the subject's: past this product a match would hold a scan for minutes, so it
# is refused (tuned's own regexes are tens of characters, cpuinfo at most a few MiB).
MAX_WORK = 1 << 28
# What one scan may spend on host-written expressions in all (issue 44: 3,000 hostile
# multipath -t entries held a scan past 60 s): the pattern-by-subject steps of its
# searches, and how many expressions may need a large program. An expression is compiled
# first within SMALL_PROGRAM (a refusal costs about a millisecond) and only within
# LARGE_PROGRAM (about 45 ms to refuse ``\pL{1000}``) while LARGE_COMPILES last.
SCAN_WORK = 1 << 32
SMALL_PROGRAM = 256 << 10
LARGE_PROGRAM = 8 << 20  # a compiled program larger than this is refused, not built
LARGE_COMPILES = 32


def _options(max_mem: int) -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused expression to stderr
    options.max_mem = max_mem
    return options


_SMALL, _LARGE = _options(SMALL_PROGRAM), _options(LARGE_PROGRAM)


class HostRegexError(ValueError):
    """The expression is not one RE2 can run (or is too large)."""


class _Budget:
    """What the current scan has left (begin_scan starts each scan afresh)."""
    work = SCAN_WORK
    large = LARGE_COMPILES


def begin_scan() -> None:
    """A new scan: a full budget (a worker scans one host after another)."""
    _Budget.work, _Budget.large = SCAN_WORK, LARGE_COMPILES


def _message(exc: re2.error) -> str:
    message = exc.args[0] if exc.args else exc
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    return str(message)


@functools.lru_cache(maxsize=4096)
def _compile_small(pattern: str) -> Any:
    """The compiled expression, or why RE2 refuses it within a small program (remembered
    either way: a refused pattern is not compiled again on every lookup)."""
    try:
        return re2.compile(pattern, _SMALL)
    except re2.error as exc:
        return HostRegexError(_message(exc))


_large: dict[str, Any] = {}  # pattern -> compiled or refused within LARGE_PROGRAM


def _compiled(pattern: str) -> Any:
    compiled = _compile_small(pattern)
    if not isinstance(compiled, HostRegexError) or "too large" not in str(compiled):
        return compiled
    if pattern not in _large:
        if _Budget.large <= 0:  # not remembered: the next scan has a budget again
            return HostRegexError("too large, and this scan has already compiled "
                                  f"{LARGE_COMPILES} large host expressions")
        _Budget.large -= 1
        if len(_large) >= 256:
            _large.clear()
        try:
            _large[pattern] = re2.compile(pattern, _LARGE)
        except re2.error as exc:
            _large[pattern] = HostRegexError(_message(exc))
    return _large[pattern]


@functools.lru_cache(maxsize=1024)
def search(pattern: str, subject: str, multiline: bool = False) -> bool:
    """Whether ``pattern`` matches anywhere in ``subject`` (Python's ``re.search``). Cached:
    thousands of tuned units with one cpuinfo_regex are matched once."""
    if len(pattern) > MAX_PATTERN:
        raise HostRegexError(f"longer than {MAX_PATTERN} characters")
    work = len(pattern) * len(subject)
    if work > MAX_WORK:
        raise HostRegexError(f"a {len(pattern)}-character expression over {len(subject)} "
                             "characters is too costly to match")
    if work > _Budget.work:
        raise HostRegexError("this scan has spent its budget for matching host expressions")
    _Budget.work -= work
    compiled = _compiled(("(?m)" if multiline else "") + pattern)
    if isinstance(compiled, HostRegexError):
        raise HostRegexError(str(compiled))
    return compiled.search(subject) is not None
