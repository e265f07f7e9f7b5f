"""What crawlproject needs from Scrapy that has no public API, in one place.

Scrapy tells no one when it is done with a request: every public signal
misses some path (``response_received`` misses failures and redirects,
``request_left_downloader`` misses requests refused by a downloader
middleware and cache hits, no signal follows an errback). The engine itself
knows: it removes a request from its slot when the response or failure was
fully processed by the spider — or when a middleware turned it into another
request. The scheduler settles leases there.

tests/test_scrapy_private.py checks each of these against the installed
Scrapy, so an upgrade that moves them fails loudly there, not silently in a
crawl.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Request
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


def on_request_finished(crawler: Crawler, callback: Callable[[Request], None]) -> None:
    """Call ``callback(request)`` each time the engine is done with a request.

    Must be called once the engine opened the spider (from a scheduler's
    ``open``): ``ExecutionEngine._slot.remove_request`` is wrapped.
    """
    engine = engine_of(crawler)
    slot = getattr(engine, "_slot", None)
    if slot is None or not hasattr(slot, "remove_request"):
        raise RuntimeError(
            "this Scrapy version has no ExecutionEngine._slot.remove_request: "
            "crawlproject.scrapy_private needs updating"
        )
    remove = slot.remove_request

    def remove_request(request: Request) -> None:
        remove(request)
        try:
            callback(request)
        except Exception:  # never break the engine's bookkeeping
            logger.exception("Settling %s failed", request)

    slot.remove_request = remove_request


def engine_of(crawler: Crawler) -> Any:
    """The crawler's engine, or ``None`` before the crawl started (Scrapy's
    ``Crawler.engine`` raises then)."""
    try:
        return crawler.engine
    except RuntimeError:
        return None


def slot_key(crawler: Crawler, request: Request) -> str:
    """The key of the download slot *request* will use (AutoThrottle reads
    it the same way: ``Downloader.get_slot_key``)."""
    return str(crawler.engine.downloader.get_slot_key(request))  # type: ignore[union-attr]


def hold_slot_delay(crawler: Crawler, request: Request, floor: float) -> None:
    """Make the download slot of *request*, if it exists yet, wait at least
    *floor* seconds between two requests, its random jitter never taking
    it below (``Downloader.slots``, ``Slot.delay``, ``Slot.jitter``)."""
    downloader = crawler.engine.downloader  # type: ignore[union-attr]
    slot = downloader.slots.get(downloader.get_slot_key(request))
    if slot is None:
        return
    if slot.delay < floor:
        slot.delay = floor
    if slot.delay * (1 - slot.jitter) < floor:
        slot.jitter = 0.0


def downloads_in_flight(crawler: Crawler) -> int:
    """Requests the downloader holds now (``Downloader.active``)."""
    engine = engine_of(crawler)
    return len(engine.downloader.active) if engine is not None else 0
