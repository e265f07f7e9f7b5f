"""The search engine over an index folder.

An index folder holds collections and a ``current`` symlink naming the one
that answers queries::

    DIR/current -> collections/<id>
    DIR/collections/<id>/  (crawlproject.search.collection)

A new collection is built beside the current one and swapped in by
replacing the symlink (``os.replace``: atomic), so the old one answers every
query until the swap; engines notice the swap at their next query.

Ranking (docs/methods.md §4): the query's terms (the crawler's analyzer) are matched in
three fields, each scored by BM25 and weighted: the vote field (terms other
pages write near their links to the page, one vote per referring page per
term, as term frequency), the page's text and its title. Default weights
are equal (``FOCUS_SEARCH_WEIGHTS`` = ``votes:1,text:1,title:1``): no
field is favoured without evidence; bench/symbiosis.py reports P@10 with
each field alone and with all three on the corpus it runs.
"""

from __future__ import annotations

import math
import os
import shutil
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import tantivy

from crawlproject.search.collection import FIELDS, CollectionError, IndexedCollection
from crawlproject.store_lock import FOLDER_LOCK
from crawlproject.web.text import TermAnalyzer, tokenize

if TYPE_CHECKING:
    from collections import Counter
    from collections.abc import Mapping

DEFAULT_WEIGHTS = {"votes": 1.0, "text": 1.0, "title": 1.0}
SNIPPET_WORDS = 30
_RELOAD_SECONDS = 1.0


class QueryError(ValueError):
    """A query the engine cannot answer (empty, nothing searchable)."""


def parse_weights(value: str) -> dict[str, float]:
    """``votes:1,text:0.5`` → field weights (fields not named weigh 0).

    >>> parse_weights("votes:2, text:1")
    {'votes': 2.0, 'text': 1.0, 'title': 0.0}
    """
    weights = dict.fromkeys(FIELDS, 0.0)
    for part in value.split(","):
        name, _, number = part.strip().partition(":")
        if name not in weights:
            raise ValueError(f"unknown field {name!r} in search weights {value!r}; fields: {', '.join(FIELDS)}")
        try:
            weights[name] = float(number)
        except ValueError:
            raise ValueError(f"weight of {name!r} must be a number, got {number!r}") from None
        if weights[name] < 0:
            raise ValueError(f"weight of {name!r} must be ≥ 0")
    if not any(weights.values()):
        raise ValueError(f"search weights {value!r}: at least one field must weigh more than 0")
    return weights


@dataclass
class Hit:
    key: str
    url: str
    title: str
    score: float
    snippet: list[tuple[str, bool]]  #: words, and whether each matched the query
    votes: dict[str, int] = field(default_factory=dict)  #: query terms → votes the page got for them
    referrers: int = 0

    def snippet_text(self, mark: tuple[str, str] = ("", "")) -> str:
        return " ".join(f"{mark[0]}{word}{mark[1]}" if matched else word for word, matched in self.snippet)

    def as_json(self) -> dict[str, object]:
        return {"url": self.url, "key": self.key, "title": self.title, "score": round(self.score, 6),
                "snippet": self.snippet_text(), "votes": self.votes, "referrers": self.referrers}


@dataclass
class Results:
    query: str
    terms: list[str]
    total: int
    offset: int
    hits: list[Hit]


