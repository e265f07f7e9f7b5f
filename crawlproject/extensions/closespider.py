"""Scrapy's CloseSpider, with CLOSESPIDER_PAGECOUNT counting pages only.

Scrapy counts every response, so the robots.txt files our robots middleware
fetches would eat into a page budget; here they do not count.

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
from crawlproject.web import meta as keys

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response


class CloseSpider(ScrapyCloseSpider):
    def page_count(self, response: Response, request: Request, spider: Spider) -> None:
        if request.meta.get(keys.ROBOTSTXT):
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
        return extension

    def response_received(self, response: Response, request: Request, spider: Spider) -> None:
        if request.meta.get(keys.ROBOTSTXT) or not 200 <= response.status < 300:
            return
        self.count += 1
        if self.count == self.limit and self.crawler.engine is not None:
            deferred_from_coro(self.crawler.engine.close_spider_async(reason="closespider_okpagecount"))
