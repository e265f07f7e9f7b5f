"""The memory frontier's durable copy under ``JOBDIR``: SQLite in WAL mode.

Every change to the frontier — a URL queued or raised, evicted, fetched,
refused; a payload or origin first used — is buffered, in order, and written
in one transaction each time a page is acknowledged (and when the crawl
idles or closes). A popped URL stays in the ``queue`` table until it is
acknowledged, so a lease is durable for free: after a kill, whatever was
leased is queued again. Because the buffer is written in order, a kill loses
at most a suffix of changes, and the pages whose acknowledgement is in that
suffix are exactly those in flight at the kill: they are fetched again,
nothing else is, and no URL queued before the kill is lost.

WAL with ``synchronous=NORMAL``: a transaction survives the crawl process
being killed (SIGKILL, OOM) the moment it is committed; a power cut may lose
the last ones (the OS had not written them yet).
"""

from __future__ import annotations

import pickle
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawlproject.frontier.items import HEADER

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.statscollectors import StatsCollector

    from crawlproject.frontier.items import ItemTables

_SCHEMA = """
CREATE TABLE IF NOT EXISTS queue (fp INTEGER PRIMARY KEY, item BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS fetched (fp INTEGER PRIMARY KEY, origin INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS refused (fp INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS payloads (idx INTEGER PRIMARY KEY, payload BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS origins (idx INTEGER PRIMARY KEY, origin BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS slots (idx INTEGER PRIMARY KEY, slot TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
FILE_NAME = "frontier.sqlite"
VERSION = "3"  # 3: items carry a 64-bit tie key and a download slot


class JournalError(RuntimeError):
    """The JOBDIR's frontier file cannot be used."""


class FrontierJournal:
    def __init__(self, jobdir: str | Path):
        self.path = Path(jobdir) / FILE_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._check_version()
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"{self.path} is not a crawlproject frontier ({exc}); start a new JOBDIR") from None
        self._upserts: dict[int, bytes] = {}  # fp → item, the last write wins
        self._deletes: set[int] = set()
        self._fetched: list[tuple[int, int]] = []
        self._refused: list[int] = []
        self._payloads: dict[int, bytes] = {}
        self._origins: list[tuple[int, bytes]] = []
        self._slots: list[tuple[int, str]] = []
        self._unsaved: set[int] = set()  # payload indices that cannot be pickled
        self.pending = 0

    def _check_version(self) -> None:
        row = self._db.execute("SELECT value FROM meta WHERE name = 'version'").fetchone()
        if row is None:
            self._db.execute("INSERT INTO meta VALUES ('version', ?)", (VERSION,))
        elif row[0] != VERSION:
            raise JournalError(f"{self.path} was written by another version of crawlproject; start a new JOBDIR")

    # -- changes, buffered in order ----------------------------------------------

    def queued(self, fp: int, item: bytes) -> bool:
        """Whether *item* is saved: not when its payload cannot be (its URL is
        then lost to a resumed crawl, and the caller counts it)."""
        if HEADER.unpack_from(item)[2] in self._unsaved:
            return False
        self._deletes.discard(fp)
        self._upserts[fp] = item
        self.pending += 1
        return True

    def dequeued(self, fp: int) -> None:
        """Evicted, or taken out by a claim that rewrites it."""
        self._upserts.pop(fp, None)
        self._deletes.add(fp)
        self.pending += 1

    def fetched(self, fp: int, origin: int) -> None:
        self.dequeued(fp)
        self._fetched.append((fp, origin))

    def refused(self, fp: int, url_fp: int) -> None:
        self.dequeued(fp)
        self._refused.append(url_fp)

    def payload(self, index: int, payload: Any) -> None:
        try:
            self._payloads[index] = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError, ValueError):
            self._unsaved.add(index)  # e.g. a Request whose callback is a lambda
        else:
            self._unsaved.discard(index)

    def origin(self, index: int, origin: bytes) -> None:
        self._origins.append((index, origin))

    def slot(self, index: int, slot: str) -> None:
        self._slots.append((index, slot))

    # -- writing -----------------------------------------------------------------------

    def commit(self) -> None:
        """Write everything buffered, in one transaction."""
        if not (self.pending or self._payloads or self._origins or self._slots):
            return
        db = self._db
        db.execute("BEGIN")
        try:
            if self._origins:
                db.executemany("INSERT OR REPLACE INTO origins VALUES (?, ?)", self._origins)
            if self._slots:
                db.executemany("INSERT OR REPLACE INTO slots VALUES (?, ?)", self._slots)
            if self._payloads:
                db.executemany("INSERT OR REPLACE INTO payloads VALUES (?, ?)", self._payloads.items())
            if self._deletes:
                db.executemany("DELETE FROM queue WHERE fp = ?", ((fp,) for fp in self._deletes))
            if self._upserts:
                db.executemany("INSERT OR REPLACE INTO queue VALUES (?, ?)", self._upserts.items())
            if self._fetched:
                db.executemany("INSERT OR IGNORE INTO fetched VALUES (?, ?)", self._fetched)
            if self._refused:
                db.executemany("INSERT OR IGNORE INTO refused VALUES (?)", ((fp,) for fp in self._refused))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._upserts, self._deletes, self._fetched, self._refused = {}, set(), [], []
        self._payloads, self._origins, self._slots = {}, [], []
        self.pending = 0

    def rewrite(self, items: dict[int, bytes]) -> None:
        """Replace the whole queue (after a re-score)."""
        self.commit()
        db = self._db
        db.execute("BEGIN")
        db.execute("DELETE FROM queue")
        db.executemany("INSERT INTO queue VALUES (?, ?)",
                       ((fp, item) for fp, item in items.items() if HEADER.unpack_from(item)[2] not in self._unsaved))
        db.execute("COMMIT")

    # -- reading -------------------------------------------------------------------------

    def load(self) -> dict[str, Any]:
        db = self._db
        payloads: dict[int, Any] = {}
        for index, blob in db.execute("SELECT idx, payload FROM payloads"):
            payloads[index] = pickle.loads(blob)  # noqa: S301 (JOBDIR is the operator's own, trusted)
        return {
            "origins": dict(db.execute("SELECT idx, origin FROM origins")),
            "slots": dict(db.execute("SELECT idx, slot FROM slots")),
            "payloads": payloads,
            "items": [item for (item,) in db.execute("SELECT item FROM queue")],
            "fetched": {fp for (fp,) in db.execute("SELECT fp FROM fetched")},
            "host_fetched": dict(db.execute("SELECT origin, COUNT(*) FROM fetched GROUP BY origin")),
            "refused": {fp for (fp,) in db.execute("SELECT fp FROM refused")},
        }

    def empty(self) -> bool:
        return self._db.execute("SELECT 1 FROM queue UNION ALL SELECT 1 FROM fetched LIMIT 1").fetchone() is None

    def close(self) -> None:
        self.commit()
        self._db.close()


