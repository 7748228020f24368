"""The bash library, and the host layout's variables, cut to what one script uses.

Every generated script used to carry the whole library (85 KB), so each rule's XCCDF fix,
each Ansible fix that embeds its planner, every ARF that Satellite uploads with a failed
rule's fix text, and `oscap xccdf generate report` repeated it (#45). A script now carries the
library's top-level statements (the run's set-up) and only the functions reachable from
them and from the script's own text. A name is "reached" when it appears as a word anywhere
in kept text, comments included: the library calls no function by a computed name, so that
over-approximates the calls and never drops one a run needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from .rendering import bash_library

# A definition starts at column 0 as `name() {`; a multi-line one ends at the next `}` in
# column 0 (the library's style, checked by a test against bash's own `declare -F`).
_DEFINITION = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\(\) \{(.*)$")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Chunk:
    """A piece of the library: one function (name set, with the comment above it) or a
    run of top-level statements (name None)."""
    text: str
    name: str | None = None


def _opens_body(rest: str) -> bool:
    """Whether `name() {REST` leaves the body open (a multi-line function)."""
    return rest.strip() == "" or rest.lstrip().startswith("#")


def parse(text: str) -> list[Chunk]:
    """The library as chunks whose texts, joined, are the library again."""
    chunks: list[Chunk] = []
    statements: list[str] = []
    lines = text.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        match = _DEFINITION.match(lines[index])
        if not match:
            statements.append(lines[index])
            index += 1
            continue
        comment: list[str] = []  # the comment right above a function belongs to it
        while statements and statements[-1].startswith("#"):
            comment.insert(0, statements.pop())
        end = index
        if _opens_body(match.group(2)):
            end = next((n for n in range(index + 1, len(lines))
                        if lines[n].rstrip("\n") == "}"), None) or _unclosed(match.group(1))
        if statements:
            chunks.append(Chunk("".join(statements)))
            statements = []
        chunks.append(Chunk("".join(comment + lines[index:end + 1]), match.group(1)))
        index = end + 1
    if statements:
        chunks.append(Chunk("".join(statements)))
    return chunks


def _unclosed(name: str) -> int:
    raise ValueError(f"bash library: function {name} has no closing '}}' in column 0")


@cache
def _library() -> tuple[Chunk, ...]:
    return tuple(parse(bash_library()))


def _reached(chunks: Iterable[Chunk], roots: str) -> set[str]:
    """The functions named, directly or through other kept functions, from `roots`."""
    functions = {chunk.name: chunk.text for chunk in chunks if chunk.name}
    reached: set[str] = set()
    pending = [roots]
    while pending:
        for word in set(_WORD.findall(pending.pop())):
            if word in functions and word not in reached:
                reached.add(word)
                pending.append(functions[word])
    return reached


def _statements(chunks: Iterable[Chunk]) -> str:
    return "".join(chunk.text for chunk in chunks if chunk.name is None)


def library_for(script: str) -> str:
    """The library as it stands, minus the functions neither `script` nor the library's
    own statements reach (for a whole script: order kept, so it reads as the source)."""
    chunks = _library()
    reached = _reached(chunks, script + _statements(chunks))
    return "".join(chunk.text for chunk in chunks
                   if chunk.name is None or chunk.name in reached).rstrip("\n")


def library_parts(script: str) -> tuple[str, str]:
    """For a block oscap concatenates: the functions `script` reaches (every block defines
    its own, so a later block has what it calls), and the statements a run's first block
    runs once."""
    chunks = _library()
    statements = _statements(chunks)
    reached = _reached(chunks, script + statements)
    functions = "".join(chunk.text for chunk in chunks if chunk.name in reached)
    return functions.rstrip("\n"), statements.strip("\n")


_ASSIGNED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")


def layout_for(layout: str, script: str) -> str:
    """The host layout's assignments (`LAYOUT_X=...`, a long one over several lines) of the
    variables `script` names, or a kept assignment names; any other line is kept."""
    used = set(_WORD.findall(script))
    while True:
        kept = [line for line in layout.splitlines()
                if not (match := _ASSIGNED.match(line)) or match.group(1) in used]
        named = used | set(_WORD.findall("\n".join(kept)))
        if named == used:
            return "\n".join(kept)
        used = named


# The data stream stores the library once, as XCCDF <plain-text> pieces that each rule's fix
# names with <sub> (oscap fills them in when it assembles or runs a fix, as it does site
# values): the functions every fix calls as one piece, every other function as its own, the
# statements, and the whole host layout. Without this every fix repeated its library, and
# Satellite stores every fix of every scanned rule per report (#66).
#
# oscap reads a <plain-text> as XML, not as text (src/XCCDF/benchmark.c, XCCDFE_PLAIN_TEXT:
# xmlTextReaderReadInnerXml), so `&&` would come out as `&amp;&amp;`. A piece is therefore
# one CDATA section, which that read returns verbatim with its `<![CDATA[` and `]]>`, and it
# sits where both are bash comments: its mark follows a `#`, its text starts with a line
# break and ends with a `#`. A reader that reads it as text (XML's own rules) gets the same
# script without the two markers.
SHARED = "#\x01{}\x01"  # marks where the shared piece named between the \x01s goes
COMMON_PIECE, STATEMENTS_PIECE, LAYOUT_PIECE = "common", "statements", "layout"
TUNED_PROFILES_PIECE = "tuned_profiles"  # the script's tuned profiles (remediations.generate)
CDATA_END = "]]>"


def piece_text(text: str, indent: int = 0) -> str:
    """A piece as its <plain-text> holds it (the CDATA section's content), each line
    indented as the lines around its mark are."""
    if CDATA_END in text:
        raise ValueError(f"a shared piece holds {CDATA_END!r}, which ends its CDATA section")
    pad = " " * indent
    lines = "\n".join(pad + line if line else line for line in text.split("\n"))
    return f"\n{lines}\n{pad}#"


def reached_functions(script: str) -> frozenset[str]:
    """The functions a script holding `script` reaches, its set-up's included."""
    chunks = _library()
    return frozenset(_reached(chunks, script + _statements(chunks)))


def shared_pieces(layout: str, common: frozenset[str]) -> dict[str, str]:
    """Every piece a fix may name, by name: the `common` functions (those every fix calls)
    as one, each other function as its own (named after it), the statements, the layout."""
    chunks = _library()
    pieces = {COMMON_PIECE: "".join(c.text for c in chunks if c.name in common).rstrip("\n")}
    pieces.update((f"fn_{c.name}", c.text.rstrip("\n")) for c in chunks
                  if c.name and c.name not in common)
    pieces[STATEMENTS_PIECE] = _statements(chunks).strip("\n")
    pieces[LAYOUT_PIECE] = layout
    return pieces


def shared_functions(script: str, common: frozenset[str]) -> str:
    """Marks naming the common functions and each other function `script` reaches."""
    reached = reached_functions(script)
    if not common <= reached:
        raise ValueError(f"a script leaves common functions out: {sorted(common - reached)}")
    names = [COMMON_PIECE] + [f"fn_{c.name}" for c in _library()
                              if c.name in reached - common]
    return "\n".join(SHARED.format(name) for name in names)
