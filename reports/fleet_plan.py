"""Which results files are one host, decided for a fleet of any size in bounded memory.

The decision is model.merge_measured's, merge_engines' and flag_claimed_names' (the rules
merging.py states for hosts in memory), taken here over every file's ``Header`` kept in a
private scratch database (scratch.py), so a controller holds a
few megabytes of it whether the fleet has 10,000 hosts or 100,000 (issue 52):

- a host's scan and iotest results (two or more sascheck files of one key, one with
  measurements) are one unit, shown by the newest;
- an oscap result joins the sascheck unit of its key, else (neither named by the inventory)
  the one sascheck host whose name starts with its short name, where one of the two has no
  domain; the newest such file is kept;
- each unit is shown by its newest sascheck file (else its newest), and a host name claimed
  by shown files of more than one key is said to be.

Units come in the order of their first file, as the files were given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .merging import claim_problems
from .scratch import blob, scratch_db, text

BATCH = 2048  # headers written at once


@dataclass(slots=True)
class Unit:
    """The files that make one row of the page, and what the fleet as a whole says of it."""
    files: list[str]
    problems: list[str] = field(default_factory=list)
    unreadable: str = ""  # why its one file could not be read the first time: not again
    places: list[int] = field(default_factory=list)  # each file's place as given

    @property
    def first(self) -> int:
        """The place of its first file: where its row goes among equal ones."""
        return min(self.places)


@dataclass(slots=True)
class _Shown:
    """What claim_problems reads of the file that shows a unit."""
    name: str
    inventory: str
    claimed: str
    key: str = ""
    scanned_at: str = ""


_SCHEMA = """
CREATE TABLE files (
    idx INTEGER PRIMARY KEY,  -- the file's place as given
    path BLOB NOT NULL, source TEXT NOT NULL, name BLOB NOT NULL, inventory BLOB NOT NULL,
    claimed BLOB NOT NULL, scanned_at BLOB NOT NULL, measured INTEGER NOT NULL,
    unreadable BLOB NOT NULL,
    key BLOB NOT NULL, lname BLOB NOT NULL, short BLOB NOT NULL, claimed_l BLOB NOT NULL,
    unit INTEGER NOT NULL,  -- the idx of the file whose unit this file is in
    ours INTEGER NOT NULL DEFAULT 0,  -- a sascheck file an oscap file may join
    shown INTEGER NOT NULL DEFAULT 0
);
"""


class FleetPlan:
    """Headers added in the order of the files, then ``plan()``, then ``units()``."""

    def __init__(self) -> None:
        self._db = scratch_db(_SCHEMA)
        self._pending: list[tuple[Any, ...]] = []
        self._claims: dict[str, int] = {}
        self.count = 0  # files added
        self.units_count = 0

    def add(self, header: Any) -> None:
        """A fleet_read.Header (its path, source, names, scan time, measured, unreadable)."""
        lname = header.name.strip().lower()
        self._pending.append((
            self.count, blob(header.path), header.source, blob(header.name),
            blob(header.inventory), blob(header.claimed), blob(header.scanned_at),
            int(header.measured), blob(header.unreadable), blob(header.key), blob(lname),
            blob(lname.split(".", 1)[0]), blob((header.claimed or header.name).strip().lower()),
            self.count))
        self.count += 1
        if len(self._pending) >= BATCH:
            self._flush()

    def _flush(self) -> None:
        self._db.executemany("INSERT INTO files (idx, path, source, name, inventory, claimed, "
                             "scanned_at, measured, unreadable, key, lname, short, claimed_l, "
                             "unit) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", self._pending)
        self._pending = []

    def plan(self) -> None:
        self._flush()
        db = self._db
        db.execute("BEGIN")
        db.execute("UPDATE files SET ours = 1 WHERE source = 'sascheck' AND unreadable = x''")
        db.execute("CREATE INDEX by_key ON files (key, ours)")
        self._measured_groups()
        db.execute("CREATE INDEX by_short ON files (short, ours)")
        self._pair_engines()
        db.execute("CREATE INDEX by_unit ON files (unit)")
        # Each unit's shown file: a sascheck one before oscap's, the newest, the first given.
        db.execute("""
            WITH ranked AS (SELECT idx, ROW_NUMBER() OVER (
                PARTITION BY unit ORDER BY source = 'sascheck' DESC, scanned_at DESC,
                source = 'oscap', idx) AS place FROM files)
            UPDATE files SET shown = 1 WHERE idx IN (SELECT idx FROM ranked WHERE place = 1)""")
        self._claims = {text(claimed): count for claimed, count in db.execute(
            "SELECT claimed_l, COUNT(DISTINCT key) FROM files WHERE shown = 1 AND "
            "claimed_l != x'' GROUP BY claimed_l HAVING COUNT(DISTINCT key) > 1")}
        db.execute("COMMIT")
        self.units_count = db.execute("SELECT COUNT(DISTINCT unit) FROM files").fetchone()[0]

    def _measured_groups(self) -> None:
        """A key's sascheck files with measurements among them: one unit, the newest's."""
        keys = [key for (key,) in self._db.execute(
            "SELECT key FROM files WHERE ours = 1 GROUP BY key "
            "HAVING COUNT(*) >= 2 AND MAX(measured) = 1")]
        for key in keys:
            members = self._db.execute("SELECT idx, scanned_at FROM files WHERE ours = 1 AND "
                                       "key = ? ORDER BY idx", (key,)).fetchall()
            newest = max(members, key=lambda member: member[1])[0]
            self._db.execute("UPDATE files SET unit = ?, ours = (idx = ?) WHERE ours = 1 AND "
                             "key = ?", (newest, newest, key))

    def _pair_engines(self) -> None:
        """Each oscap file into the unit of the sascheck file it is one host with
        (merging.pairs_of's rule). The oscap files are read as the query gives them; the
        moves are made after (only oscap files move, none of them a unit others join)."""
        joined = []
        theirs = self._db.execute("""
            SELECT o.idx, o.inventory, o.lname, o.short,
                (SELECT c.unit FROM files c WHERE c.ours = 1 AND c.key = o.key
                 ORDER BY c.scanned_at DESC, c.idx LIMIT 1)
            FROM files o WHERE o.source = 'oscap' ORDER BY o.idx""")
        for idx, inventory, lname, short, by_key in theirs:
            if by_key is not None:
                joined.append((by_key, idx))
            elif not inventory:
                candidates = self._db.execute(
                    "SELECT key, unit, scanned_at FROM files WHERE ours = 1 AND short = ? "
                    "AND inventory = x'' AND (? OR instr(lname, x'2e') = 0) ORDER BY idx",
                    (short, b"." not in lname)).fetchall()
                if len({key for key, _, _ in candidates}) == 1:
                    joined.append((max(candidates, key=lambda c: c[2])[1], idx))
        self._db.executemany("UPDATE files SET unit = ? WHERE idx = ?", joined)

    def units(self) -> Iterator[Unit]:
        """Every unit, in the order of its first file; its files in the order
        merge_measured and merge_engines take them."""
        rows = self._db.execute("""
            SELECT f.unit, f.idx, f.path, f.unreadable, f.shown, f.name, f.inventory, f.claimed
            FROM files f JOIN (SELECT unit, MIN(idx) AS first FROM files GROUP BY unit) u
                ON f.unit = u.unit
            ORDER BY u.first, f.source = 'oscap', f.idx""")
        current: int | None = None
        files: list[str] = []
        places: list[int] = []
        unreadable = ""
        shown: _Shown | None = None
        for unit, idx, path, why, is_shown, name, inventory, claimed in rows:
            if unit != current:
                if current is not None:
                    yield self._unit(files, places, unreadable, shown)
                current, files, places, unreadable, shown = unit, [], [], text(why), None
            files.append(text(path))
            places.append(idx)
            if is_shown:
                shown = _Shown(text(name), text(inventory), text(claimed))
        if current is not None:
            yield self._unit(files, places, unreadable, shown)

    def read_again(self, take_out: Callable[[int], None]) -> Iterator[Unit]:
        """The units a first reading of each file alone got wrong: several files, or
        something the fleet says of the host (a claimed name). ``take_out`` is called with
        the place of each of their files first, so what was kept of it goes."""
        for unit in self.units():
            if len(unit.files) > 1 or unit.problems:
                for place in unit.places:
                    take_out(place)
                yield unit

    def _unit(self, files: list[str], places: list[int], unreadable: str,
              shown: _Shown | None) -> Unit:
        assert shown is not None, "every unit has its shown file"
        return Unit(files, claim_problems(shown, self._claims),
                    unreadable if len(files) == 1 else "", places)

    def close(self) -> None:
        self._db.close()


def plan_units(headers: Iterable[Any]) -> FleetPlan:
    plan = FleetPlan()
    for header in headers:
        plan.add(header)
    plan.plan()
    return plan
