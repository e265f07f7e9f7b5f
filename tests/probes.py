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


class RedisCallsOnReactor:
    """Counts the Redis commands sent while the spider is open (stat
    ``test/redis_calls``, blocking and asyncio clients alike) and those a
    blocking client sent from the reactor's thread
    (``test/redis_calls_on_reactor``): each of those held the reactor for a
    round trip, whatever the machine's load — the direct sign that the
    reactor-gap probe can only infer from timing. (The asyncio client's
    commands run on the reactor's thread without holding it.)"""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.open = False
        self.on_reactor = self.total = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        import redis.asyncio.connection
        import redis.connection
        from twisted.python import threadable

        probe = cls(crawler)
        blocking = redis.connection.AbstractConnection
        send = blocking.send_packed_command

        def counted(connection: Any, *args: Any, **kwargs: Any) -> Any:
            if probe.open:
                probe.total += 1
                probe.on_reactor += threadable.isInIOThread()
            return send(connection, *args, **kwargs)

        awaited = redis.asyncio.connection.AbstractConnection
        send_async = awaited.send_packed_command

        async def counted_async(connection: Any, *args: Any, **kwargs: Any) -> Any:
            probe.total += probe.open
            return await send_async(connection, *args, **kwargs)

        blocking.send_packed_command = counted  # type: ignore[method-assign]
        awaited.send_packed_command = counted_async  # type: ignore[method-assign]
        crawler.signals.connect(probe.opened, signals.spider_opened)
        crawler.signals.connect(probe.closed, signals.spider_closed)
        return probe

    def opened(self, spider: Any) -> None:
        self.open = True

    def closed(self, spider: Any) -> None:
        self.open = False
        assert self.crawler.stats is not None
        self.crawler.stats.set_value("test/redis_calls", self.total)
        self.crawler.stats.set_value("test/redis_calls_on_reactor", self.on_reactor)
