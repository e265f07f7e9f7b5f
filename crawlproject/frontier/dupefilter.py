"""Telling requests apart, through Scrapy's own extension points.

Scrapy tells two requests apart by their fingerprint
(``REQUEST_FINGERPRINTER_CLASS``: method, canonical URL, body) and filters
repeats with ``DUPEFILTER_CLASS``. The add-on installs one of each:

* :class:`CanonicalRequestFingerprinter`: Scrapy's fingerprint of the URL's
  canonical form (docs/methods.md §1: w3lib's canonical URL without ``:80``, ``..``
  segments or ``index.html``), so ``/d/index.html`` and ``/d/`` are one page;
* :class:`FrontierDupeFilter`: with that fingerprinter, the frontier itself
  filters repeats — it keys every queued URL by its canonical form, raises
  the score of a URL found again, shares its seen set between workers and
  keeps it in JOBDIR — and this filter only logs and counts what the
  frontier filtered, as Scrapy's ``RFPDupeFilter`` does. With another
  fingerprinter it filters as ``RFPDupeFilter``.

A project that sets its own ``REQUEST_FINGERPRINTER_CLASS`` or
``DUPEFILTER_CLASS`` gets exactly Scrapy's behaviour: the scheduler asks that
filter, and queues every request it lets through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from scrapy.dupefilters import BaseDupeFilter, RFPDupeFilter
from scrapy.utils.job import job_dir
from scrapy.utils.request import fingerprint

from crawlproject.frontier.codec import key_of

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler


class CanonicalRequestFingerprinter:
    """Scrapy's request fingerprint, of the request's canonical URL."""

    def __init__(self, crawler: Crawler | None = None):
        self._cache: WeakKeyDictionary[Request, bytes] = WeakKeyDictionary()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def fingerprint(self, request: Request) -> bytes:
        cached = self._cache.get(request)
        if cached is None:
            canonical = key_of(request)
            same = canonical == request.url
            cached = self._cache[request] = fingerprint(request if same else request.replace(url=canonical))
        return cached


class FrontierDupeFilter(RFPDupeFilter):
    """The frontier filters repeats (by canonical URL) when the crawl's
    fingerprinter is :class:`CanonicalRequestFingerprinter`; this filter
    logs and counts them (``dupefilter/filtered``, ``DUPEFILTER_DEBUG``)."""

    def __init__(self, *args, frontier_filters: bool = True, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        #: Whether the frontier filters (True) or this filter does, as Scrapy's.
        self.frontier_filters = frontier_filters

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        frontier_filters = isinstance(crawler.request_fingerprinter, CanonicalRequestFingerprinter)
        return cls(
            None if frontier_filters else job_dir(crawler.settings),
            debug=crawler.settings.getbool("DUPEFILTER_DEBUG"),
            fingerprinter=crawler.request_fingerprinter,
            frontier_filters=frontier_filters,
        )

    def request_seen(self, request: Request) -> bool:
        if self.frontier_filters:
            return False  # the frontier decides, and the scheduler logs through self.log
        return super().request_seen(request)


def frontier_filters(dupefilter: BaseDupeFilter) -> bool:
    """Whether the scheduler leaves telling repeats apart to the frontier."""
    return isinstance(dupefilter, FrontierDupeFilter) and dupefilter.frontier_filters
