"""Where a crawl starts: seeds from ``-a seeds=…`` (a file or a comma list),
the spider class's ``seeds`` / ``start_urls``, or a Redis list
(crawlproject.distributed.seeds, as scrapy-redis's ``RedisSpider``) — each
seed checked by the same admission rule as every link."""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import threads

from crawlproject import config
from crawlproject.config import SettingsError
from crawlproject.distributed.seeds import RedisSeeds
from crawlproject.policy.admission import refusal
from crawlproject.policy.netsafety import NetworkPolicy
from crawlproject.web import meta as keys
from crawlproject.web.urls import without_fragment

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable

    from scrapy.crawler import Crawler


def parse_seeds(value: str, what: str = "seeds=") -> list[str]:
    """Seeds from a file (one URL per line, ``#`` comments) or a comma list.
    A value naming no URL is a file, whatever its name holds (commas too).
    *what* names the argument in errors (``--examples ``: not every list of
    URLs is seeds).

    >>> parse_seeds("http://a.test/, http://b.test/")
    ['http://a.test/', 'http://b.test/']
    >>> parse_seeds("x" * 5000)
    Traceback (most recent call last):
    ...
    crawlproject.config.SettingsError: seeds='xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…' is neither a file nor a comma-separated list of URLs (no such file)
    """  # noqa: E501 (a doctest's output line)
    if "://" in value:
        return [url.strip() for url in value.split(",") if url.strip()]
    path = Path(value)
    try:
        is_file = path.is_file()
    except OSError:  # a name too long to be a file's
        is_file = False
    if not is_file:
        shown = value if len(value) <= 80 else value[:30] + "…"
        first = value.split(",")[0].strip()
        if first and " " not in first and "." in first.split("/")[0]:  # a host name, as in a browser's address bar
            example = f"-a seeds=http://{first}" if what == "seeds=" else f"http://{first}"
            raise SettingsError(f"{what}{shown!r}: a {'seed' if what == 'seeds=' else 'URL'} needs its scheme, "
                                f"e.g. {example} (or name a file of URLs, one per line: there is no such file)")
        raise SettingsError(f"{what}{shown!r} is neither a file nor a comma-separated list of URLs (no such file)")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"seeds file {value}: cannot be read ({exc})") from None
    seeds, bad = [], []
    for number, line in enumerate(lines, 1):
        url = line.strip()
        if not url or url.startswith("#"):
            continue
        try:
            check_seed(url)
        except SettingsError as exc:
            bad.append((number, exc))
            continue
        seeds.append(url)
    if bad:
        number, first_error = bad[0]
        more = f" (and {len(bad) - 1} more line{'s' if len(bad) > 2 else ''})" if len(bad) > 1 else ""
        raise SettingsError(f"seeds file {value}, line {number}{more}: {first_error}")
    return seeds


def check_seed(url: str, network: NetworkPolicy | None = None) -> None:
    """A seed the crawl cannot fetch stops it at start, in one line."""
    reason = refusal(without_fragment(url))
    if reason is not None:
        raise SettingsError(
            f"seed {url!r} cannot be crawled ({reason.replace('_', ' ')}): "
            "seeds must be http:// or https:// URLs with a host"
        )
    reason = refusal(without_fragment(url), network) if network is not None else None
    if reason is not None:
        raise SettingsError(
            f"seed {url!r} is refused ({reason.replace('_', ' ')} address): a crawl reaches no "
            "private network unless FOCUS_ALLOWED_NETWORKS opens its range"
        )


class SeedsMixin:
    """Seeds from the argument, else the class's ``seeds``, else ``start_urls``."""

    #: Seed URLs (a list, or a file name / comma list as ``-a seeds`` takes).
    seeds: ClassVar[Iterable[str] | str] = ()
    seed_urls: list[str]

    def _read_seeds(self, argument: str | None) -> list[str]:
        found: Iterable[str] | str = argument or type(self).seeds or getattr(self, "start_urls", None) or ()
        urls = parse_seeds(found) if isinstance(found, str) else [str(url).strip() for url in found]
        for url in urls:
            check_seed(url)
        return urls

    def _check_seeds_reachable(self, crawler: Crawler) -> None:
        network = NetworkPolicy.from_settings(crawler.settings)
        for url in self.seed_urls:
            check_seed(url, network)

    def _seed(self, url: str) -> Request:
        """The request of a seed: fetched before any link (score +∞)."""
        return self._request(url, {keys.SCORE: math.inf, keys.SEED: True})

    def _request(self, url: str, meta: dict[str, Any], key: str | None = None) -> Request:
        raise NotImplementedError


class RedisSeedsMixin(SeedsMixin):
    """Seeds popped from a Redis list while the crawl runs: ``-a redis_key=…``
    or ``FOCUS_REDIS_SEEDS_KEY``. An idle worker takes more, and closes when
    the list is empty (after the shared frontier's grace time), unless
    ``FOCUS_REDIS_WAIT_FOR_SEEDS`` keeps it waiting for seeds. Redis is read
    in a thread: a slow Redis never stops the reactor."""

    #: A Redis list to read seeds from (crawlproject.distributed.seeds).
    redis_key: ClassVar[str] = ""
    redis_seeds: RedisSeeds | None = None

    def _open_redis_seeds(self, crawler: Crawler) -> None:
        self.redis_seeds = RedisSeeds.for_spider(self, crawler.settings)  # type: ignore[arg-type]
        self.wait_for_seeds = config.get_bool(crawler.settings, "FOCUS_REDIS_WAIT_FOR_SEEDS")
        self._waiting_logged = False
        self._seeds_popping = False  # a pop of the list is on its way
        self._seeds_found = True  # the last pop found seeds (or none was made yet)
        if self.redis_seeds is not None:
            crawler.signals.connect(self._more_redis_seeds, signals.spider_idle)

    async def _redis_start(self) -> AsyncIterator[Request]:
        if self.redis_seeds is not None:
            for url in await maybe_deferred_to_future(threads.deferToThread(self.redis_seeds.pop)):
                yield self._seed(url)

    def _more_redis_seeds(self) -> None:
        """Idle: seeds pushed to the Redis list meanwhile keep the crawl going.
        The list is read in a thread; the worker stays while a read is on its
        way or found seeds, and may close once one found none."""
        engine = self.crawler.engine  # type: ignore[attr-defined]
        if self.redis_seeds is None or engine is None:
            return
        if self._seeds_popping:
            raise DontCloseSpider
        if self._seeds_found:
            self._seeds_popping = True
            reading = threads.deferToThread(self.redis_seeds.pop)
            reading.addCallbacks(self._redis_seeds_read, self._redis_seeds_failed)
            raise DontCloseSpider
        self._seeds_found = True  # read again at the next idle moment
        if self.wait_for_seeds:
            if not self._waiting_logged:
                self._waiting_logged = True
                logger.info("Idle: waiting for seeds pushed to %s (FOCUS_REDIS_WAIT_FOR_SEEDS)", self.redis_seeds.key)
            raise DontCloseSpider

    def _redis_seeds_read(self, urls: list[str]) -> None:
        self._seeds_popping = False
        self._seeds_found = bool(urls)
        engine = self.crawler.engine  # type: ignore[attr-defined]
        for url in urls:
            if refusal(without_fragment(url)) is None:
                engine.crawl(self._seed(url))
        if urls:
            self._waiting_logged = False

    def _redis_seeds_failed(self, failure: Any) -> None:
        self._seeds_popping = False
        logger.warning("Reading seeds from Redis failed (%s); trying again when idle", failure.value)
