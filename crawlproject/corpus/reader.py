"""A labelled corpus as the evaluator sees it: every archived page's canonical
URL, category, text and outlinks, read once from the WARC and cached.

Links are extracted with the crawler's own parser (crawlproject.web.page), so
the evaluator's graph is the graph the crawler walks.
"""

from __future__ import annotations

import logging
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from scrapy.http import HtmlResponse
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from crawlproject.corpus.labels import load_labels
from crawlproject.disk_cache import cached, file_key
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
    from collections.abc import Iterator

T = TypeVar("T")

logger = logging.getLogger(__name__)

_CACHE_VERSION = 5  # raised whenever what a cached corpus holds changes
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
        pages_file = Path(cache_dir) / f"pages-{file_key(_CACHE_VERSION, warc)}.pickle"
        labels_file = Path(cache_dir) / f"labels-{file_key(_CACHE_VERSION, labels)}.pickle"
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


