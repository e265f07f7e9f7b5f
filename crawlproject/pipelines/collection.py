"""The collection (``FOCUS_COLLECTION``): every page's main text
and Markdown in its item, and on disk what a retrieval index or a reader
takes in — relevant and irrelevant pages apart, as the judge called them::

    collection/relevant.jsonl      one line per relevant page: its item, text and Markdown included
    collection/irrelevant.jsonl    the same for the pages the judge did not call relevant
    collection/relevant/NAME.md    a relevant page's Markdown under a YAML front matter of its item

A crawl with no judge (breadth-first, a plain spider) has no verdicts: its
pages go to ``pages.jsonl`` and ``pages/``; a near-duplicate of a page
fetched before goes to ``near-duplicates.jsonl`` (crawlproject.corpus.collection:
the crawl's one count of relevant pages). Every page answered 2xx with a
body is collected: a page whose main text the extractor cannot find keeps
its whole visible text, the text its judge read (counted
``focus/collection/no_main_text``); the rest are counted too.
Files are appended as pages arrive and flushed before the page's lease is
acknowledged, as the history is: a resumed crawl writes on. When the crawl
ends, a judge calibrated on the crawl's own pages settles its calls and the
files are rewritten with them (crawlproject.corpus.collection).
"""

from __future__ import annotations

import json
import logging
from typing import IO, TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured

from crawlproject import config
from crawlproject.corpus.collection import kind_of, write_markdown
from crawlproject.corpus.output import output_dir
from crawlproject.items import RAW_FIELDS, PageItem
from crawlproject.web.extract import (
    detected_language,
    load_language_detector,
    main_text,
    whole_text,
)

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler


#: Pages in a row whose text the collection cannot extract (an exception, not
#: a page without main text) before it stops the crawl: an extractor that
#: cannot run (a dependency missing) fails on every page, and a crawl that
#: went on wrote 300 tracebacks, no item, and exited 0.
FAILURES_IN_A_ROW = 10


class CollectionPipeline:
    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.folder: Path | None = None
        self.files: dict[str, IO[str]] = {}
        self.failures_in_a_row = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        if not config.get_bool(crawler.settings, "FOCUS_COLLECTION"):
            raise NotConfigured
        load_language_detector()  # half a second, now rather than in the reactor at the first page
        return cls(crawler)

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        if not isinstance(item, PageItem):
            return item
        stats = self.crawler.stats
        assert stats is not None
        status = item.get("status")
        if status is None or not 200 <= status < 300 or not item.get("body"):
            return item
        try:
            found = main_text(item["body"], item["url"])
        except Exception as exc:  # noqa: BLE001 - the extractor itself broken: counted, and it stops the crawl
            self._failed(exc)
            return item
        self.failures_in_a_row = 0
        if found is None:  # a relevant page is still a relevant page: the text the judge read
            stats.inc_value("focus/collection/no_main_text")
            found = whole_text(item["body"], item["url"])
        item["text"], item["markdown"] = found.text, found.markdown
        if not item.get("language"):  # the page declares none: the one its main text is in, when sure
            item["language"] = detected_language(found.text)
        kind = kind_of(item)
        record = {k: v for k, v in item.items() if k not in RAW_FIELDS}
        lines = self._file(f"{kind}.jsonl")
        lines.write(json.dumps(record, ensure_ascii=False) + "\n")
        lines.flush()
        if kind in ("relevant", "pages"):
            write_markdown(self._folder(), kind, record)
        stats.inc_value(f"focus/collection/{kind}")
        return item

    def _failed(self, error: Exception) -> None:
        """The extractor raised: counted; after ``FAILURES_IN_A_ROW`` pages
        in a row, one line naming the cause and the crawl stopped (the
        crawl command then exits 1). The page's item goes on: its history
        line is written."""
        stats = self.crawler.stats
        assert stats is not None
        stats.inc_value("focus/collection/failed")
        self.failures_in_a_row += 1
        if self.failures_in_a_row != FAILURES_IN_A_ROW:
            return
        cause = (f"the collection could not extract the text of {FAILURES_IN_A_ROW} pages in a row "
                 f"({type(error).__name__}: {error}): stopping the crawl")
        logger.error("%s", cause)
        stats.set_value("focus/component_failed", cause)
        assert self.crawler.engine is not None and self.crawler.spider is not None
        self.crawler.engine.close_spider(self.crawler.spider, "collection_failed")

    def _folder(self) -> Path:
        if self.folder is None:
            spider = self.crawler.spider
            assert spider is not None
            self.folder = output_dir(spider, self.crawler.settings) / "collection"
            self.folder.mkdir(exist_ok=True)
        return self.folder

    def _file(self, name: str) -> IO[str]:
        if name not in self.files:
            self.files[name] = (self._folder() / name).open("a", encoding="utf-8")
        return self.files[name]

    def close_spider(self, spider: Spider | None = None) -> None:
        for file in self.files.values():
            file.close()
        self.files.clear()
