"""``dmsetup table --target multipath`` and ``dmsetup status --target multipath``: how the
kernel has grouped each map's paths right now, and which paths have failed.

The kernel writes both lines (drivers/md/dm-mpath.c, multipath_status)::

    mpatha: 0 209715200 multipath 1 queue_if_no_path 1 alua 2 1 service-time 0 2 2 \\
        8:16 1 1 8:64 1 1 service-time 0 2 2 8:32 1 1 8:80 1 1
    mpatha: 0 209715200 multipath 2 0 0 0 2 1 A 0 2 2 8:16 A 0 0 1 8:64 A 0 0 1 \\
        E 0 2 2 8:32 A 0 0 1 8:80 F 1 0 1

Table: ``<#features> <features> <#hw handler words> <handler> <#groups> <next group>``,
then per group ``<selector> <#selector args> <args> <#paths> <#args per path>`` and per path
``<major:minor> <args>``. Status: the same counts, per group a state (A active, E enabled,
D disabled) before the selector's, and per path ``<major:minor> <A|F> <fail count> <args>``.
Each count says how many words follow, so selectors' own arguments need no knowledge here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_WORDS = 65536


class DmTableError(ValueError):
    """A line that is not a multipath table or status line as the kernel writes it."""


@dataclass
class PathGroup:
    paths: list[str] = field(default_factory=list)  # major:minor
    state: str = ""  # A, E, D (status only)
    failed: list[str] = field(default_factory=list)  # paths marked F (status only)


@dataclass
class MultipathMap:
    name: str
    hw_handler: str = ""
    groups: list[PathGroup] = field(default_factory=list)


class _Words:
    def __init__(self, words: list[str]) -> None:
        self.words, self.at = words, 0

    def take(self) -> str:
        if self.at >= len(self.words):
            raise DmTableError("the line ends early")
        self.at += 1
        return self.words[self.at - 1]

    def count(self) -> int:
        word = self.take()
        if not (word.isascii() and word.isdigit()) or int(word) > MAX_WORDS:
            raise DmTableError(f"{word!r} is not a count")
        return int(word)

    def skip(self, number: int) -> list[str]:
        return [self.take() for _ in range(number)]


def _split(line: str) -> tuple[str, _Words] | None:
    name, sep, rest = line.partition(": ")
    words = rest.split() if sep else []
    if len(words) < 3 or words[2] != "multipath":
        return None
    return name.strip(), _Words(words[3:])


def parse_tables(text: str) -> dict[str, MultipathMap]:
    maps: dict[str, MultipathMap] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        split = _split(line)
        if split is None:
            continue
        name, words = split
        try:
            words.skip(words.count())  # features
            handler = words.skip(words.count())
            groups, _ = words.count(), words.take()
            found = MultipathMap(name, handler[0] if handler else "")
            for _ in range(groups):
                words.take()  # path selector
                words.skip(words.count())
                paths, args = words.count(), words.count()
                group = PathGroup()
                for _ in range(paths):
                    group.paths.append(words.take())
                    words.skip(args)
                found.groups.append(group)
        except DmTableError as exc:
            raise DmTableError(f"line {number}: {exc}") from None
        maps[name] = found
    return maps


def parse_status(text: str, maps: dict[str, MultipathMap]) -> None:
    """Add each group's state and the failed paths to ``maps`` (from parse_tables)."""
    for number, line in enumerate(text.splitlines(), start=1):
        split = _split(line)
        if split is None or split[0] not in maps:
            continue
        name, words = split
        try:
            words.skip(words.count())  # queue_io, pg_init_count
            words.skip(words.count())  # hardware handler
            groups, _ = words.count(), words.take()
            for index in range(groups):
                state = words.take()
                words.skip(words.count())
                paths, args = words.count(), words.count()
                group = maps[name].groups[index] if index < len(maps[name].groups) else None
                for _ in range(paths):
                    path, active = words.take(), words.take()
                    words.skip(1 + args)  # fail count, selector's info
                    if group is not None and active == "F":
                        group.failed.append(path)
                if group is not None:
                    group.state = state
        except DmTableError as exc:
            raise DmTableError(f"line {number}: {exc}") from None
