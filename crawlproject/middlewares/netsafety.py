"""Downloader middleware, first in line: no request leaves for a private
network or a refused scheme (crawlproject.policy.netsafety)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest

from crawlproject.policy.admission import refusal
from crawlproject.policy.netsafety import NetworkPolicy
from crawlproject.web import meta as keys

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class NetworkSafetyMiddleware:
    """Downloader middleware, first in line: refuses every request the
    policy refuses (counted in ``focus/refused/<why>``), redirects and
    robots.txt fetches included, before anything connects anywhere."""

    def __init__(self, crawler: Crawler, policy: NetworkPolicy):
        self.stats = crawler.stats
        self.policy = policy
        self._logged: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler, NetworkPolicy.from_settings(crawler.settings))

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        problem = refusal(request.url, self.policy)
        if problem is None:
            return
        assert self.stats is not None
        self.stats.inc_value(f"focus/refused/{problem}")
        if problem not in self._logged:
            self._logged.add(problem)
            logger.warning(
                "Refused %(url)s (%(why)s); further such refusals are counted in focus/refused/%(why)s "
                "(FOCUS_ALLOWED_NETWORKS opens network ranges for an intranet crawl)",
                {"url": request.url[:200], "why": problem},
            )
        request.meta[keys.REFUSED] = "network policy"  # not a page: this URL is never fetched
        raise IgnoreRequest(f"refused by the network policy: {problem}")