class JobJournal:
    """The journal of a frontier that may have no JOBDIR: the memory frontier
    tells it every change, and the changes are journaled from :meth:`attach`
    on — after :meth:`resume` opened the JOBDIR's file and the frontier loaded
    what a stopped crawl left (loading journals nothing); no JOBDIR: never."""

    def __init__(self, stats: StatsCollector | None = None):
        self.stats = stats
        self._journal: FrontierJournal | None = None  # opened
        self._active: FrontierJournal | None = None  # attached: journaling every change
        self.path: Path | None = None

    def resume(self, jobdir: Path) -> dict[str, Any] | None:
        """What a stopped crawl left in *jobdir* (None: nothing, a new JOBDIR)."""
        self.path = jobdir / FILE_NAME
        journal = self._journal = FrontierJournal(jobdir)
        return None if journal.empty() else journal.load()

    def attach(self, tables: ItemTables) -> None:
        """From now on every change is journaled, the new payloads, origins and slots of *tables* too."""
        journal = self._active = self._journal
        if journal is not None:
            tables.on_new_payload, tables.on_new_origin, tables.on_new_slot = (
                journal.payload,
                journal.origin,
                journal.slot,
            )

    def queued(self, fp: int, item: bytes) -> None:
        journal = self._active
        if journal is not None and not journal.queued(fp, item) and self.stats is not None:
            self.stats.inc_value("frontier/not_saved")  # e.g. a Request whose callback is a lambda

    def dequeued(self, fp: int) -> None:
        """A queued URL left for good (dropped)."""
        if (journal := self._active) is not None:
            journal.dequeued(fp)

    def fetched(self, fp: int, origin: int) -> None:
        """A page done: the unit of durability (committed)."""
        if (journal := self._active) is not None:
            journal.fetched(fp, origin)
            journal.commit()

    def refused(self, fp: int, url_fp: int) -> None:
        if (journal := self._active) is not None:
            journal.refused(fp, url_fp)
            journal.commit()

    def rewrite(self, live: Callable[[], dict[int, bytes]]) -> None:
        """The whole queue anew: every *live* item (read only when journaling)."""
        if (journal := self._active) is not None:
            journal.rewrite(live())

    def commit(self) -> None:
        if (journal := self._active) is not None:
            journal.commit()

    def close(self) -> bool:
        """Whether there was a journal to close."""
        journal, self._journal, self._active = self._journal, None, None
        if journal is None:
            return False
        journal.close()
        return True
