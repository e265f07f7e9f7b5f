"""Politeness across workers: several crawl processes sharing one frontier
together hit a host no faster than one would.

Each host's next allowed fetch time lives in Redis (beside the shared
frontier, ``<FOCUS_REDIS_KEY>:polite``). When a request is about to go out —
in the download handler, after every queue and middleware, so nothing delays
it once its turn is reserved — the worker reserves the host's next turn with
one atomic script and waits for it. The delay is the larger of
``DOWNLOAD_DELAY`` and what the host's robots.txt asks (Crawl-delay,
Request-rate): N workers undercut neither.

On with ``FOCUS_SHARED_POLITENESS`` (for several workers on the Redis
frontier). Off, the handler is Scrapy's own: a worker's download slots keep
it polite.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet import reactor
from twisted.internet.task import deferLater

from crawlproject import config
from crawlproject.frontier import redis_scripts
from crawlproject.frontier.redis import redis_key

_LATE_MS = 10  # a turn taken this much late is given up for the next
logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response


class PoliteDownloadHandler(HTTP11DownloadHandler):
    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        self._crawler_for_politeness = crawler
        self.shared = config.get_bool(crawler.settings, "FOCUS_SHARED_POLITENESS")
        self.delay = crawler.settings.getfloat("DOWNLOAD_DELAY")
        self._server: Any = None
        self._reserve: Any = None
        self._robots: Any = None

    async def download_request(self, request: Request) -> Response:
        if self.shared:
            await self._take_turn(request)
        elif logger.isEnabledFor(logging.DEBUG):
            # When the request leaves this process: Scrapy's slot delay (and a
            # robots.txt Crawl-delay) was kept if these are far enough apart,
            # whatever a busy server later makes of the arrival times (tests read it).
            logger.debug("Request leaves: %s at %.4f", request.url, time.monotonic())
        return await super().download_request(request)

    async def _take_turn(self, request: Request) -> None:
        crawler = self._crawler_for_politeness
        if self._reserve is None:
            from scrapy_redis.connection import get_redis_from_settings

            self._server = get_redis_from_settings(crawler.settings)
            self._reserve = self._server.register_script(redis_scripts.RESERVE)
            self._robots = _robots_middleware(crawler)
        host = urlparse_cached(request).hostname or ""
        floor = self._robots.delay_floor(host) if self._robots is not None else 0.0
        delay = max(self.delay, floor)
        if delay <= 0:
            return
        assert crawler.spider is not None and crawler.stats is not None
        key = redis_key(crawler.settings, crawler.spider.name)
        while True:
            now_ms = int(time.time() * 1000)
            wait_ms = int(self._reserve(keys=[key], args=[now_ms, host, int(delay * 1000)]))
            if wait_ms > 0:
                crawler.stats.inc_value("focus/politeness/waits")
                # Sleep until the turn itself: Redis's answer took time already.
                until_turn = max(0.0, (now_ms + wait_ms) / 1000 - time.time())
                await maybe_deferred_to_future(deferLater(reactor, until_turn))  # type: ignore[arg-type]
            # Late for the turn (woken late, or a slow answer from Redis while
            # this process was busy)? The next worker's turn is near: sending
            # now would undercut it. Take a later turn instead.
            taken = time.time()
            if int(taken * 1000) - (now_ms + max(0, wait_ms)) <= _LATE_MS:
                # When the request leaves its turn: what a shared delay promises,
                # before network or server delays blur it (tests read this line).
                logger.debug("Politeness turn taken: %s at %.4f", host, taken)
                return
            crawler.stats.inc_value("focus/politeness/late_turns")


def _robots_middleware(crawler: Crawler) -> Any:
    from crawlproject.middlewares.robotstxt import RobotsTxtMiddleware

    assert crawler.engine is not None
    for middleware in crawler.engine.downloader.middleware.middlewares:
        if isinstance(middleware, RobotsTxtMiddleware):
            return middleware
    return None
