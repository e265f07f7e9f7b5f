"""One collection of the search engine: a folder with

* ``store.sqlite`` — the pages (key, URL, title, text), the link graph and
  the votes (target, term, referrer): the source of truth, so the index can
  be rebuilt, a collection can be cut down to some of its pages, and votes
  for a page not fetched yet wait for it;
* ``tantivy/`` — the full-text index, rebuilt per page from the store: BM25
  over the vote field (a term repeated once per vote), the text and the
  title, each analyzed by the crawler's analyzer (crawlproject.web.text).

Writing is incremental: :meth:`CollectionWriter.add` records a page and
marks what changed (the page, and every page it votes for); :meth:`commit`
re-indexes the marked pages that are in the collection, then commits tantivy
and SQLite — tantivy first, so a crash in between only redoes work.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tantivy

if TYPE_CHECKING:
    from collections.abc import Iterable

    from crawlproject.search.document import IndexedPage

FORMAT = "crawlproject-search-collection/1"
#: Characters of a page's text kept for snippets.
STORED_TEXT = 20_000
#: Index fields: what a query's terms are matched against.
FIELDS = ("votes", "text", "title")

_SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS urls (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS pages (
    id INTEGER PRIMARY KEY, url TEXT NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL, fetched_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS links (source INTEGER NOT NULL, target INTEGER NOT NULL, PRIMARY KEY (source, target))
    WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS links_by_target ON links (target, source);
CREATE TABLE IF NOT EXISTS votes (
    target INTEGER NOT NULL, term TEXT NOT NULL, source INTEGER NOT NULL, PRIMARY KEY (target, term, source)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS votes_by_source ON votes (source);
CREATE TABLE IF NOT EXISTS dirty (id INTEGER PRIMARY KEY);
"""


class CollectionError(ValueError):
    """A collection folder that cannot be used: missing, foreign or corrupt."""


def schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("key", stored=True, tokenizer_name="raw")
    builder.add_text_field("url", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("title", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("snippet_text", stored=True, tokenizer_name="raw", index_option="basic")
    for name in FIELDS:  # pre-analyzed terms, separated by spaces
        builder.add_text_field(f"{name}_terms", tokenizer_name="whitespace", index_option="freq")
    builder.add_unsigned_field("referrers", stored=True)
    return builder.build()


class IndexedCollection:
    """A collection folder, open for reading (and, through :meth:`writer`,
    for writing)."""

    def __init__(self, folder: str | Path, create: bool = False):
        self.folder = Path(folder)
        marker = self.folder / "collection.json"
        if create:
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / "tantivy").mkdir(exist_ok=True)
            if not marker.exists():
                marker.write_text(json.dumps({"format": FORMAT}), encoding="utf-8")
        if not marker.exists():
            raise CollectionError(f"{self.folder} is not a search collection (no collection.json)")
        try:
            found = json.loads(marker.read_text(encoding="utf-8")).get("format")
        except (ValueError, AttributeError) as exc:
            raise CollectionError(f"{marker} is corrupt: {exc}") from exc
        if found != FORMAT:
            raise CollectionError(f"{self.folder} holds a {found!r} collection; this version reads {FORMAT}")
        try:
            self.db = sqlite3.connect(self.folder / "store.sqlite", check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.executescript(_SCHEMA_SQL)
            self.index = tantivy.Index(schema(), path=str(self.folder / "tantivy"), reuse=True)
        except (sqlite3.DatabaseError, ValueError, OSError) as exc:
            raise CollectionError(f"{self.folder} is corrupt: {exc}") from exc

    def close(self) -> None:
        self.db.close()

    # -- reading ---------------------------------------------------------------

    def searcher(self) -> tantivy.Searcher:
        return self.index.searcher()

    def reload(self) -> None:
        self.index.reload()

    def page_count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM pages").fetchone()[0])

    def keys(self) -> list[str]:
        rows = self.db.execute("SELECT urls.key FROM pages JOIN urls ON urls.id = pages.id ORDER BY pages.id")
        return [key for (key,) in rows]

    def backlinks(self, key: str) -> list[str]:
        """Keys of the pages in the collection that link to *key*."""
        rows = self.db.execute(
            "SELECT urls.key FROM links JOIN urls ON urls.id = links.source JOIN pages ON pages.id = links.source "
            "WHERE links.target = (SELECT id FROM urls WHERE key = ?) ORDER BY urls.key",
            (key,),
        )
        return [source for (source,) in rows]

    def linked_with(self, terms: list[str], limit: int) -> list[str]:
        """The pages the collection links to with any of *terms* near the
        link (its votes), most referring pages first — pages of the
        collection or not yet: where a query no page matches may start."""
        if not terms:
            return []
        marks = ",".join("?" * len(terms))
        rows = self.db.execute(
            f"SELECT urls.key FROM votes JOIN urls ON urls.id = votes.target WHERE votes.term IN ({marks}) "  # noqa: S608 (placeholders)
            "GROUP BY votes.target ORDER BY COUNT(DISTINCT votes.source) DESC, urls.key LIMIT ?",
            (*terms, limit),
        )
        return [key for (key,) in rows]

    def hubs(self, limit: int) -> list[str]:
        """The collection's pages with the most links, most first."""
        rows = self.db.execute(
            "SELECT urls.key FROM links JOIN urls ON urls.id = links.source JOIN pages ON pages.id = links.source "
            "GROUP BY links.source ORDER BY COUNT(*) DESC, urls.key LIMIT ?",
            (limit,),
        )
        return [key for (key,) in rows]

    def votes(self, key: str) -> Counter[str]:
        """Term → number of referring pages that wrote it near a link to *key*."""
        rows = self.db.execute(
            "SELECT term, COUNT(*) FROM votes WHERE target = (SELECT id FROM urls WHERE key = ?) GROUP BY term",
            (key,),
        )
        return Counter(dict(rows))

    def page(self, key: str) -> dict[str, str] | None:
        row = self.db.execute(
            "SELECT pages.url, pages.title, pages.text, pages.fetched_at FROM pages JOIN urls ON urls.id = pages.id "
            "WHERE urls.key = ?",
            (key,),
        ).fetchone()
        return None if row is None else dict(zip(("url", "title", "text", "fetched_at"), row, strict=True))

    def size_bytes(self) -> int:
        return sum(path.stat().st_size for path in self.folder.rglob("*") if path.is_file())

    def writer(self, heap_bytes: int = 50_000_000) -> CollectionWriter:
        return CollectionWriter(self, heap_bytes)


class CollectionWriter:
    """Adds pages to a collection; one at a time per collection (tantivy's
    writer lock: a second writer gets a clear error)."""

    def __init__(self, collection: IndexedCollection, heap_bytes: int):
        self.collection = collection
        self.db = collection.db
        try:
            self.writer = collection.index.writer(heap_size=heap_bytes, num_threads=1)
        except ValueError as exc:
            raise CollectionError(f"{collection.folder} is being written by another process: {exc}") from exc

    def add(self, page: IndexedPage) -> None:
        """Record *page* (replacing an earlier fetch of it): its text, its links
        and its votes. Indexed at the next :meth:`commit`."""
        db = self.db
        source = self._id(page.key)
        db.execute(
            "INSERT INTO pages (id, url, title, text, fetched_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE "
            "SET url = excluded.url, title = excluded.title, text = excluded.text, fetched_at = excluded.fetched_at",
            (source, page.url, page.title, page.text, page.fetched_at),
        )
        # A page fetched again may link elsewhere: its old votes go, and the
        # pages they were for are re-indexed.
        db.execute("INSERT OR IGNORE INTO dirty (id) SELECT DISTINCT target FROM votes WHERE source = ?", (source,))
        db.execute("DELETE FROM votes WHERE source = ?", (source,))
        db.execute("DELETE FROM links WHERE source = ?", (source,))
        targets = {target: self._id(target) for target in page.votes}
        db.executemany("INSERT OR IGNORE INTO links (source, target) VALUES (?, ?)",
                       ((source, target) for target in targets.values()))
        db.executemany(
            "INSERT OR IGNORE INTO votes (target, term, source) VALUES (?, ?, ?)",
            ((targets[target], term, source) for target, terms in page.votes.items() for term in terms),
        )
        db.executemany("INSERT OR IGNORE INTO dirty (id) VALUES (?)", ((i,) for i in (source, *targets.values())))

    def add_all(self, pages: Iterable[IndexedPage]) -> int:
        count = 0
        for page in pages:
            self.add(page)
            count += 1
        return count

    def commit(self, analyzer: Any) -> int:
        """Re-index every changed page of the collection; returns how many."""
        db = self.db
        rows = db.execute(
            "SELECT pages.id, urls.key, pages.url, pages.title, pages.text FROM dirty "
            "JOIN pages ON pages.id = dirty.id JOIN urls ON urls.id = pages.id"
        ).fetchall()
        for page_id, key, url, title, text in rows:
            votes = db.execute("SELECT term, COUNT(*) FROM votes WHERE target = ? GROUP BY term", (page_id,)).fetchall()
            referrers = db.execute(
                "SELECT COUNT(*) FROM links JOIN pages ON pages.id = links.source WHERE links.target = ?", (page_id,)
            ).fetchone()[0]
            self.writer.delete_documents_by_term("key", key)
            self.writer.add_document(tantivy.Document(
                key=key, url=url, title=title, snippet_text=text[:STORED_TEXT],
                votes_terms=" ".join(" ".join([term] * count) for term, count in votes),
                text_terms=" ".join(analyzer.terms(text)), title_terms=" ".join(analyzer.terms(title)),
                referrers=int(referrers),
            ))
        self.writer.commit()
        db.execute("DELETE FROM dirty")
        db.commit()
        self.collection.reload()
        return len(rows)

    def close(self) -> None:
        self.writer.wait_merging_threads()

    def _id(self, key: str) -> int:
        row = self.db.execute(
            "INSERT INTO urls (key) VALUES (?) ON CONFLICT (key) DO NOTHING RETURNING id", (key,)
        ).fetchone()
        if row is None:
            row = self.db.execute("SELECT id FROM urls WHERE key = ?", (key,)).fetchone()
        return int(row[0])


def copy_pages(source: IndexedCollection, target: IndexedCollection, keys: Iterable[str]) -> int:
    """Put into *target* the pages of *source* whose key is in *keys*, with
    their links and votes (not the votes of pages left out: a collection's
    votes come from its own pages). Returns how many pages were copied;
    indexed at *target*'s next commit."""
    db = target.db
    db.execute("ATTACH DATABASE ? AS source", (str(source.folder / "store.sqlite"),))
    try:
        db.execute("CREATE TEMP TABLE kept (key TEXT PRIMARY KEY)")
        db.executemany("INSERT OR IGNORE INTO kept (key) VALUES (?)", ((key,) for key in keys))
        db.execute("INSERT OR IGNORE INTO urls (id, key) SELECT id, key FROM source.urls")
        copied = db.execute(
            "INSERT OR REPLACE INTO pages SELECT p.* FROM source.pages p JOIN source.urls u ON u.id = p.id "
            "JOIN kept ON kept.key = u.key"
        ).rowcount
        db.execute(
            "INSERT OR IGNORE INTO links SELECT l.* FROM source.links l WHERE l.source IN (SELECT id FROM pages)"
        )
        db.execute(
            "INSERT OR IGNORE INTO votes SELECT v.* FROM source.votes v WHERE v.source IN (SELECT id FROM pages)"
        )
        db.execute("INSERT OR IGNORE INTO dirty (id) SELECT id FROM pages")
        db.execute("DROP TABLE kept")
        db.commit()
    finally:
        db.execute("DETACH DATABASE source")
    return int(copied)
