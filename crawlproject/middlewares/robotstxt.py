"""Downloader middleware: robots.txt as RFC 9309 says (SPEC §1), built on
Scrapy's ``RobotsTxtMiddleware`` — ``ROBOTSTXT_OBEY`` turns it on and off,
``ROBOTSTXT_PARSER`` (Protego by default) parses, ``ROBOTSTXT_USER_AGENT``
names us — with what a crawler that runs for days needs on top:

* policies per scheme + host + port, fetched once, before that origin's first
  page, and cached for ``FOCUS_ROBOTSTXT_EXPIRY`` seconds;
* the first ``FOCUS_ROBOTSTXT_MAX_BYTES`` (500 KiB) of the file are parsed
  (the RFC's minimum), whatever the page-size cut;
* 2xx: the rules; 4xx: no rules, everything allowed; 5xx or no answer:
  everything disallowed *for now* — the file is asked for again after
  ``FOCUS_ROBOTSTXT_RETRY_AFTER`` seconds, and a copy fetched earlier is
  used meanwhile if there is one;
* ``Crawl-delay`` and ``Request-rate`` (the slower of the two) become a floor
  under the delay of the origin's download slot, enforced before each
  request enters the downloader, so neither AutoThrottle, jitter nor
  concurrency undercuts them; an origin asking for more than
  ``FOCUS_ROBOTSTXT_MAX_CRAWL_DELAY`` seconds is skipped, as Nutch does.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyRobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler
from twisted.internet.defer import Deferred

from crawlproject import config
from crawlproject import meta as keys
from crawlproject.scrapy_private import download_slot
from crawlproject.urls import DEFAULT_PORTS

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.robotstxt import RobotParser

logger = logging.getLogger(__name__)


def robots_key(url: str) -> str:
    """The origin a robots.txt governs: scheme, host and port (RFC 9309 §2.3).

    >>> robots_key("HTTP://Example.com/a?b")
    'http://example.com:80'
    """
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or DEFAULT_PORTS.get(scheme, 0)
    return f"{scheme}://{(parts.hostname or '').lower()}:{port}"


@dataclass(frozen=True)
class RobotsPolicy:
    """What robots.txt says for one origin."""

    parser: RobotParser | None  # None: no rules, see allow_all
    allow_all: bool = True

    def allows(self, url: str, user_agent: str) -> bool:
        if self.parser is None:
            return self.allow_all
        return bool(self.parser.allowed(url, user_agent))

    def delay(self, user_agent: str) -> float:
        """Seconds between two requests: the slower of Crawl-delay and Request-rate."""
        if self.parser is None:
            return 0.0
        delay = float(self.parser.crawl_delay(user_agent) or 0.0)
        protego: Any = getattr(self.parser, "rp", None)  # Scrapy's Protego adapter keeps it here
        rate = protego.request_rate(user_agent) if hasattr(protego, "request_rate") else None
        if rate is not None and rate.requests > 0:
            delay = max(delay, rate.seconds / rate.requests)
        return delay


ALLOW_ALL = RobotsPolicy(None, allow_all=True)
DISALLOW_ALL = RobotsPolicy(None, allow_all=False)


class RobotsPolicies:
    """The cache of policies by origin, with RFC 9309's rules for errors.

    :param parse: robots.txt bytes → a Scrapy ``RobotParser``.
    :param clock: seconds, monotonic (tests pass their own).
    """

    def __init__(
        self,
        expiry: float,
        retry_after: float,
        clock: Callable[[], float] = time.monotonic,
        parse: Callable[[bytes], RobotParser] | None = None,
    ):
        self.expiry = expiry
        self.retry_after = retry_after
        self.clock = clock
        self.parse = parse or _protego
        self._current: dict[str, tuple[RobotsPolicy, float]] = {}  # key → (policy, valid until)
        self._last_good: dict[str, RobotsPolicy] = {}

    def lookup(self, key: str) -> RobotsPolicy | None:
        """The policy to apply now, or ``None``: fetch robots.txt."""
        current = self._current.get(key)
        if current is None or current[1] <= self.clock():
            return None
        return current[0]

    def store_text(self, key: str, body: bytes) -> RobotsPolicy:
        return self._good(key, RobotsPolicy(self.parse(body)))

    def store_status(self, key: str, status: int) -> RobotsPolicy:
        """A non-2xx answer: 4xx means no rules; anything else, unreachable."""
        if 400 <= status < 500:
            return self._good(key, ALLOW_ALL)
        return self.store_unreachable(key)

    def store_unreachable(self, key: str) -> RobotsPolicy:
        """Disallow all until retried — or keep the last good copy meanwhile."""
        policy = self._last_good.get(key, DISALLOW_ALL)
        self._current[key] = (policy, self.clock() + self.retry_after)
        return policy

    def _good(self, key: str, policy: RobotsPolicy) -> RobotsPolicy:
        self._current[key] = (policy, self.clock() + self.expiry)
        self._last_good[key] = policy
        return policy


def _protego(body: bytes) -> RobotParser:
    from scrapy.robotstxt import ProtegoRobotParser

    return ProtegoRobotParser(body, None)


class RobotsTxtMiddleware(ScrapyRobotsTxtMiddleware):
    def __init__(self, crawler: Crawler):
        super().__init__(crawler)  # NotConfigured unless ROBOTSTXT_OBEY
        settings = crawler.settings
        self.max_bytes = config.get_int(settings, "FOCUS_ROBOTSTXT_MAX_BYTES", minimum=1024)
        self.max_crawl_delay = config.get_float(settings, "FOCUS_ROBOTSTXT_MAX_CRAWL_DELAY", minimum=0)
        self.policies = RobotsPolicies(
            expiry=config.get_float(settings, "FOCUS_ROBOTSTXT_EXPIRY", minimum=1),
            retry_after=config.get_float(settings, "FOCUS_ROBOTSTXT_RETRY_AFTER", minimum=1),
            parse=lambda body: build_from_crawler(self._parserimpl, crawler, body),
        )
        self._fetching: dict[str, Deferred[RobotsPolicy]] = {}
        self._delay_floors: dict[str, float] = {}  # download slot → seconds
        # Before a request enters a download slot's queue, and after
        # AutoThrottle has adjusted the slot for a response (it connected
        # first), before the slot's next request starts.
        crawler.signals.connect(self._enforce_delay, signals.request_reached_downloader)
        crawler.signals.connect(self._enforce_delay, signals.response_downloaded)

    async def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if request.meta.get("dont_obey_robotstxt"):
            return
        if urlparse_cached(request).scheme not in DEFAULT_PORTS:
            return
        policy = await self._policy(robots_key(request.url))
        user_agent = self._user_agent(request)
        if not policy.allows(request.url, user_agent):
            self._stats.inc_value("robotstxt/forbidden")
            logger.debug("Forbidden by robots.txt: %s", request.url)
            request.meta[keys.REFUSED] = "robots.txt"  # this URL; the page may have another
            raise IgnoreRequest("Forbidden by robots.txt")
        delay = policy.delay(user_agent)
        if delay > self.max_crawl_delay:
            self._stats.inc_value("robotstxt/crawl_delay_too_long")
            raise IgnoreRequest(f"Crawl-delay {delay}s exceeds FOCUS_ROBOTSTXT_MAX_CRAWL_DELAY")
        if delay:
            slot_key, _ = download_slot(self.crawler, request)
            if self._delay_floors.get(slot_key, 0.0) < delay:
                self._delay_floors[slot_key] = delay
                self._stats.inc_value("robotstxt/crawl_delay_hosts")
                logger.info("Honouring a robots.txt delay of %.2fs for %s", delay, slot_key)

    def delay_floor(self, host: str) -> float:
        """The delay robots.txt asks between two requests to *host* (a
        download slot key), 0 when it asks none."""
        return self._delay_floors.get(host, 0.0)

    def _user_agent(self, request: Request) -> str:
        agent: Any = self._robotstxt_useragent or request.headers.get(b"User-Agent", self._default_useragent)
        return agent.decode("latin-1") if isinstance(agent, bytes) else str(agent)

    async def _policy(self, key: str) -> RobotsPolicy:
        policy = self.policies.lookup(key)
        if policy is not None:
            return policy
        pending = self._fetching.get(key)
        if pending is not None:  # another request of this origin is fetching it
            waiting: Deferred[RobotsPolicy] = Deferred()

            def relay(result: RobotsPolicy) -> RobotsPolicy:
                waiting.callback(result)
                return result

            pending.addCallback(relay)
            return await maybe_deferred_to_future(waiting)
        pending = self._fetching[key] = Deferred()
        try:
            policy = await self._fetch(key)
        finally:
            del self._fetching[key]
        pending.callback(policy)
        return policy

    async def _fetch(self, key: str) -> RobotsPolicy:
        scheme, _, host_port = key.partition("://")
        host, _, port = host_port.rpartition(":")
        netloc = host if int(port) == DEFAULT_PORTS.get(scheme) else host_port
        request = Request(
            f"{scheme}://{netloc}/robots.txt",
            priority=self.DOWNLOAD_PRIORITY,
            meta={
                "dont_obey_robotstxt": True,
                keys.ROBOTSTXT: True,
                keys.ANY_CONTENT_TYPE: True,
                keys.MAX_BYTES: self.max_bytes,
            },
            callback=NO_CALLBACK,
        )
        self._stats.inc_value("robotstxt/request_count")
        try:
            assert self.crawler.engine is not None
            response = await self.crawler.engine.download_async(request)
        except Exception as exc:  # noqa: BLE001 (any failure means "unreachable")
            self._stats.inc_value(f"robotstxt/exception_count/{type(exc).__name__}")
            self._stats.inc_value("robotstxt/unreachable")
            return self.policies.store_unreachable(key)
        self._stats.inc_value("robotstxt/response_count")
        self._stats.inc_value(f"robotstxt/response_status_count/{response.status}")
        if 200 <= response.status < 300:
            try:
                return self.policies.store_text(key, response.body[: self.max_bytes])
            except Exception:  # noqa: BLE001 (a garbage file must never stop the crawl)
                self._stats.inc_value("robotstxt/unparsable_allow_all")
                return self.policies.store_status(key, 404)
        if response.status >= 500:
            self._stats.inc_value("robotstxt/unreachable")
        return self.policies.store_status(key, response.status)

    def _enforce_delay(self, request: Request, spider: Spider | None = None, **_: Any) -> None:
        """Before the downloader schedules *request*: its slot's delay is at
        least the floor robots.txt set, and jitter never takes it below."""
        if not self._delay_floors:
            return
        slot_key, slot = download_slot(self.crawler, request)
        floor = self._delay_floors.get(slot_key)
        if floor is None or slot is None:
            return
        if slot.delay < floor:
            slot.delay = floor
        if slot.delay * (1 - slot.jitter) < floor:
            slot.jitter = 0.0
