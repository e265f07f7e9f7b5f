"""A Scrapy extension for benchmarks: a user who labels pages while the crawl
runs (issue 29's steering benchmark). Every ``SIMULATED_USER_EVERY`` pages
(50) it takes the fetched page the crawl scored highest (its own relevance
verdict) that it has not labelled yet and labels it with its corpus label
(``FOCUS_LABELS`` / ``FOCUS_RELEVANT``), through the dashboard's own path
(crawlproject.extensions.dashboard: the label is checked, kept and applied),
until it has given ``SIMULATED_USER_LABELS`` (10).

    -s FOCUS_DASHBOARD_PORT=-1 -s 'EXTENSIONS={"bench.simulated_user.SimulatedUser": 700}'
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from crawlproject import config
from crawlproject.corpus.labels import is_relevant, load_labels, parse_categories
from crawlproject.extensions.dashboard import CrawlDashboard
from crawlproject.items import PageItem

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler


class SimulatedUser:
    def __init__(self, crawler: Crawler, labels: dict[str, str], relevant: tuple[str, ...], every: int, count: int):
        self.crawler = crawler
        self.labels, self.relevant = labels, relevant
        self.every, self.count = every, count
        self.pages = 0
        self.given = 0
        self._candidates: list[tuple[float, int, str]] = []  # (−relevance, order, URL): the best first

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        path = config.get_str(settings, "FOCUS_LABELS")
        if not path:
            raise NotConfigured("the simulated user needs FOCUS_LABELS and FOCUS_RELEVANT")
        labels = load_labels(path)
        relevant = parse_categories(config.get_str(settings, "FOCUS_RELEVANT"), set(labels.values()))
        user = cls(crawler, labels, relevant, settings.getint("SIMULATED_USER_EVERY", 50),
                   settings.getint("SIMULATED_USER_LABELS", 10))
        crawler.signals.connect(user.item_scraped, signals.item_scraped)
        return user

    def item_scraped(self, item: Any, spider: Any) -> None:
        if not isinstance(item, PageItem):
            return
        self.pages += 1
        status, relevance = item.get("status"), item.get("relevance")
        if (
            status is not None
            and 200 <= status < 300
            and relevance is not None
            and item["canonical_url"] in self.labels
        ):
            heapq.heappush(self._candidates, (-relevance, self.pages, item["canonical_url"]))
        if self.pages % self.every == 0 and self.given < self.count and self._candidates:
            _, _, url = heapq.heappop(self._candidates)
            dashboard = self.crawler.get_extension(CrawlDashboard)
            if dashboard is None:
                raise NotConfigured("the simulated user labels through the dashboard: set FOCUS_DASHBOARD_PORT")
            dashboard.add_label(url, is_relevant(self.labels.get(url), self.relevant))
            self.given += 1
            if self.crawler.stats is not None:
                self.crawler.stats.inc_value("bench/simulated_user/labels")
