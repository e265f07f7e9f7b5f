"""Politeness at the moment a request leaves: robots.txt's delay between two
requests to a host is never undercut, and several crawl processes sharing
one frontier together hit a host no faster than one would.

The download handler — after every queue and middleware, so nothing delays
a request once its turn is taken — reserves the host's next turn and waits
for it:

* **in one process**, against the floors robots.txt asks for (Crawl-delay,
  Request-rate; told by the robots middleware through the
  ``host_delay_floor`` signal). Scrapy's download slot already spaces its
  requests; this holds when a busy reactor sends two of them closer than the
  slot released them, for redirects and retries too.
* **across workers** (``FOCUS_SHARED_POLITENESS``, for several workers on
  the Redis frontier): each host's next allowed fetch time lives in Redis
  beside the shared frontier (``<FOCUS_REDIS_KEY>:polite``), reserved with
  one atomic script; the delay is the larger of ``DOWNLOAD_DELAY`` and the
  host's robots.txt floor. The round trip is awaited on ``redis.asyncio``
  (or in a thread without an asyncio reactor): it never blocks the reactor.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet import reactor, threads
from twisted.internet.task import deferLater

from crawlproject import config
from crawlproject import signals as focus_signals
from crawlproject.distributed import scripts as redis_scripts
from crawlproject.distributed.connection import async_redis_from_settings, redis_key

_LATE_MS = 10  # a turn taken this much late is given up for the next
_MIN_MARGIN_MS = 5.0  # how far ahead a shared turn is asked for, at least
logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response


class HostTurns:
    """The next time each host may be sent a request, in this process: a
    turn is reserved before waiting, so two requests waiting together leave
    *delay* apart."""

    def __init__(self, clock: Any = time.monotonic):
        self.clock = clock
        self._next: dict[str, float] = {}

    def reserve(self, host: str, delay: float) -> float:
        """Seconds to wait before the request to *host* may leave.

        >>> turns = HostTurns(clock=lambda: 100.0)
        >>> turns.reserve("a.test", 0.5), turns.reserve("a.test", 0.5), turns.reserve("b.test", 0.5)
        (0.0, 0.5, 0.0)
        """
        now = self.clock()
        at = max(now, self._next.get(host, 0.0))
        self._next[host] = at + delay
        return float(at - now)


class PoliteDownloadHandler(HTTP11DownloadHandler):
    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        self._crawler_for_politeness = crawler
        self.shared = config.get_bool(crawler.settings, "FOCUS_SHARED_POLITENESS")
        self.delay = crawler.settings.getfloat("DOWNLOAD_DELAY")
        self.floors: dict[str, float] = {}  # host → robots.txt's delay
        self.turns = HostTurns()
        self._redis: Any = None
        self._reserve: Any = None
        self._margin_ms = _MIN_MARGIN_MS
        crawler.signals.connect(self._floor, focus_signals.host_delay_floor)
        # A page rendered by the browser (FOCUS_RENDER, crawlproject.middlewares.render)
        # is fetched by scrapy-playwright's handler, after the same politeness turn.
        self.renderer: Any = None
        if config.get_choice(crawler.settings, "FOCUS_RENDER") != "never":
            from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

            self.renderer = ScrapyPlaywrightDownloadHandler.from_crawler(crawler)

    def _floor(self, host: str, delay: float) -> None:
        self.floors[host] = max(delay, self.floors.get(host, 0.0))

    async def download_request(self, request: Request) -> Response:
        host = urlparse_cached(request).hostname or ""
        if self.shared:
            await self._take_shared_turn(request, host)
        elif self.floors.get(host):
            wait = self.turns.reserve(host, self.floors[host])
            if wait > 0:
                self._crawler_for_politeness.stats.inc_value("focus/politeness/waits")  # type: ignore[union-attr]
                await _sleep(wait)
        if logger.isEnabledFor(logging.DEBUG):
            # When the request leaves this process: the delays were kept if
            # these are far enough apart, whatever a busy server later makes
            # of the arrival times (tests read it).
            logger.debug("Request leaves: %s at %.4f", request.url, time.monotonic())
        if self.renderer is not None and request.meta.get("playwright"):
            response: Response = await self.renderer.download_request(request)
            return response
        return await super().download_request(request)

    async def _take_shared_turn(self, request: Request, host: str) -> None:
        crawler = self._crawler_for_politeness
        delay = max(self.delay, self.floors.get(host, 0.0))
        if delay <= 0:
            return
        assert crawler.spider is not None and crawler.stats is not None
        key = redis_key(crawler.settings, crawler.spider.name)
        while True:
            # Ask for a turn far enough ahead that the answer arrives before
            # it: the margin follows the round trips Redis takes.
            sent = time.time()
            target_ms = int(sent * 1000) + int(self._margin_ms)
            wait_ms = await self._reserve_turn(key, target_ms, host, int(delay * 1000))
            round_trip_ms = (time.time() - sent) * 1000
            self._margin_ms = max(_MIN_MARGIN_MS, 0.8 * self._margin_ms + 0.2 * 1.5 * round_trip_ms)
            turn = (target_ms + max(0, wait_ms)) / 1000
            if turn > time.time():
                crawler.stats.inc_value("focus/politeness/waits")
                await _sleep(turn - time.time())
            # Late for the turn (woken late, or an answer slower than the
            # margin)? The next worker's turn is near: sending now would
            # undercut it. Take a later turn, further ahead.
            taken = time.time()
            if (taken - turn) * 1000 <= _LATE_MS:
                # When the request leaves its turn: what a shared delay promises,
                # before network or server delays blur it (tests read this line).
                logger.debug("Politeness turn taken: %s at %.4f", host, taken)
                return
            crawler.stats.inc_value("focus/politeness/late_turns")
            self._margin_ms = max(self._margin_ms * 2, 1.5 * round_trip_ms)

    async def _reserve_turn(self, key: str, now_ms: int, host: str, delay_ms: int) -> int:
        """One round trip to Redis, awaited without blocking the reactor."""
        if self._reserve is None:
            self._redis, asynchronous = async_redis_from_settings(self._crawler_for_politeness.settings)
            self._reserve = (self._redis.register_script(redis_scripts.RESERVE), asynchronous)
        script, asynchronous = self._reserve
        args = {"keys": [key], "args": [now_ms, host, delay_ms]}
        if asynchronous:
            return int(await script(**args))
        return int(await maybe_deferred_to_future(threads.deferToThread(script, **args)))

    async def close(self) -> None:
        await super().close()
        if self.renderer is not None:
            await self.renderer.close()
        if self._redis is not None and hasattr(self._redis, "aclose"):
            await self._redis.aclose()


async def _sleep(seconds: float) -> None:
    await maybe_deferred_to_future(deferLater(reactor, seconds))  # type: ignore[arg-type]
