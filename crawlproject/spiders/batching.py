"""Micro-batching of page classification inside a running crawl.

A classifier call has a fixed cost (input checks, one matrix product per
call) that dwarfs the per-page cost, so pages are classified a batch at a
time: a spider callback submits its page and awaits the result; the batch
is classified when it is full, when the downloader has nothing in flight
(no other page can join), or after a short wait, whichever comes first.
While a callback waits, the downloader keeps fetching, so the crawl rate is
unchanged; what a batch costs is a few milliseconds of delay before its
links reach the frontier.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Generic, TypeVar

from twisted.internet import defer
from twisted.python.failure import Failure

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from twisted.internet.base import DelayedCall

logger = logging.getLogger(__name__)

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")


class MicroBatcher(Generic[ItemT, ResultT]):
    """Collects items and runs ``process(items) -> results`` on them together.

    ``nothing_in_flight()`` says whether more items can arrive soon; when it
    is true, a submitted item is processed at once rather than after *wait*.
    """

    def __init__(
        self,
        process: Callable[[Sequence[ItemT]], Sequence[ResultT]],
        max_size: int,
        wait: float,
        nothing_in_flight: Callable[[], bool] = lambda: True,
    ):
        self.process = process
        self.max_size = max_size
        self.wait = wait
        self.nothing_in_flight = nothing_in_flight
        self._items: list[ItemT] = []
        self._waiters: list[defer.Deferred[ResultT]] = []
        self._timer: DelayedCall | None = None
        self.batches = 0
        self.items = 0

    def submit(self, item: ItemT) -> defer.Deferred[ResultT]:
        waiter: defer.Deferred[ResultT] = defer.Deferred()
        self._items.append(item)
        self._waiters.append(waiter)
        if len(self._items) >= self.max_size or self.wait <= 0 or self.nothing_in_flight():
            self.flush()
        elif self._timer is None:
            from twisted.internet import reactor

            self._timer = reactor.callLater(self.wait, self.flush)  # type: ignore[attr-defined,arg-type,unused-ignore]
        return waiter

    def flush(self) -> None:
        """Process everything waiting now (also called when the crawl closes)."""
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        items, waiters = self._items, self._waiters
        self._items, self._waiters = [], []
        if not items:
            return
        self.batches += 1
        self.items += len(items)
        try:
            results = self.process(items)
        except Exception:  # noqa: BLE001 (each waiting page gets the error)
            failure = Failure()
            for waiter in waiters:
                waiter.errback(failure)
            return
        for waiter, result in zip(waiters, results, strict=True):
            waiter.callback(result)
