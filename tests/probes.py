"""Scrapy extensions the tests load into real crawls (``-s EXTENSIONS=…``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler


class ReactorTicks:
    """Ticks every ``REACTOR_TICK`` seconds while the crawl runs and records
    the longest gap between two ticks (stat ``test/reactor_longest_gap_ms``):
    how long the reactor was ever kept from its timers."""

    def __init__(self, crawler: Crawler, interval: float):
        self.crawler, self.interval = crawler, interval
        self.last = 0.0
        self.longest = 0.0
        self.loop = task.LoopingCall(self.tick)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        interval = crawler.settings.getfloat("REACTOR_TICK")
        if not interval:
            raise NotConfigured
        probe = cls(crawler, interval)
        crawler.signals.connect(probe.opened, signals.spider_opened)
        crawler.signals.connect(probe.closed, signals.spider_closed)
        return probe

    def opened(self, spider: Any) -> None:
        self.last = time.monotonic()
        self.loop.start(self.interval, now=False)

    def tick(self) -> None:
        now = time.monotonic()
        self.longest = max(self.longest, now - self.last)
        self.last = now

    def closed(self, spider: Any) -> None:
        if self.loop.running:
            self.loop.stop()
        assert self.crawler.stats is not None
        self.crawler.stats.set_value("test/reactor_longest_gap_ms", round(self.longest * 1000))
