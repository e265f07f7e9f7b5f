"""Downloader middleware: send every request to the WARC replay proxy.

With ``FOCUS_REPLAY_WARC`` the crawl starts its own replay server (a child
process on a free loopback port) for the length of the run; with
``FOCUS_REPLAY_PROXY`` it uses one already running (``scrapy replay``).
Either way *every* request goes to the replay, so a replayed crawl never
sends traffic anywhere but 127.0.0.1.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.exceptions import NotConfigured

from crawlproject import config
from crawlproject.config import SettingsError
from crawlproject.replay.archive import parse_time
from crawlproject.replay.process import ReplayError, ReplayProcess

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

_PROXY_CHECK_TIMEOUT = 5.0


class ReplayProxyMiddleware:
    def __init__(self, proxy_url: str, process: ReplayProcess | None = None):
        self.proxy_url = proxy_url
        self.process = process

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        proxy = config.get_str(settings, "FOCUS_REPLAY_PROXY")
        warc = config.get_str(settings, "FOCUS_REPLAY_WARC")
        if proxy and warc:
            raise SettingsError(
                "FOCUS_REPLAY_WARC and FOCUS_REPLAY_PROXY are both set: set FOCUS_REPLAY_WARC to "
                "start a replay for this crawl, or FOCUS_REPLAY_PROXY to use one already running"
            )
        if proxy:
            return cls(check_replay_proxy(proxy))
        process = replay_for(settings)
        if process is None:
            raise NotConfigured
        logger.info("Replaying %s through %s", warc, process.proxy_url)
        middleware = cls(process.proxy_url, process)
        crawler.signals.connect(middleware.stop, signals.engine_stopped)
        crawler.signals.connect(middleware.stop, signals.spider_closed)
        return middleware

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        request.meta["proxy"] = self.proxy_url

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()


def replay_for(settings: BaseSettings) -> ReplayProcess | None:
    """The replay server FOCUS_REPLAY_WARC asks for, started (None without
    it); a clear error for a missing WARC or a bad FOCUS_REPLAY_* value."""
    warc = config.get_str(settings, "FOCUS_REPLAY_WARC")
    if not warc:
        return None
    if not Path(warc).is_file():
        raise SettingsError(f"FOCUS_REPLAY_WARC: no such file: {warc}")
    try:
        return ReplayProcess(
            warc,
            robots=config.get_str(settings, "FOCUS_REPLAY_ROBOTS"),
            faults=config.get_str(settings, "FOCUS_REPLAY_FAULTS"),
            as_of=_replay_time(config.get_str(settings, "FOCUS_REPLAY_AS_OF")),
            latency_ms=config.get_float(settings, "FOCUS_REPLAY_LATENCY_MS"),
            startup_timeout=config.get_float(settings, "FOCUS_REPLAY_STARTUP_TIMEOUT"),
        )
    except ReplayError as exc:
        raise SettingsError(f"FOCUS_REPLAY_WARC {warc}: {exc}") from None


def check_replay_proxy(proxy: str) -> str:
    """*proxy* parsed (not matched by prefix: ``http://127.0.0.1.evil.example``
    is not loopback) and answering; a clear error otherwise."""
    try:
        parts = urlsplit(proxy)
        host, port = parts.hostname or "", parts.port
    except ValueError:
        host, port = "", None
    if parts.scheme != "http" or port is None or not _is_loopback(host):
        raise SettingsError(
            f"FOCUS_REPLAY_PROXY must be http://127.0.0.1:PORT (a loopback address and a port), got {proxy!r}"
        )
    try:
        with socket.create_connection((host, port), timeout=_PROXY_CHECK_TIMEOUT):
            pass
    except OSError as exc:
        raise SettingsError(
            f"FOCUS_REPLAY_PROXY {proxy} does not answer ({exc.strerror or exc}): start it with "
            "`scrapy replay --warc FILE --port PORT`, or set FOCUS_REPLAY_WARC instead"
        ) from None
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _replay_time(value: str) -> str:
    """FOCUS_REPLAY_AS_OF checked at start-up (one clear line, not a replay that fails to start)."""
    if value:
        try:
            parse_time(value)
        except ValueError as exc:
            raise SettingsError(f"FOCUS_REPLAY_AS_OF: {exc}") from None
    return value
