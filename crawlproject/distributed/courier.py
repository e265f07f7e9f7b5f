"""The shared frontier's round trips to Redis (crawlproject.distributed.frontier).

Without a reactor (tools, tests) a round trip is sent at once. In a crawl it
runs in a thread, one at a time and in order: a round trip asked for while
one is on its way is sent when it lands, with everything buffered by then.
When Redis is away, what was not sent goes back into the buffers, in order,
and the round trip is tried again, 0.2 s later and doubling up to 5 s.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from twisted.internet.defer import Deferred

    from crawlproject.distributed.wire import RoundTrip

__all__ = ["Courier"]

logger = logging.getLogger(__name__)

Commands = list[tuple[str, list[Any]]]


class Courier:
    def __init__(
        self,
        key: str,
        execute: Callable[[Commands], list[Any]],
        take: Callable[[int], RoundTrip],
        landed: Callable[[list[Any], RoundTrip], None],
        put_back: Callable[[RoundTrip], None],
        pending: Callable[[], bool],
        closing: Callable[[], bool],
        in_thread: Callable[..., Deferred[Any]] | None = None,
    ):
        self.key = key
        self._execute = execute  #: the network part (safe in a thread: it touches no frontier state)
        self._take = take  #: what the next round trip sends (popping that many URLs), out of the buffers
        self._landed_in = landed  #: what a round trip brought, applied to the frontier
        self._put_back = put_back  #: a round trip that failed: its buffers back, in order
        self._pending = pending  #: whether more is buffered to send
        self._closing = closing
        #: Runs a round trip off the reactor (``threads.deferToThread`` in a crawl); None: at once.
        self.in_thread = in_thread
        self._io: Deferred[Any] | None = None  # the round trip in flight
        self._again = False  # more to send once it lands
        self._pop = 0  # URLs the next round trip should pop
        self._failures = 0

    def send(self, pop: int = 0) -> None:
        """Send what is buffered (and pop *pop* URLs): at once without a
        reactor; else in a thread, after the round trip in flight."""
        if self.in_thread is None:
            self.now(pop)
            return
        self._pop = max(self._pop, pop)
        if self._io is not None:
            self._again = True
            return
        calls = self._take(self._pop)
        self._pop, self._again = 0, False
        self._io = self.in_thread(self._execute, calls.commands)
        self._io.addCallbacks(self._landed, self._failed, callbackArgs=(calls,), errbackArgs=(calls,))

    def now(self, pop: int = 0) -> None:
        """One round trip, here and now."""
        calls = self._take(pop)
        self._landed_in(self._execute(calls.commands), calls)

    def detach(self) -> Deferred[Any]:
        """The round trip in flight (fired when it lands), let go of: the
        frontier closes after it."""
        from twisted.internet.defer import succeed

        waiting: Deferred[Any] = self._io if self._io is not None else succeed(None)
        self._io = None
        return waiting

    def _landed(self, results: list[Any], calls: RoundTrip) -> None:
        self._io = None
        self._failures = 0
        self._landed_in(results, calls)
        if self._closing():  # landed while closing: close gives back what was leased
            return
        if self._again or self._pending():
            self.send()

    def _failed(self, failure: Any, calls: RoundTrip) -> None:
        """Redis away: keep what was not sent, in order, and try again."""
        self._io = None
        self._put_back(calls)
        self._pop = max(self._pop, calls.pop)
        self._failures += 1
        if self._failures == 1:
            logger.warning("A round trip to the shared frontier %s failed (%s); retrying", self.key, failure.value)
        from twisted.internet import reactor

        reactor.callLater(min(5.0, 0.2 * 2**self._failures), self.send)  # type: ignore[attr-defined]