class IndexHome:
    """An index folder: its collections and which one is current."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    @property
    def current_link(self) -> Path:
        return self.folder / "current"

    def exists(self) -> bool:
        return self.current_link.exists()

    def current(self) -> Path:
        if not self.folder.is_dir():
            raise CollectionError(
                f"no index at {self.folder} (create one with `scrapy index CRAWL_DIR --index {self.folder}`)"
            )
        if not self.current_link.exists():
            raise CollectionError(f"{self.folder} is not an index folder (no current collection)")
        return self.current_link.resolve()

    def new_collection(self, label: str = "") -> IndexedCollection:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        folder = self.folder / "collections" / f"{stamp}{'-' + label if label else ''}"
        return IndexedCollection(folder, create=True)

    def open_or_create(self) -> IndexedCollection:
        """The current collection; a first, empty one for a new folder."""
        if self.current_link.exists():
            return IndexedCollection(self.current())
        self.folder.mkdir(parents=True, exist_ok=True)
        if any(path.name != FOLDER_LOCK for path in self.folder.iterdir()):  # its writer's lock aside
            raise CollectionError(f"{self.folder} exists and is not an index folder; choose an empty or new folder")
        collection = self.new_collection()
        self.swap(collection.folder)
        return collection

    def swap(self, folder: Path, keep: int = 2) -> None:
        """Make *folder* the current collection, atomically; delete all but
        the *keep* newest collections that are not current (a night's
        staging collection is none of them: it is the night's to remove)."""
        temporary = self.folder / f".current-{os.getpid()}"
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(folder.relative_to(self.folder))
        os.replace(temporary, self.current_link)
        for old in self.previous()[:-keep or None]:
            shutil.rmtree(old, ignore_errors=True)

    def previous(self) -> list[Path]:
        """The collections that were current before, oldest first (staging ones aside)."""
        current = self.current_link.resolve() if self.current_link.exists() else None
        collections = sorted((self.folder / "collections").iterdir()) if (self.folder / "collections").is_dir() else []
        return [c for c in collections if c.resolve() != current and not c.name.endswith("-staging")]

    def rollback(self) -> Path:
        """Make the last collection that was current before this one current
        again (the one a bad night replaced); the one replaced is kept."""
        earlier = [c for c in self.previous() if c.resolve() < self.current().resolve()] or self.previous()
        if not earlier:
            raise CollectionError(f"{self.folder} keeps no earlier collection to roll back to")
        self.swap(earlier[-1], keep=len(self.previous()) + 1)
        return earlier[-1]


def is_collection_folder(path: Path) -> bool:
    """*path* is one collection (not an index folder of collections)."""
    return (path / "collection.json").exists()


def collection_folder(folder: str | Path) -> Path:
    """A collection folder itself, or an index folder's current collection."""
    path = Path(folder)
    return path if is_collection_folder(path) else IndexHome(path).current()


def open_collection(folder: str | Path) -> IndexedCollection:
    """A collection folder itself, or an index folder's current collection
    (a first, empty one when the folder is new)."""
    path = Path(folder)
    if is_collection_folder(path):
        return IndexedCollection(path)
    return IndexHome(path).open_or_create()


class IndexIdf:
    """Inverse document frequencies from an index's page texts, for the
    crawler's TF-IDF (docs/methods.md §4: the engine's IDF instead of plain TF):
    idf(t) = ln((N + 1) / (df(t) + 1)) + 1 (smoothed: a term the index has
    never seen weighs most, none weighs 0), looked up once per term."""

    def __init__(self, folder: str | Path):
        self.collection = IndexedCollection(collection_folder(folder))
        self.searcher = self.collection.searcher()
        self.pages = int(self.searcher.num_docs)
        self._cache: dict[str, float] = {}

    def __call__(self, term: str) -> float:
        weight = self._cache.get(term)
        if weight is None:
            df = int(self.searcher.doc_freq("text_terms", term))
            weight = self._cache[term] = math.log((self.pages + 1) / (df + 1)) + 1.0
        return weight

    def weigh(self, vector: Mapping[str, float]) -> dict[str, float]:
        return {term: count * self(term) for term, count in vector.items()}


class SearchEngine:
    """Answers queries from an index folder's current collection (or from
    one collection folder), following swaps."""

    def __init__(self, folder: str | Path, weights: dict[str, float] | None = None, stem: bool = True):
        self.home = IndexHome(folder)
        self.weights = weights or DEFAULT_WEIGHTS
        self.analyzer = TermAnalyzer(stem=stem)
        self._collection: IndexedCollection | None = None
        self._opened: Path | None = None
        self._reloaded = 0.0
        self._open()

    def _open(self) -> None:
        target = collection_folder(self.home.folder)
        if self._opened != target:
            if self._collection is not None:
                self._collection.close()
            self._collection = IndexedCollection(target)
            self._opened = target
            self._reloaded = time.monotonic()
        elif time.monotonic() - self._reloaded >= _RELOAD_SECONDS:
            self._collection.reload()  # type: ignore[union-attr]
            self._reloaded = time.monotonic()

    @property
    def collection(self) -> IndexedCollection:
        self._open()
        assert self._collection is not None
        return self._collection

    def query_terms(self, query: str) -> list[str]:
        terms = list(dict.fromkeys(self.analyzer.terms(query)))
        if not query.strip():
            raise QueryError("empty query: type a few words")
        if not terms:
            raise QueryError(f"nothing to search for in {query!r}: only stopwords or punctuation")
        return terms

    def search(self, query: str, limit: int = 10, offset: int = 0) -> Results:
        terms = self.query_terms(query)
        collection = self.collection
        schema = collection.index.schema
        clauses = [
            (tantivy.Occur.Should,
             tantivy.Query.boost_query(tantivy.Query.term_query(schema, f"{name}_terms", term), weight))
            for term in terms for name, weight in self.weights.items() if weight > 0
        ]
        searcher = collection.searcher()
        found = searcher.search(tantivy.Query.boolean_query(clauses), limit=limit, offset=offset, count=True)
        hits = []
        for score, address in found.hits:
            doc = searcher.doc(address)
            key = doc["key"][0]
            votes: Counter[str] = collection.votes(key)
            hits.append(Hit(
                key=key, url=doc["url"][0], title=doc["title"][0] if doc["title"] else "", score=float(score),
                snippet=snippet(doc["snippet_text"][0] if doc["snippet_text"] else "", set(terms), self.analyzer),
                votes={term: votes[term] for term in terms if votes[term]}, referrers=int(doc["referrers"][0]),
            ))
        return Results(query, terms, int(found.count or 0), offset, hits)  # type: ignore[attr-defined]

    def backlinks(self, key: str) -> list[str]:
        return self.collection.backlinks(key)

    def page_count(self) -> int:
        return self.collection.page_count()

    def document_frequency(self, term: str) -> tuple[int, int]:
        """(pages whose text holds *term*, pages): the index's IDF for the crawler."""
        searcher = self.collection.searcher()
        return int(searcher.doc_freq("text_terms", term)), int(searcher.num_docs)


def snippet(text: str, terms: set[str], analyzer: TermAnalyzer, words: int = SNIPPET_WORDS) -> list[tuple[str, bool]]:
    """The first window of *words* words of *text* holding the most distinct
    query terms, each word marked when it matches one.

    >>> a = TermAnalyzer()
    >>> [w for w, m in snippet("a b courses c d e syllabus", {"cours", "syllabu"}, a, words=3) if m]
    ['courses']
    """
    tokens = text.split()[:_SNIPPET_SCAN]
    found: list[str | None] = []
    for token in tokens:
        hit = next((term for term in analyzer.terms(token) if term in terms), None) if tokenize(token) else None
        found.append(hit)
    in_window: dict[str, int] = {}
    best_start, best = 0, -1
    for end, term in enumerate(found):  # slide a window of *words* tokens ending at *end*
        if term is not None:
            in_window[term] = in_window.get(term, 0) + 1
        start = end - words + 1
        if start > 0 and found[start - 1] is not None:
            gone = found[start - 1]
            assert gone is not None
            in_window[gone] -= 1
            if not in_window[gone]:
                del in_window[gone]
        if len(in_window) > best:
            best_start, best = max(0, start), len(in_window)
    return [(tokens[i], found[i] is not None) for i in range(best_start, min(len(tokens), best_start + words))]


#: Words of a page scanned for a snippet.
_SNIPPET_SCAN = 5000
