"""Downloader middleware: robots.txt with Protego, an expiring cache, and
Crawl-delay honoured (SPEC §1).

Before the first page of a host, its /robots.txt is fetched (RFC 9309):

* 2xx: parsed with Protego; the crawler's user agent group applies, else ``*``;
* 4xx: no rules, everything allowed;
* 5xx or no answer: the host is treated as fully disallowed until the policy
  expires (the RFC's "unreachable" rule), which also keeps dead hosts cheap.

Policies are cached per host for ``FOCUS_ROBOTSTXT_EXPIRY`` seconds. A
``Crawl-delay`` becomes the download delay of that host's slot (no jitter,
so it is never undercut); a host asking for more than
``FOCUS_ROBOTSTXT_MAX_CRAWL_DELAY`` seconds is skipped, as Nutch does.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protego import Protego
from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

from crawlproject import config
from crawlproject.middlewares.pagesize import ANY_CONTENT_TYPE_KEY

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

#: Request meta flag of the robots.txt fetches this middleware makes.
ROBOTSTXT_REQUEST_KEY = "focus_robotstxt"

logger = logging.getLogger(__name__)


@dataclass
class HostPolicy:
    """What robots.txt says for one host, and until when we believe it."""

    parser: Protego | None  # None: no parsed rules (see allow_all)
    allow_all: bool
    expires_at: float
    delay_applied: bool = False

    def allows(self, url: str, user_agent: str) -> bool:
        if self.parser is None:
            return self.allow_all
        return bool(self.parser.can_fetch(url, user_agent))

    def crawl_delay(self, user_agent: str) -> float:
        if self.parser is None:
            return 0.0
        delay = self.parser.crawl_delay(user_agent)
        return float(delay) if delay else 0.0


class RobotsTxtMiddleware:
    DOWNLOAD_PRIORITY = 1000

    def __init__(
        self,
        crawler: Crawler,
        user_agent: str,
        expiry: float,
        max_crawl_delay: float,
    ):
        self.crawler = crawler
        self.stats: StatsCollector = crawler.stats  # type: ignore[assignment]
        self.user_agent = user_agent
        self.expiry = expiry
        self.max_crawl_delay = max_crawl_delay
        self._policies: dict[str, HostPolicy | Deferred[HostPolicy]] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        if not config.get_bool(settings, "FOCUS_ROBOTSTXT_OBEY"):
            raise NotConfigured
        user_agent = settings.get("ROBOTSTXT_USER_AGENT") or settings.get("USER_AGENT")
        return cls(
            crawler,
            user_agent=str(user_agent),
            expiry=config.get_float(settings, "FOCUS_ROBOTSTXT_EXPIRY", minimum=1),
            max_crawl_delay=config.get_float(
                settings, "FOCUS_ROBOTSTXT_MAX_CRAWL_DELAY", minimum=0
            ),
        )

    async def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if request.meta.get("dont_obey_robotstxt"):
            return
        parsed = urlparse_cached(request)
        if parsed.scheme not in ("http", "https"):
            return
        policy = await self._policy(parsed.scheme, parsed.netloc)
        if not policy.allows(request.url, self.user_agent):
            self.stats.inc_value("robotstxt/forbidden")
            logger.debug("Forbidden by robots.txt: %s", request.url)
            raise IgnoreRequest("Forbidden by robots.txt")
        delay = policy.crawl_delay(self.user_agent)
        if delay > self.max_crawl_delay:
            self.stats.inc_value("robotstxt/crawl_delay_too_long")
            raise IgnoreRequest(
                f"Crawl-delay {delay}s exceeds FOCUS_ROBOTSTXT_MAX_CRAWL_DELAY"
            )
        if delay and not policy.delay_applied:
            self._apply_crawl_delay(request, delay)
            policy.delay_applied = True

    async def _policy(self, scheme: str, netloc: str) -> HostPolicy:
        cached = self._policies.get(netloc)
        if isinstance(cached, Deferred):
            # Another request of this host is fetching robots.txt: wait for it.
            waiting: Deferred[HostPolicy] = Deferred()

            def relay(policy: HostPolicy) -> HostPolicy:
                waiting.callback(policy)
                return policy

            cached.addCallback(relay)
            return await maybe_deferred_to_future(waiting)
        if cached is not None and cached.expires_at > time.monotonic():
            return cached
        if cached is not None:
            self.stats.inc_value("robotstxt/expired")
        pending: Deferred[HostPolicy] = Deferred()
        self._policies[netloc] = pending
        policy = await self._fetch_policy(f"{scheme}://{netloc}/robots.txt")
        self._policies[netloc] = policy
        pending.callback(policy)
        return policy

    async def _fetch_policy(self, robots_url: str) -> HostPolicy:
        request = Request(
            robots_url,
            priority=self.DOWNLOAD_PRIORITY,
            meta={"dont_obey_robotstxt": True, ANY_CONTENT_TYPE_KEY: True, ROBOTSTXT_REQUEST_KEY: True},
            callback=NO_CALLBACK,
        )
        self.stats.inc_value("robotstxt/request_count")
        expires_at = time.monotonic() + self.expiry
        try:
            assert self.crawler.engine is not None
            response = await self.crawler.engine.download_async(request)
        except Exception as exc:  # noqa: BLE001 (any failure means "unreachable")
            self.stats.inc_value(f"robotstxt/exception_count/{type(exc).__name__}")
            self.stats.inc_value("robotstxt/unreachable_disallow_all")
            return HostPolicy(None, allow_all=False, expires_at=expires_at)
        return self._policy_from_response(response, expires_at)

    def _policy_from_response(self, response: Response, expires_at: float) -> HostPolicy:
        status = response.status
        self.stats.inc_value(f"robotstxt/response_status_count/{status}")
        if 200 <= status < 300:
            text = response.body.decode("utf-8", errors="replace")
            try:
                parser = Protego.parse(text)
            except Exception:  # noqa: BLE001 (a bad file must never stop the crawl)
                self.stats.inc_value("robotstxt/unparsable_allow_all")
                return HostPolicy(None, allow_all=True, expires_at=expires_at)
            return HostPolicy(parser, allow_all=True, expires_at=expires_at)
        if 400 <= status < 500:
            return HostPolicy(None, allow_all=True, expires_at=expires_at)
        self.stats.inc_value("robotstxt/unreachable_disallow_all")
        return HostPolicy(None, allow_all=False, expires_at=expires_at)

    def _apply_crawl_delay(self, request: Request, delay: float) -> None:
        assert self.crawler.engine is not None
        downloader = self.crawler.engine.downloader
        key = downloader.get_slot_key(request)
        slot_settings = downloader.per_slot_settings.setdefault(key, {})
        slot_settings["delay"] = max(delay, float(slot_settings.get("delay", 0.0)))
        slot_settings["jitter"] = 0.0
        slot = downloader.slots.get(key)
        if slot is not None:
            slot.delay = max(slot.delay, delay)
            slot.jitter = 0.0
        self.stats.inc_value("robotstxt/crawl_delay_hosts")
        logger.info("Honouring Crawl-delay of %.2fs for %s", delay, key)
