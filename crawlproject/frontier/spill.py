"""Queued URLs past the memory frontier's bound, kept on disk, best first.

A bounded frontier is right for focus (docs/methods.md §1: MAX_BUFFER), but a plain
spider's requests must not be lost without a word (Heritrix and Frontera
spill to disk too). When the memory frontier is full, its lowest-ranked
item moves here instead of being dropped, and the best items come back as
memory drains.

An item is stored as it is (its 16-byte rank first, then the rest of the
memory record: crawlproject.frontier.items): its payload stays in memory,
referenced from the item, because the links of one page share one payload.
The memory frontier keeps one invariant that makes the order exact: while
anything is spilled, every item in memory ranks at least as high as the
best spilled one.

The store is SQLite with no journal and no fsync: it is scratch space,
under JOBDIR when there is one (the JOBDIR's frontier journal, not this
file, makes a crawl resumable) and in a temporary folder otherwise; it is
deleted when the frontier closes, and a store a killed crawl left behind is
deleted when the crawl resumes from its JOBDIR (:func:`remove_orphans`).
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path

from crawlproject.frontier.items import RANK

_SCHEMA = """
CREATE TABLE spill (fp INTEGER PRIMARY KEY, rank BLOB NOT NULL, item BLOB NOT NULL);
CREATE INDEX spill_rank ON spill (rank);
"""
#: Rows buffered in memory before one transaction writes them.
_WRITE_BATCH = 4096


_PREFIX = "frontier-spill-"


def remove_orphans(folder: Path) -> int:
    """Delete the spill stores a killed crawl left in *folder* (its JOBDIR):
    scratch a resumed crawl never reads. Returns how many."""
    orphans = [path for path in folder.glob(f"{_PREFIX}*") if path.is_dir()]
    for path in orphans:
        shutil.rmtree(path, ignore_errors=True)
    return len(orphans)


class SpillStore:
    """A disk queue of frontier items keyed by fingerprint, ordered by rank."""

    def __init__(self, folder: str | Path | None = None):
        self.folder = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=folder))
        self.path = self.folder / "spill.sqlite"
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.executescript(_SCHEMA)
        self._pending: dict[int, bytes] = {}  # fp → item, not yet written
        self._count = 0
        self._best: bytes | None = None  # the best rank stored (None: unknown or empty)
        self.written_bytes = 0  #: item bytes written so far (disk cost per spilled URL)

    def __len__(self) -> int:
        return self._count

    def put(self, fp: int, item: bytes) -> None:
        """Store *item* (not already stored under *fp*)."""
        self._pending[fp] = item
        self._count += 1
        rank = item[:RANK]
        if self._count == 1 or (self._best is not None and rank < self._best):
            self._best = rank
        if len(self._pending) >= _WRITE_BATCH:
            self._write()

    def best(self) -> bytes | None:
        """The rank of the best stored item, or None when empty."""
        if not self._count:
            return None
        if self._best is None:
            self._write()
            row = self._db.execute("SELECT rank FROM spill ORDER BY rank LIMIT 1").fetchone()
            self._best = bytes(row[0])
        return self._best

    def rank(self, fp: int) -> bytes | None:
        """The rank of the item stored under *fp*, or None."""
        if not self._count:
            return None
        item = self._pending.get(fp)
        if item is not None:
            return item[:RANK]
        row = self._db.execute("SELECT rank FROM spill WHERE fp = ?", (fp,)).fetchone()
        return None if row is None else bytes(row[0])

    def remove(self, fp: int) -> bytes | None:
        """Take the item stored under *fp* out; return it (None: not stored)."""
        item = self._pending.pop(fp, None)
        if item is None:
            row = self._db.execute("SELECT item FROM spill WHERE fp = ?", (fp,)).fetchone()
            if row is None:
                return None
            item = bytes(row[0])
            self._db.execute("DELETE FROM spill WHERE fp = ?", (fp,))
        self._count -= 1
        if self._best is not None and item[:RANK] == self._best:
            self._best = None
        return item

    def take(self, count: int) -> list[tuple[int, bytes]]:
        """Take the *count* best items out, best first: ``(fp, item)``."""
        if count <= 0 or not self._count:
            return []
        self._write()
        rows = self._db.execute("SELECT fp, item FROM spill ORDER BY rank LIMIT ?", (count,)).fetchall()
        self._db.execute("BEGIN")
        self._db.executemany("DELETE FROM spill WHERE fp = ?", ((fp,) for fp, _ in rows))
        self._db.execute("COMMIT")
        self._count -= len(rows)
        self._best = None
        return [(fp, bytes(item)) for fp, item in rows]

    def items(self) -> list[tuple[int, bytes]]:
        """Every stored item, in no particular order (for saving and tools)."""
        self._write()
        return [(fp, bytes(item)) for fp, item in self._db.execute("SELECT fp, item FROM spill")]

    def disk_bytes(self) -> int:
        self._write()
        return sum(path.stat().st_size for path in self.folder.iterdir())

    def close(self) -> None:
        self._db.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _write(self) -> None:
        if not self._pending:
            return
        rows = [(fp, item[:RANK], item) for fp, item in self._pending.items()]
        self._db.execute("BEGIN")
        self._db.executemany("INSERT OR REPLACE INTO spill VALUES (?, ?, ?)", rows)
        self._db.execute("COMMIT")
        self.written_bytes += sum(len(item) for _, _, item in rows)
        self._pending = {}
