"""The fleet page's host rows, kept on disk until the page is written (issue 52).

A row is a few hundred bytes of JSON; 100,000 of them held as Python dicts were most of a
controller's memory. Each is written to a private scratch database (scratch.py) with the
few fields the page sorts and counts by; the page then reads them back worst first, one at
a time, and what it needs of all of them at once (how many hosts claim a name) is one
query.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .scratch import blob, scratch_db, text

BATCH = 1024  # rows written at once

_SCHEMA = """
CREATE TABLE rows (
    id INTEGER PRIMARY KEY,
    seq INTEGER NOT NULL,  -- the place of the host's first file: equal rows keep it
    high INTEGER NOT NULL, medium INTEGER NOT NULL, low INTEGER NOT NULL,
    unscored INTEGER NOT NULL, score REAL NOT NULL, name BLOB NOT NULL,
    lname BLOB NOT NULL, controllers INTEGER NOT NULL, body TEXT NOT NULL
);
CREATE INDEX by_seq ON rows (seq);
"""


class RowStore:
    def __init__(self) -> None:
        self._db = scratch_db(_SCHEMA)
        self._pending: list[tuple[Any, ...]] = []
        self.count = 0

    def add(self, row: dict[str, Any], seq: int) -> None:
        """A matrix row (fleet.host_row's, compacted) of the host whose first file is the
        ``seq``th given."""
        high, medium, low = row["f"]
        self._pending.append((seq, high, medium, low, row["sc"] is None,
                              row["sc"] or 0, blob(row["n"]), blob(row["n"].lower()),
                              bool(row.get("i")), json.dumps(row, separators=(",", ":"))))
        self.count += 1
        if len(self._pending) >= BATCH:
            self._flush()

    def _flush(self) -> None:
        self._db.executemany("INSERT INTO rows (seq, high, medium, low, unscored, score, name, "
                             "lname, controllers, body) VALUES (?,?,?,?,?,?,?,?,?,?)",
                             self._pending)
        self._pending = []

    def remove(self, seq: int) -> list[dict[str, Any]]:
        """Take out the rows of ``seq`` (a file found to be part of a host of several):
        what they were."""
        self._flush()
        taken = [json.loads(body) for (body,) in self._db.execute(
            "SELECT body FROM rows WHERE seq = ?", (seq,))]
        self._db.execute("DELETE FROM rows WHERE seq = ?", (seq,))
        self.count -= len(taken)
        return taken

    def claims(self) -> dict[str, int]:
        """Each name (lower case) that results outside a fleet directory give to more than
        one host, and how many (failing.not_for_limit's count)."""
        self._flush()
        return {text(lname): count for lname, count in self._db.execute(
            "SELECT lname, COUNT(*) FROM rows WHERE controllers = 0 GROUP BY lname "
            "HAVING COUNT(*) > 1")}

    def worst_first(self) -> Iterator[dict[str, Any]]:
        """The rows ordered as the page lists them: most high, then medium, then low
        failures, then the lowest score (a host with nothing judged after those with one),
        then by name; equal rows in the order they came."""
        self._flush()
        for (body,) in self._db.execute("SELECT body FROM rows ORDER BY high DESC, "
                                        "medium DESC, low DESC, unscored, score, name, seq, id"):
            yield json.loads(body)

    def close(self) -> None:
        self._db.close()
