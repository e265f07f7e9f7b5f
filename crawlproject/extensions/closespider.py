"""Scrapy's CloseSpider, less the page budget, which the crawl's one
:class:`~crawlproject.frontier.budget.PageBudget` keeps and closes on
(``CLOSESPIDER_PAGECOUNT``, ``FOCUS_OK_PAGECOUNT``: robots.txt is not a page,
a page fetched again after a kill counts once).

What stays here is Scrapy's for the other limits (time, items, errors), with
one difference: a crawl resumed from its JOBDIR counts the items its earlier
runs scraped — a budget is the crawl's, not the run's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.extensions.closespider import CloseSpider as ScrapyCloseSpider

from crawlproject.corpus.output import earlier_runs
from crawlproject.frontier.budget import PageBudget

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response


class CloseSpider(ScrapyCloseSpider):
    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        crawler.signals.connect(self.resume_counts, signal=signals.spider_opened)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        PageBudget.of(crawler)  # built with the crawl, whichever scheduler runs it, even with no other limit
        return super().from_crawler(crawler)

    def resume_counts(self, spider: Spider) -> None:
        earlier = earlier_runs(spider)
        if earlier is None:
            return
        self.counter["itemcount"] += earlier.pages
        if self.close_on.get("itemcount") and self.counter["itemcount"] >= self.close_on["itemcount"]:
            self._close_spider("closespider_itemcount")  # spent by the earlier runs

    def page_count(self, response: Response, request: Request, spider: Spider) -> None:
        """The page budget is the crawl's PageBudget; Scrapy's
        CLOSESPIDER_PAGECOUNT_NO_ITEM (pages in a row with no item) stays here."""
        self.counter["pagecount_since_last_item"] += 1
        limit = self.close_on.get("pagecount_no_item")
        if limit and self.counter["pagecount_since_last_item"] >= limit:
            self._close_spider("closespider_pagecount_no_item")
