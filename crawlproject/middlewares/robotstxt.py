"""Downloader middleware: robots.txt as RFC 9309 says (docs/methods.md §1), in place of
Scrapy's ``RobotsTxtMiddleware`` and with its settings — ``ROBOTSTXT_OBEY``
turns it on and off, ``ROBOTSTXT_PARSER`` parses (our Protego adapter,
:class:`ProtegoRobotParser`, which also reads Request-rate and Sitemap
lines), ``ROBOTSTXT_USER_AGENT`` names us, ``robots_parsed`` is sent for
every file parsed — with what a crawler that runs for days needs on top:

* policies per scheme + host + port, fetched once, before that origin's first
  page, and cached for ``FOCUS_ROBOTSTXT_EXPIRY`` seconds;
* the first ``FOCUS_ROBOTSTXT_MAX_BYTES`` (500 KiB) of the file are parsed
  (the RFC's minimum), whatever the page-size cut;
* 2xx: the rules; 4xx: no rules, everything allowed; 5xx or no answer:
  everything disallowed *for now* — the file is asked for again after
  ``FOCUS_ROBOTSTXT_RETRY_AFTER`` seconds, and a copy fetched earlier is
  used meanwhile if there is one;
* ``Crawl-delay`` and ``Request-rate`` (the slower of the two) become a floor
  under the delay between two requests to the host: the host's download
  slot waits at least that long (crawlproject.scrapy_private), and the
  download handler, told by the ``host_delay_floor`` signal, holds every
  request back until the floor has passed since the host's last one left
  (crawlproject.distributed.politeness) — so neither AutoThrottle, jitter,
  concurrency, redirects nor retries undercut it; an origin asking for more
  than ``FOCUS_ROBOTSTXT_MAX_CRAWL_DELAY`` seconds is skipped, as Nutch does.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from protego import Protego
from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http.request import NO_CALLBACK
from scrapy.robotstxt import RobotParser, decode_robotstxt
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler, load_object
from twisted.internet.defer import Deferred

from crawlproject import config
from crawlproject import signals as focus_signals
from crawlproject.scrapy_private import hold_slot_delay, slot_key
from crawlproject.web import meta as keys
from crawlproject.web.urls import DEFAULT_PORTS

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

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
        interval = getattr(self.parser, "request_interval", None)  # ours; other parsers have none
        return max(delay, interval(user_agent) or 0.0) if interval is not None else delay


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
    return ProtegoRobotParser(body, None)


class ProtegoRobotParser(RobotParser):
    """Scrapy's robots.txt parser interface over Protego (``ROBOTSTXT_PARSER``),
    with what Scrapy's own adapter keeps to itself: the ``Request-rate``
    and the ``Sitemap`` lines."""

    def __init__(self, robotstxt_body: bytes, spider: Spider | None):
        self._rules = Protego.parse(decode_robotstxt(robotstxt_body, spider))

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> Self:
        return cls(robotstxt_body, crawler.spider if crawler else None)

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        return bool(self._rules.can_fetch(_text(url), _text(user_agent)))

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        delay = self._rules.crawl_delay(_text(user_agent))
        return None if delay is None else float(delay)

    def request_interval(self, user_agent: str | bytes) -> float | None:
        """Seconds per request the ``Request-rate`` line asks for, if any."""
        rate = self._rules.request_rate(_text(user_agent))
        if rate is None or rate.requests <= 0:
            return None
        return float(rate.seconds) / rate.requests

    def sitemaps(self) -> list[str]:
        """The ``Sitemap:`` URLs the file lists."""
        return list(self._rules.sitemaps)


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


class RobotsTxtMiddleware:
    #: robots.txt fetches go before every page (Scrapy's value).
    DOWNLOAD_PRIORITY = 1000

    def __init__(self, crawler: Crawler):
        settings = crawler.settings
        if not settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        self.crawler = crawler
        self.stats: StatsCollector = crawler.stats  # type: ignore[assignment]
        self.user_agent: str | None = settings.get("ROBOTSTXT_USER_AGENT")
        self.default_user_agent: str = settings.get("USER_AGENT")
        self.parser_class = load_object(settings.get("ROBOTSTXT_PARSER"))
        build_from_crawler(self.parser_class, crawler, b"")  # the parser's dependencies are there
        self.max_bytes = config.get_int(settings, "FOCUS_ROBOTSTXT_MAX_BYTES")
        self.max_crawl_delay = config.get_float(settings, "FOCUS_ROBOTSTXT_MAX_CRAWL_DELAY")
        self.policies = RobotsPolicies(
            expiry=config.get_float(settings, "FOCUS_ROBOTSTXT_EXPIRY"),
            retry_after=config.get_float(settings, "FOCUS_ROBOTSTXT_RETRY_AFTER"),
            parse=lambda body: build_from_crawler(self.parser_class, crawler, body),
        )
        self._fetching: dict[str, Deferred[RobotsPolicy]] = {}
        self._delay_floors: dict[str, float] = {}  # download slot → seconds
        # Before a request enters a download slot's queue, and after
        # AutoThrottle has adjusted the slot for a response (it connected
        # first), before the slot's next request starts.
        crawler.signals.connect(self._enforce_delay, signals.request_reached_downloader)
        crawler.signals.connect(self._enforce_delay, signals.response_downloaded)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    async def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if request.meta.get("dont_obey_robotstxt"):
            return
        if urlparse_cached(request).scheme not in DEFAULT_PORTS:
            return
        policy = await self._policy(robots_key(request.url), request)
        user_agent = self._user_agent(request)
        if not policy.allows(request.url, user_agent):
            self.stats.inc_value("robotstxt/forbidden")
            logger.debug("Forbidden by robots.txt: %s", request.url)
            request.meta[keys.REFUSED] = "robots.txt"  # this URL; the page may have another
            raise IgnoreRequest("Forbidden by robots.txt")
        delay = policy.delay(user_agent)
        if delay > self.max_crawl_delay:
            self.stats.inc_value("robotstxt/crawl_delay_too_long")
            raise IgnoreRequest(f"Crawl-delay {delay}s exceeds FOCUS_ROBOTSTXT_MAX_CRAWL_DELAY")
        if delay:
            key = slot_key(self.crawler, request)
            if self._delay_floors.get(key, 0.0) < delay:
                self._delay_floors[key] = delay
                self.stats.inc_value("robotstxt/crawl_delay_hosts")
                logger.info("Honouring a robots.txt delay of %.2fs for %s", delay, key)
                host = urlparse_cached(request).hostname or ""
                self.crawler.signals.send_catch_log(focus_signals.host_delay_floor, host=host, delay=delay)

    def delay_floor(self, host: str) -> float:
        """The delay robots.txt asks between two requests to *host* (a
        download slot key), 0 when it asks none."""
        return self._delay_floors.get(host, 0.0)

    def _user_agent(self, request: Request) -> str:
        agent: Any = self.user_agent or request.headers.get(b"User-Agent", self.default_user_agent)
        return agent.decode("latin-1") if isinstance(agent, bytes) else str(agent)

    async def _policy(self, key: str, request: Request) -> RobotsPolicy:
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
            policy = await self._fetch(key, request)
        finally:
            del self._fetching[key]
        pending.callback(policy)
        return policy

    async def _fetch(self, key: str, for_request: Request) -> RobotsPolicy:
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
        self.stats.inc_value("robotstxt/request_count")
        try:
            assert self.crawler.engine is not None
            response = await self.crawler.engine.download_async(request)
        except Exception as exc:  # noqa: BLE001 (any failure means "unreachable")
            self.stats.inc_value("robotstxt/exception_count")
            self.stats.inc_value(f"robotstxt/exception_count/{type(exc).__name__}")
            self.stats.inc_value("robotstxt/unreachable")
            return self.policies.store_unreachable(key)
        self.stats.inc_value("robotstxt/response_count")
        self.stats.inc_value(f"robotstxt/response_status_count/{response.status}")
        if 200 <= response.status < 300:
            try:
                policy = self.policies.store_text(key, response.body[: self.max_bytes])
            except Exception:  # noqa: BLE001 (a garbage file must never stop the crawl)
                self.stats.inc_value("robotstxt/unparsable_allow_all")
                return self.policies.store_status(key, 404)
            await self.crawler.signals.send_catch_log_async(
                signal=signals.robots_parsed, robotparser=policy.parser, request=for_request
            )
            return policy
        if response.status >= 500:
            self.stats.inc_value("robotstxt/unreachable")
        return self.policies.store_status(key, response.status)

    def _enforce_delay(self, request: Request, spider: Spider | None = None, **_: Any) -> None:
        """Before the downloader schedules *request*: its slot's delay is at
        least the floor robots.txt set, and jitter never takes it below."""
        if not self._delay_floors:
            return
        floor = self._delay_floors.get(slot_key(self.crawler, request))
        if floor is not None:
            hold_slot_delay(self.crawler, request, floor)
