"""SAS configuration files (``sasv9.cfg``, ``sasv9_local.cfg``).

Sample (``!SASROOT/sasv9.cfg`` of SAS 9.4 on Linux)::

    /* DO NOT EDIT: created by the SAS Deployment Wizard */
    -CONFIG "/opt/sas/SASHome/SASFoundation/9.4/nls/en/sasv9.cfg"
    -WORK /saswork
    -UTILLOC ("/sasutil1" "/sasutil2")

Option names are case-insensitive; values may be quoted or parenthesised lists;
``/* ... */`` comments may span lines.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import linear_re as re

_COMMENT = re.compile(r"/\*.*?(\*/|$)", re.DOTALL)
_TOKEN = re.compile(r"""\s*(?:"([^"]*)"|'([^']*)'|(\()|(\))|([^\s()"']+))""")


@dataclass(frozen=True)
class SasOption:
    name: str  # upper-case, without the dash
    values: tuple[str, ...]
    line: int


def _tokens(line: str) -> list[tuple[str, bool]]:
    """(token, was_quoted) pairs; parentheses come back as bare tokens."""
    tokens: list[tuple[str, bool]] = []
    position = 0
    for match in _TOKEN.finditer(line):  # one pass: a token must start where the last ended
        if match.start() != position or match.end() == position:
            break
        position = match.end()
        double, single, opening, closing, bare = match.groups()
        if double is not None or single is not None:
            tokens.append((double if double is not None else single or "", True))
        elif opening or closing:
            tokens.append((opening or closing or "", False))
        elif bare:
            tokens.append((bare, False))
    return tokens


def parse_sas_config(text: str) -> list[SasOption]:
    # Blank out comments but keep their newlines, so line numbers stay true.
    cleaned = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    options: list[SasOption] = []
    for number, line in enumerate(cleaned.splitlines(), start=1):
        tokens = _tokens(line)
        index = 0
        while index < len(tokens):
            token, quoted = tokens[index]
            index += 1
            if quoted or not token.startswith("-") or len(token) < 2:
                continue
            name, eq, inline = token[1:].partition("=")
            values: list[str] = []
            if eq and inline:
                values.append(inline)
            elif index < len(tokens) and tokens[index][0] == "(" and not tokens[index][1]:
                index += 1
                while index < len(tokens) and not (tokens[index][0] == ")"
                                                   and not tokens[index][1]):
                    values.append(tokens[index][0])
                    index += 1
                index += 1
            elif index < len(tokens) and (tokens[index][1]
                                          or not tokens[index][0].startswith("-")):
                values.append(tokens[index][0])
                index += 1
            options.append(SasOption(name.upper(), tuple(values), number))
    return options


_SIZE = re.compile(r"^([0-9]{1,12})([KMG]?)$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def sas_size_bytes(value: str) -> int | None:
    """A SAS size option's value (``-BUFSIZE 256K``: n, nK, nM, nG, units of 1,024) in
    bytes; None for 0 (SAS chooses), MIN, MAX and what SAS would reject."""
    match = _SIZE.match(value.strip())
    if not match:
        return None
    size = int(match.group(1)) * _SIZE_UNITS[match.group(2).upper()]
    return size or None
