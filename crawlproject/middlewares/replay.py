"""Downloader middleware: send every request to the WARC replay proxy.

With ``FOCUS_REPLAY_WARC`` the crawl starts its own replay server (a child
process on a free loopback port) for the length of the run; with
``FOCUS_REPLAY_PROXY`` it uses one already running (``scrapy replay``).
Either way *every* request goes to the replay, so a replayed crawl never
sends traffic anywhere but 127.0.0.1.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured

from crawlproject import config
from crawlproject.config import SettingsError
from crawlproject.replay.process import ReplayProcess

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class ReplayProxyMiddleware:
    def __init__(self, proxy_url: str, process: ReplayProcess | None = None):
        self.proxy_url = proxy_url
        self.process = process

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        proxy = config.get_str(settings, "FOCUS_REPLAY_PROXY")
        warc = config.get_str(settings, "FOCUS_REPLAY_WARC")
        if proxy:
            if not proxy.startswith(("http://127.", "http://localhost", "http://[::1]")):
                raise SettingsError(
                    f"FOCUS_REPLAY_PROXY must be a loopback http:// address, got {proxy!r}"
                )
            return cls(proxy)
        if not warc:
            raise NotConfigured
        if not Path(warc).is_file():
            raise SettingsError(f"FOCUS_REPLAY_WARC: no such file {warc!r}")
        process = ReplayProcess(
            warc,
            robots=config.get_str(settings, "FOCUS_REPLAY_ROBOTS"),
            latency_ms=config.get_float(settings, "FOCUS_REPLAY_LATENCY_MS", minimum=0),
            startup_timeout=config.get_float(
                settings, "FOCUS_REPLAY_STARTUP_TIMEOUT", minimum=1
            ),
        )
        logger.info("Replaying %s through %s", warc, process.proxy_url)
        middleware = cls(process.proxy_url, process)
        crawler.signals.connect(middleware.engine_stopped, signals.engine_stopped)
        return middleware

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        request.meta["proxy"] = self.proxy_url

    def engine_stopped(self) -> None:
        if self.process is not None:
            self.process.stop()
