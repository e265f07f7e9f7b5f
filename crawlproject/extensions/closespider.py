"""Scrapy's CloseSpider, with CLOSESPIDER_PAGECOUNT counting pages only.

Scrapy counts every response, so the robots.txt files our robots middleware
fetches would eat into a page budget; here they do not count. A crawl
resumed from its JOBDIR counts what its earlier runs fetched: a budget is the
crawl's, not the run's (a page fetched again after a kill counts once).

:class:`OkPageBudget` closes the crawl after ``FOCUS_OK_PAGECOUNT`` pages
answered 2xx: on a partial snapshot of the web (WebKB) most links are dead,
and a budget of fetches is mostly 404s; the literature's corpus simulations
count pages actually fetched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.extensions.closespider import CloseSpider as ScrapyCloseSpider
from scrapy.utils.defer import deferred_from_coro

from crawlproject import config
from crawlproject.corpus.output import earlier_runs
from crawlproject.web import meta as keys
from crawlproject.web.page import page_key

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response


class CloseSpider(ScrapyCloseSpider):
    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        crawler.signals.connect(self.resume_counts, signal=signals.spider_opened)

    def resume_counts(self, spider: Spider) -> None:
        earlier = earlier_runs(spider)
        if earlier is None:
            return
        self.counter["pagecount"] += earlier.answered
        self.counter["itemcount"] += earlier.pages
        for budget, reason in (("pagecount", "closespider_pagecount"), ("itemcount", "closespider_itemcount")):
            if self.close_on.get(budget) and self.counter[budget] >= self.close_on[budget]:
                self._close_spider(reason)  # spent by the earlier runs
                return

    def page_count(self, response: Response, request: Request, spider: Spider) -> None:
        if request.meta.get(keys.ROBOTSTXT) or fetched_again(spider, request):
            return
        super().page_count(response, request, spider)


class OkPageBudget:
    """Close the crawl once FOCUS_OK_PAGECOUNT pages were answered 2xx
    (robots.txt fetches not counted); requests in flight still finish."""

    def __init__(self, crawler: Crawler, limit: int):
        self.crawler, self.limit, self.count = crawler, limit, 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        limit = config.get_int(crawler.settings, "FOCUS_OK_PAGECOUNT")
        if not limit:
            raise NotConfigured
        extension = cls(crawler, limit)
        crawler.signals.connect(extension.response_received, signal=signals.response_received)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        return extension

    def spider_opened(self, spider: Spider) -> None:
        earlier = earlier_runs(spider)
        if earlier is not None:
            self.count = earlier.ok
            if self.count >= self.limit and self.crawler.engine is not None:
                deferred_from_coro(self.crawler.engine.close_spider_async(reason="closespider_okpagecount"))

    def response_received(self, response: Response, request: Request, spider: Spider) -> None:
        if request.meta.get(keys.ROBOTSTXT) or not 200 <= response.status < 300 or fetched_again(spider, request):
            return
        self.count += 1
        if self.count == self.limit and self.crawler.engine is not None:
            deferred_from_coro(self.crawler.engine.close_spider_async(reason="closespider_okpagecount"))


def fetched_again(spider: Spider, request: Request) -> bool:
    """Whether *request*'s page was counted by an earlier run of the crawl."""
    earlier = earlier_runs(spider)
    return earlier is not None and earlier.recorded_before(page_key(request.url, request.meta))
