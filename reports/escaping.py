"""Escaping for text that came from a host: what a terminal, an XML 1.0 document or a
UTF-8 file can carry safely.

Host strings (host names, mount points, reasons quoting file content) may hold escape
sequences that move a terminal's cursor or retitle its window, characters XML 1.0 cannot
represent, lone surrogates from a JSON ``\\udc80`` and bidirectional overrides that make
text read differently from what it is. Each is shown as a visible escape instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# C0 and C1 controls, DEL, lone surrogates, and the bidirectional embedding and isolate
# controls ("trojan source").
_TERMINAL_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
# What XML 1.0 cannot carry at all (tab, newline, carriage return are fine), plus the
# surrogates that UTF-8 cannot encode.
_XML_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: str) -> str:
    """One line of text that cannot drive the terminal: controls become ``\\xNN``."""
    return _TERMINAL_UNSAFE.sub(_visible, text)


def for_terminal_lines(text: str) -> str:
    """Text of several lines (a failure's reason, a dry run) whose line breaks stay line
    breaks, each line through ``for_terminal``."""
    return "\n".join(for_terminal(line) for line in text.split("\n"))


def for_xml(text: str) -> str:
    """Text XML 1.0 (and UTF-8) can carry: what it cannot becomes ``\\xNN``."""
    return _XML_UNSAFE.sub(_visible, text)


def for_utf8(text: str) -> str:
    """Text that encodes as UTF-8: lone surrogates (from JSON escapes) become ``\\uDXXX``."""
    return re.sub("[\ud800-\udfff]", _visible, text)


def deep(value: Any, escape: Callable[[str], str]) -> Any:
    """``value`` with ``escape`` applied to every string in it, keys included."""
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, dict):
        return {deep(key, escape): deep(item, escape) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [deep(item, escape) for item in value]
    return value
