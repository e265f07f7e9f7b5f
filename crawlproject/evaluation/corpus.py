"""A labelled corpus as the evaluator sees it: every archived page's canonical
URL, category, text and outlinks, read once from the WARC and cached.

Links are extracted with the crawler's own parser (crawlproject.page), so
the evaluator's graph is the graph the crawler walks.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from scrapy.http import HtmlResponse
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from crawlproject.labels import load_labels
from crawlproject.middlewares.pagesize import is_html_content_type
from crawlproject.page import Page
from crawlproject.replay.archive import ArchiveError, check_warc
from crawlproject.text import TermAnalyzer
from crawlproject.urls import canonicalize

logger = logging.getLogger(__name__)

_CACHE_VERSION = 2  # 2: outlinks without fragments, deduplicated
#: The four universities' computer-science department home pages in WebKB:
#: the seeds of the demo, the throughput benchmark and the crawl tests.
WEBKB_DEPARTMENT_HOMES = (
    "http://www.cs.cornell.edu/",
    "http://www.cs.utexas.edu/",
    "http://www.cs.washington.edu/",
    "http://www.cs.wisc.edu/",
)
DEFAULT_MAX_BYTES = 102400  # the crawler's default page cut (SPEC §1)


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
    """Read (or load from cache) the corpus of *warc* labelled by *labels*."""
    warc, labels = Path(warc), Path(labels)
    cache_file = None
    if cache_dir is not None:
        cache_file = Path(cache_dir) / f"corpus-{_fingerprint(warc, labels)}.pickle"
        if cache_file.exists():
            with cache_file.open("rb") as f:
                corpus: Corpus = pickle.load(f)
            return corpus
    corpus = Corpus(labels=load_labels(labels))
    check_warc(warc)
    try:
        _read_pages(warc, corpus)
    except (ArchiveLoadFailed, EOFError, zlib.error) as exc:
        raise ArchiveError(f"not a WARC file: {warc} ({str(exc).strip()})") from None
    logger.info("Read %d pages from %s", len(corpus.text), warc)
    if cache_file is not None:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(".tmp")
        with tmp.open("wb") as f:
            pickle.dump(corpus, f, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(cache_file)
    return corpus


def _read_pages(warc: Path, corpus: Corpus) -> None:
    with warc.open("rb") as f:
        for record in ArchiveIterator(f):
            if record.rec_type != "response" or record.http_headers is None:
                continue
            if record.http_headers.get_statuscode() != "200":
                continue
            url = canonicalize(record.rec_headers.get_header("WARC-Target-URI"))
            if url in corpus.text:
                continue  # first capture wins, as in the replay
            content_type = record.http_headers.get_header("Content-Type")
            body = record.content_stream().read()[:DEFAULT_MAX_BYTES]
            if not is_html_content_type(content_type):
                corpus.text[url], corpus.outlinks[url] = "", []
                continue
            response = HtmlResponse(
                url=url, body=body, headers={"Content-Type": content_type or "text/html"}
            )
            page = Page.from_response(response)
            corpus.text[url] = page.text
            corpus.outlinks[url] = [link.key for link in page.links]


def _fingerprint(*paths: Path) -> str:
    digest = hashlib.sha1(str(_CACHE_VERSION).encode())  # noqa: S324 (a cache key)
    for path in paths:
        stat = path.stat()
        digest.update(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]
