"""The regular expressions sascheck applies to host text, run by RE2: linear in the subject.

Everything a scan reads comes from the host, and Python's ``re`` backtracks: ``(.*?)\\s*$``
over a line of 300,000 blanks and a letter, or ``--\\[(=*)\\[.*?\\]\\1\\]`` over an unclosed
Lua comment, took a CAS account's file past a minute of root's nightly scan (issue 63). RE2
(google-re2) runs every pattern in time linear in the subject, whatever the pattern, and
refuses at compile time what it cannot run that way (back-references, look-around), so a
module that imports this one instead of ``re`` cannot be stalled by what it reads.

The interface is the part of ``re``'s the scanner uses (``compile``, ``match``, ``search``,
``fullmatch``, ``finditer``, ``findall``, ``split``, ``sub``, ``escape`` and the flags
``IGNORECASE``, ``MULTILINE`` and ``DOTALL``), so a module reads as it did with ``re``.
Where RE2 differs: ``$`` without MULTILINE matches only at the very end (Python's also
before a final newline), ``\\Z`` is spelled ``\\z``, and ``\\s``, ``\\d`` and ``\\w`` are
ASCII classes (as the C programs whose files are read understand them).

Every call adds the length of its subject to ``WORK.characters``: RE2's time is that times a
constant of the pattern, so the tests count it to show that no parser does work out of
proportion to what it reads (tests/test_linear_parsing.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import re2

IGNORECASE = 1
MULTILINE = 2
DOTALL = 4
_INLINE = ((IGNORECASE, "i"), (MULTILINE, "m"), (DOTALL, "s"))

error = re2.error
escape = re2.escape


class Work:
    """Characters of subject handed to RE2 since the last reset (tests count it)."""
    characters = 0


WORK = Work()


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # a refused pattern is an exception, not a line on stderr
    return options


def _matchable(text: str) -> str:
    """``text`` as RE2 can take it: RE2 reads UTF-8, and a host's file names may carry
    lone surrogates (Python's surrogateescape); each becomes '?', one character for one,
    so every position is the same and groups are cut from the original text."""
    WORK.characters += len(text)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


class Match:
    """A match: group(), groups(), groupdict(), start(), end(), span() and [] as re's,
    the groups cut from the text the caller gave."""

    __slots__ = ("_names", "_spans", "string")

    def __init__(self, spans: list[tuple[int, int]], names: dict[str, int],
                 string: str) -> None:
        self._spans, self._names, self.string = spans, names, string

    def _index(self, group: int | str) -> int:
        return self._names[group] if isinstance(group, str) else group

    def span(self, group: int | str = 0) -> tuple[int, int]:
        return self._spans[self._index(group)]

    def start(self, group: int | str = 0) -> int:
        return self.span(group)[0]

    def end(self, group: int | str = 0) -> int:
        return self.span(group)[1]

    def _one(self, group: int | str) -> Any:
        begin, end = self.span(group)
        return None if begin < 0 else self.string[begin:end]

    def group(self, *groups: int | str) -> str | Any:
        if len(groups) <= 1:
            return self._one(groups[0] if groups else 0)
        return tuple(self._one(group) for group in groups)

    def __getitem__(self, group: int | str) -> str | Any:
        return self._one(group)

    def groups(self, default: Any = None) -> tuple[Any, ...]:
        found = (self._one(index) for index in range(1, len(self._spans)))
        return tuple(default if value is None else value for value in found)

    def groupdict(self, default: Any = None) -> dict[str, Any]:
        return {name: default if self._one(index) is None else self._one(index)
                for name, index in self._names.items()}


class Pattern:
    """A compiled expression; the methods of ``re.Pattern`` the scanner uses."""

    __slots__ = ("_compiled", "_names", "pattern")

    def __init__(self, pattern: str, flags: int) -> None:
        if flags & ~(IGNORECASE | MULTILINE | DOTALL):
            raise ValueError(f"unsupported flags {flags:#x}")
        inline = "".join(letter for flag, letter in _INLINE if flags & flag)
        self.pattern = pattern
        self._compiled = re2.compile(f"(?{inline}){pattern}" if inline else pattern,
                                     _options())
        self._names = dict(self._compiled.groupindex)

    @property
    def groups(self) -> int:
        return int(self._compiled.groups)

    def _wrap(self, found: Any, text: str, matched: str) -> Match | None:
        """RE2's own match where it saw the caller's text (it answers as ``Match`` does);
        else one whose groups are cut from the caller's text."""
        if found is None or matched is text:
            return found  # type: ignore[no-any-return]
        spans = [found.span(index) for index in range(self._compiled.groups + 1)]
        return Match(spans, self._names, text)

    # No ``pos``: RE2's binding encodes the whole text on every call, so a loop matching from
    # one position after another would be quadratic; such a loop is one finditer instead.
    def match(self, text: str) -> Match | None:
        matched = _matchable(text)
        return self._wrap(self._compiled.match(matched), text, matched)

    def search(self, text: str) -> Match | None:
        matched = _matchable(text)
        return self._wrap(self._compiled.search(matched), text, matched)

    def fullmatch(self, text: str) -> Match | None:
        matched = _matchable(text)
        return self._wrap(self._compiled.fullmatch(matched), text, matched)

    def finditer(self, text: str) -> Iterator[Match]:
        matched = _matchable(text)
        for found in self._compiled.finditer(matched):
            match = self._wrap(found, text, matched)
            assert match is not None
            yield match

    def findall(self, text: str) -> list[Any]:
        matched = _matchable(text)
        if matched is text:
            return list(self._compiled.findall(text))
        items: list[Any] = []
        for found in self._compiled.finditer(matched):
            match = self._wrap(found, text, matched)
            assert match is not None
            if self.groups == 0:
                items.append(match.group())
            elif self.groups == 1:
                items.append(match.groups("")[0])
            else:
                items.append(match.groups(""))
        return items

    def split(self, text: str, maxsplit: int = 0) -> list[str]:
        pieces, end = [], 0
        for number, match in enumerate(self.finditer(text), start=1):
            pieces.append(text[end:match.start()])
            pieces.extend(match.groups())
            end = match.end()
            if number == maxsplit:
                break
        pieces.append(text[end:])
        return pieces

    def sub(self, repl: Callable[[Match], str], text: str, count: int = 0) -> str:
        """Each match replaced by what ``repl`` makes of it (a function only: a template's
        escapes are not re's)."""
        pieces, end = [], 0
        for number, match in enumerate(self.finditer(text), start=1):
            pieces.append(text[end:match.start()])
            pieces.append(repl(match))
            end = match.end()
            if number == count:
                break
        pieces.append(text[end:])
        return "".join(pieces)


@functools.lru_cache(maxsize=512)
def compile(pattern: str, flags: int = 0) -> Pattern:
    return Pattern(pattern, flags)


def match(pattern: str, text: str, flags: int = 0) -> Match | None:
    return compile(pattern, flags).match(text)


def search(pattern: str, text: str, flags: int = 0) -> Match | None:
    return compile(pattern, flags).search(text)


def fullmatch(pattern: str, text: str, flags: int = 0) -> Match | None:
    return compile(pattern, flags).fullmatch(text)


def finditer(pattern: str, text: str, flags: int = 0) -> Iterator[Match]:
    return compile(pattern, flags).finditer(text)


def findall(pattern: str, text: str, flags: int = 0) -> list[Any]:
    return compile(pattern, flags).findall(text)


def split(pattern: str, text: str, maxsplit: int = 0, flags: int = 0) -> list[str]:
    return compile(pattern, flags).split(text, maxsplit)


def sub(pattern: str, repl: Callable[[Match], str], text: str, count: int = 0,
        flags: int = 0) -> str:
    return compile(pattern, flags).sub(repl, text, count)
