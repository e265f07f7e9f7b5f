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
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

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



class SlotWatch:
    """The download slots that cannot start one more download now.

    A slot is busy with as many requests active (transferring or waiting in
    the slot) plus *handed_out* (given to the engine, not in the downloader
    yet: the downloader middlewares run first) as the slot's concurrency; or,
    for a slot with a delay, one request outstanding or its delay not over
    since its last download (``Downloader.slots``, ``Slot.active``,
    ``Slot.concurrency``, ``Slot.delay``, ``Slot.lastseen``). A slot not made
    yet takes ``CONCURRENT_REQUESTS_PER_DOMAIN`` requests, ``DOWNLOAD_DELAY``
    apart.

    The downloader keeps a slot for every host met in the last minute —
    thousands on a crawl of many hosts — and reading all of them for every
    request handed out made the cost per request grow with the hosts. Only
    the slots a request reached (:meth:`reached`, on
    ``request_reached_downloader``) since they were last found idle are
    read: an idle slot (nothing active, its delay over) turns busy only when
    a request reaches it — ``lastseen`` moves only while it has requests,
    and AutoThrottle and the robots.txt delay floor change a delay only then.
    """

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.watched: set[str] = set()
        #: After :meth:`busy`: the earliest ``time.monotonic()`` at which a slot
        #: busy only by its delay (nothing outstanding) can take a request, or None.
        self.next_ready: float | None = None

    def reached(self, request: Request) -> None:
        """*request* entered its download slot (the downloader named it in
        the request's ``download_slot`` meta)."""
        from scrapy.core.downloader import Downloader

        key = request.meta.get(Downloader.DOWNLOAD_SLOT)
        if key is not None:
            self.watched.add(str(key))

    def busy(self, handed_out: Mapping[str, int], wait_in_slot: bool = False) -> set[str]:
        """The slots that cannot take a request now. With *wait_in_slot* a
        slot with a delay and nothing outstanding can, even before its delay
        is over: the request waits the rest of it in the slot, and the
        downloader's own timer sends it — no one has to wake the engine then."""
        engine = engine_of(self.crawler)
        downloader = getattr(engine, "downloader", None) if engine is not None else None
        slots = getattr(downloader, "slots", None) or {}
        now = time.monotonic()  # Slot.lastseen's clock
        busy = set()
        self.next_ready = None
        for key in [*self.watched, *(key for key in handed_out if key not in self.watched)]:
            slot = slots.get(key)
            if slot is None:
                self.watched.discard(key)
                continue
            outstanding = len(slot.active) + handed_out.get(key, 0)
            delay = getattr(slot, "delay", 0.0)
            concurrency = getattr(slot, "concurrency", 1)
            lastseen = getattr(slot, "lastseen", 0.0)
            if outstanding >= concurrency or (delay and (outstanding or (not wait_in_slot and now - lastseen < delay))):
                busy.add(key)
                if not outstanding and (self.next_ready is None or lastseen + delay < self.next_ready):
                    self.next_ready = lastseen + delay
            elif not slot.active and concurrency >= 1:
                self.watched.discard(key)  # idle: only a request reaching it can make it busy
        if handed_out:
            settings = self.crawler.settings
            concurrency = max(1, settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"))
            delayed = settings.getfloat("DOWNLOAD_DELAY") > 0
            busy.update(key for key, count in handed_out.items()
                        if key not in slots and count and (delayed or count >= concurrency))
        return busy


def default_slot_key(request: Request) -> str:
    """The download slot Scrapy's downloader gives *request* (without
    ``CONCURRENT_REQUESTS_PER_IP``): its ``download_slot`` meta, else its host."""
    from scrapy.core.downloader import Downloader
    from scrapy.utils.httpobj import urlparse_cached

    slot = request.meta.get(Downloader.DOWNLOAD_SLOT)
    return str(slot) if slot is not None else urlparse_cached(request).hostname or ""


def wake_engine(crawler: Crawler) -> None:
    """Ask the engine to look for requests again now (``_Slot.nextcall``):
    work that arrived off the reactor (a Redis round trip in a thread) is
    taken at once, not at the engine's next heartbeat (5 s)."""
    engine = engine_of(crawler)
    slot = getattr(engine, "_slot", None) if engine is not None else None
    if slot is not None:
        slot.nextcall.schedule()
