"""The focused crawler (SPEC §2, Chakrabarti et al.): a taxonomy classifier
decides which links to follow first.

    scrapy train --labels labels.tsv --warc pages.warc.gz -o model.npz
    scrapy crawl focused -a model=model.npz -a good=course -a seeds=seeds.txt \\
        -s FOCUS_FOCUS_MODE=hard -s FOCUS_DISTILL_EVERY=100

Pages are classified in micro-batches (crawlproject.spiders.batching): a
callback awaits its page's verdict while the downloader keeps fetching.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future

from crawlproject import config
from crawlproject.corpus.labels import parse_categories
from crawlproject.scrapy_private import downloads_in_flight
from crawlproject.spiders.base import ModelSpider
from crawlproject.spiders.batching import MicroBatcher
from crawlproject.strategies.base import Topic
from crawlproject.strategies.focused import FocusedCrawlStrategy, Verdict

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from crawlproject.web.page import Page


class FocusedCrawlerSpider(ModelSpider):
    name = "focused"
    strategy_class = FocusedCrawlStrategy
    strategy: FocusedCrawlStrategy
    #: A topic spider names its model file and good categories here (or
    #: ``-a model=… -a good=…``, or the FOCUS_MODEL / FOCUS_GOOD settings).
    good: tuple[str, ...] | str = ()

    def __init__(self, model: str | None = None, good: str | None = None, **kwargs: Any):
        super().__init__(model, **kwargs)
        chosen = good or type(self).good
        self.good_categories = parse_categories(chosen) if isinstance(chosen, str) else tuple(chosen)

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        spider.batcher = MicroBatcher(
            spider.strategy.classify,
            max_size=config.get_int(settings, "FOCUS_CLASSIFY_BATCH"),
            wait=config.get_float(settings, "FOCUS_CLASSIFY_WAIT"),
            nothing_in_flight=spider._nothing_in_flight,
        )
        crawler.signals.connect(spider._flush_batch, signals.spider_idle)
        crawler.signals.connect(spider._flush_batch, signals.spider_closed)
        return spider

    batcher: MicroBatcher[Page, Verdict]

    def _topic(self) -> Topic:
        return Topic(query=self.query, model=self.model_path, good=self.good_categories)

    async def parse(self, response: Response, **kwargs: Any) -> AsyncIterator[Any]:  # type: ignore[override]
        page = self._page_of(response)
        if 200 <= response.status < 300:
            await self._classified(page)
        for output in self._outputs(response, page):
            yield output

    async def _classified(self, page: Page) -> None:
        try:
            await maybe_deferred_to_future(self.batcher.submit(page))
        except Exception:
            # A classifier failure must not lose the page: it is recorded with
            # relevance 0 and its links followed at the lowest priority.
            assert self.crawler is not None and self.crawler.stats is not None
            stats = self.crawler.stats
            if not stats.get_value("focus/classify/errors"):
                self.logger.exception(
                    "Classifying %s failed; further failures are counted in focus/classify/errors",
                    page.url,
                )
            stats.inc_value("focus/classify/errors")
            self.strategy.assume(page, Verdict(0.0, 0, expand=False))

    def _nothing_in_flight(self) -> bool:
        return self.crawler is None or downloads_in_flight(self.crawler) == 0

    def _flush_batch(self) -> None:
        self.batcher.flush()
