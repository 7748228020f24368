"""Private scratch databases: what a report must know of every host of a fleet at once is
kept on disk, not in the controller's memory (issue 52).

SQLite's "" database is a file of its own, removed when the connection closes: no name
another process could open, nothing left behind. Its page cache is bounded, so a fleet of
100,000 hosts costs the controller what one of 10,000 does. Text is stored as bytes
(``blob``): a path or a name may hold any byte (os.listdir's surrogate escapes), which a
TEXT column refuses, and bytes sort as Python sorts the text they encode.
"""

from __future__ import annotations

import sqlite3


def scratch_db(schema: str) -> sqlite3.Connection:
    db = sqlite3.connect("", isolation_level=None)
    for pragma in ("journal_mode=OFF", "synchronous=OFF", "cache_size=-2048",
                   "temp_store=FILE"):
        db.execute(f"PRAGMA {pragma}")
    db.executescript(schema)
    return db


def blob(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def text(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")
