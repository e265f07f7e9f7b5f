"""Indexing as the crawl runs: with ``FOCUS_INDEX_DIR``, every HTML page the
crawl fetches goes into that index folder's current collection (created if
the folder is new; or into that collection folder itself), committed every ``FOCUS_INDEX_COMMIT_PAGES`` pages and
at the end, so the search engine sees the crawl as it grows. Votes for
pages not fetched yet are kept and count once those pages arrive."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured

from crawlproject import config
from crawlproject.items import PageItem
from crawlproject.search.document import parse_page
from crawlproject.search.engine import open_collection
from crawlproject.web.text import TermAnalyzer

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler

    from crawlproject.search.collection import CollectionWriter, IndexedCollection


class SearchIndexPipeline:
    def __init__(self, crawler: Crawler, folder: str):
        settings = crawler.settings
        self.crawler = crawler
        self.folder = folder
        self.every = config.get_int(settings, "FOCUS_INDEX_COMMIT_PAGES")
        self.window = config.get_int(settings, "FOCUS_INDEX_VOTE_WINDOW")
        self.analyzer = TermAnalyzer(stem=config.get_bool(settings, "FOCUS_STEMMING"))
        self.collection: IndexedCollection | None = None
        self.writer: CollectionWriter | None = None
        self.pending = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        folder = config.get_str(crawler.settings, "FOCUS_INDEX_DIR")
        if not folder:
            raise NotConfigured
        return cls(crawler, folder)

    def open_spider(self, spider: Spider | None = None) -> None:
        self.collection = open_collection(self.folder)  # a bad folder stops the crawl at start, with its reason
        self.writer = self.collection.writer()

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        if not isinstance(item, PageItem) or self.writer is None:
            return item
        status, body = item.get("status"), item.get("body")
        if status is None or not 200 <= status < 300 or not body:
            return item
        page = parse_page(
            item["url"], body, self.analyzer, self.window, key=item["canonical_url"],
            content_type=item.get("content_type") or "text/html", fetched_at=item.get("fetched_at") or "",
        )
        stats = self.crawler.stats
        assert stats is not None
        if page is None:
            stats.inc_value("search/not_indexed/not_html")
            return item
        self.writer.add(page)
        stats.inc_value("search/indexed")
        self.pending += 1
        if self.pending >= self.every:
            self._commit()
        return item

    def _commit(self) -> None:
        assert self.writer is not None
        self.writer.commit(self.analyzer)
        self.pending = 0

    def close_spider(self, spider: Spider | None = None) -> None:
        if self.writer is not None:
            self._commit()
            self.writer.close()
            self.writer = None
        if self.collection is not None:
            self.collection.close()
