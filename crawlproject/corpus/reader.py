"""A labelled corpus as the evaluator sees it: every archived page's canonical
URL, category, text and outlinks, read once from the WARC and cached.

Links are extracted with the crawler's own parser (crawlproject.web.page), so
the evaluator's graph is the graph the crawler walks.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import pickle
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from scrapy.http import HtmlResponse
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from crawlproject.corpus.labels import load_labels
from crawlproject.replay.archive import (
    ArchiveError,
    RevisitIndex,
    check_warc,
    cut_off,
    read_record,
    revisit_answer,
    warn_cut_off,
)
from crawlproject.web.content import is_html_content_type
from crawlproject.web.page import Page
from crawlproject.web.text import TermAnalyzer
from crawlproject.web.urls import canonicalize

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

T = TypeVar("T")

logger = logging.getLogger(__name__)

_CACHE_VERSION = 5  # 2: outlinks without fragments, deduplicated; 3: revisit records read; 4: crawlproject.corpus; 5: pages and labels apart
DEFAULT_MAX_BYTES = 102400  # the crawler's default page cut (docs/methods.md §1)


@dataclass
class Corpus:
    """Pages keyed by canonical URL (only pages the archive answers 200 for)."""

    labels: dict[str, str]
    text: dict[str, str] = field(default_factory=dict)
    outlinks: dict[str, list[str]] = field(default_factory=dict)
    _document_frequencies: Counter[str] | None = field(default=None, repr=False, compare=False)

    @property
    def urls(self) -> list[str]:
        return list(self.text)

    def category(self, url: str) -> str | None:
        return self.labels.get(url)

    def document_frequencies(self) -> Counter[str]:
        """Pages each term (unstemmed, no stopwords) occurs on; computed once."""
        if getattr(self, "_document_frequencies", None) is None:
            analyzer = TermAnalyzer(stem=False)
            counts: Counter[str] = Counter()
            for text in self.text.values():
                counts.update(set(analyzer.terms(text)))
            self._document_frequencies = counts
        assert self._document_frequencies is not None
        return self._document_frequencies

    def inlinks(self) -> dict[str, list[str]]:
        """Reverse graph restricted to corpus pages: target → sources."""
        reverse: dict[str, list[str]] = {url: [] for url in self.text}
        for source, targets in self.outlinks.items():
            for target in set(targets):
                if target in reverse and target != source:
                    reverse[target].append(source)
        return reverse


def load_corpus(
    warc: str | Path, labels: str | Path, cache_dir: str | Path | None = ".cache"
) -> Corpus:
    """Read (or load from cache) the corpus of *warc* labelled by *labels*.
    The pages and the labels are cached apart, each under its own file's
    key: a corpus read once is not read again for other labels of it (a
    user's edited labels, a topic's own)."""
    warc, labels = Path(warc), Path(labels)
    pages_file = labels_file = None
    if cache_dir is not None:
        pages_file = Path(cache_dir) / f"pages-{_fingerprint(warc)}.pickle"
        labels_file = Path(cache_dir) / f"labels-{_fingerprint(labels)}.pickle"
    found = cached(labels_file, lambda: load_labels(labels))  # first: a bad line is said before the WARC is read
    pages = cached(pages_file, lambda: _read_pages(warc))
    return Corpus(labels=found, text=pages.text, outlinks=pages.outlinks)


def _read_pages(warc: Path) -> Corpus:
    """Text and outlinks of every page of *warc* (no labels)."""
    corpus = Corpus(labels={})
    for url, page in archived_pages(warc):
        corpus.text[url] = page.text if page is not None else ""
        corpus.outlinks[url] = [link.key for link in page.links] if page is not None else []
    logger.info("Read %d pages from %s", len(corpus.text), warc)
    return corpus


def cached(cache_file: Path | None, build: Callable[[], T]) -> T:
    """What *cache_file* holds, or *build*'s result, written there atomically
    (a cache of our own making: these pickles are never downloaded). Processes
    that want the same missing file take turns (a lock file beside it): one
    builds it, the others read what it wrote rather than build it again."""
    if cache_file is None:
        return build()
    found = _load_cache(cache_file)
    if found is not None:
        return cast("T", found[0])
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    with cache_file.with_suffix(".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        found = _load_cache(cache_file)  # built while this process waited
        if found is not None:
            return cast("T", found[0])
        value = build()
        tmp = cache_file.with_suffix(".tmp")
        with tmp.open("wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(cache_file)
    return value


def _load_cache(cache_file: Path) -> tuple[Any] | None:
    """``(value,)`` from *cache_file*, or None when it is missing or unusable."""
    if not cache_file.exists():
        return None
    try:
        with cache_file.open("rb") as f:
            return (pickle.load(f),)  # noqa: S301
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError) as exc:
        # a torn file, or one written by code that has moved since: made anew
        logger.warning("Cache %s is unusable (%s); building it again", cache_file, exc)
        return None


def archived_pages(warc: str | Path) -> Iterator[tuple[str, Page | None]]:
    """Every page the archive answers 200 for, first capture only, as the
    crawler parses it: canonical URL and Page (None for a non-HTML body).
    A file that is not a WARC raises ArchiveError."""
    check_warc(Path(warc))
    try:
        yield from _archived_pages(Path(warc))
    except (ArchiveLoadFailed, EOFError, zlib.error) as exc:
        raise ArchiveError(f"not a WARC file: {warc} ({str(exc).strip()})") from None


def _archived_pages(warc: Path) -> Iterator[tuple[str, Page | None]]:
    seen: set[str] = set()
    revisits = RevisitIndex()  # a revisit record answers with an earlier response's body, as in the replay
    record = None
    with warc.open("rb") as f, warc.open("rb") as originals:
        iterator = ArchiveIterator(f)
        for record in iterator:
            if record.rec_type == "response":
                http, body = record.http_headers, record.content_stream().read()
                revisits.add_response(record.rec_headers, iterator.get_record_offset())  # reads to the record's end
                if cut_off(record):
                    break
            elif record.rec_type == "revisit":
                original = revisits.original(record.rec_headers)
                if original is None:
                    continue  # its response is in another WARC
                http, body = revisit_answer(record, read_record(originals, original))
            else:
                continue
            if http is None or http.get_statuscode() != "200":
                continue
            url = canonicalize(record.rec_headers.get_header("WARC-Target-URI"))
            if url in seen:
                continue  # first capture wins, as in the replay
            seen.add(url)
            content_type = http.get_header("Content-Type")
            body = body[:DEFAULT_MAX_BYTES]
            if not is_html_content_type(content_type):
                yield url, None
                continue
            response = HtmlResponse(
                url=url, body=body, headers={"Content-Type": content_type or "text/html"}
            )
            yield url, Page.from_response(response)
    if record is not None and cut_off(record):
        warn_cut_off(warc, len(seen))


def _fingerprint(*paths: Path) -> str:
    digest = hashlib.sha1(str(_CACHE_VERSION).encode())  # noqa: S324 (a cache key)
    for path in paths:
        stat = path.stat()
        digest.update(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]
