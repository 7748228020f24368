"""Regular expressions written by the scanned host, run without backtracking.

tuned's ``cpuinfo_regex``/``uname_regex`` and multipath.conf's ``vendor``/``product`` come
from the host, and Python's ``re`` backtracks: ``(a+)+$``, ``(x|x)*y`` or ``(?:a|a)*y``
against a long enough subject would hold a scan for hours, and no syntactic guard catches
every such shape. RE2 (google-re2) matches in time linear in the subject and refuses what
it cannot do that way (back-references, look-around), which is then reported, not run.
"""

from __future__ import annotations

import functools

import re2

MAX_PATTERN = 4096
# Where RE2's DFA runs out of memory it falls back to an NFA whose time is the pattern's
# size times the subject's: past this product a match would hold a scan for minutes, so it
# is refused (tuned's own regexes are tens of characters, cpuinfo at most a few MiB).
MAX_WORK = 1 << 28
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every refused expression to stderr
_OPTIONS.max_mem = 8 << 20  # a compiled program larger than this is refused, not built


class HostRegexError(ValueError):
    """The expression is not one RE2 can run (or is too large)."""


@functools.lru_cache(maxsize=1024)
def search(pattern: str, subject: str, multiline: bool = False) -> bool:
    """Whether ``pattern`` matches anywhere in ``subject`` (Python's ``re.search``). Cached:
    thousands of tuned units with one cpuinfo_regex are matched once."""
    if len(pattern) > MAX_PATTERN:
        raise HostRegexError(f"longer than {MAX_PATTERN} characters")
    if len(pattern) * len(subject) > MAX_WORK:
        raise HostRegexError(f"a {len(pattern)}-character expression over {len(subject)} "
                             "characters is too costly to match")
    try:
        compiled = re2.compile(("(?m)" if multiline else "") + pattern, _OPTIONS)
    except re2.error as exc:
        message = exc.args[0] if exc.args else exc
        if isinstance(message, bytes):
            message = message.decode("utf-8", "replace")
        raise HostRegexError(str(message)) from None
    return compiled.search(subject) is not None
