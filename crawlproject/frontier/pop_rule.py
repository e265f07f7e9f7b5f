"""What a pop may take (Frontier.pop), as one object both frontiers read:
which download slots are busy, how far down the queue a free slot may reach
under the pages objective (the window, and the wait below it), and — for an
exploring pop — which slots alone may give (docs/architecture.md, "The
crawl's objective"; docs/methods.md §2, "Exploration by rule").

The memory frontier applies it to its heaps per slot
(crawlproject.frontier.slot_queue), the Redis frontier to what a worker
prefetched (crawlproject.distributed.prefetch); the arithmetic of the wait
lives here, once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Container, Sequence

__all__ = ["ANY_SLOT", "PopRule", "drained_soon", "needed_above", "within_reach"]


@dataclass(frozen=True, slots=True)
class PopRule:
    """The rule of one pop.

    * *busy*: the download slots that cannot take a request now. A URL of a
      busy slot is taken only when every slot with URLs is busy — never with
      *hold*, nor with a *window*.
    * *window* > 0 (a crawl whose budget is pages): a free slot's best goes
      only when fewer than *window* queued URLs rank above it; else nothing
      goes — the best wait for their slots.
    * *wait* > 0: the best free slot's best below the window goes too when
      the busy slots holding the URLs above it would not drain past it
      within *wait* of their delays (:func:`drained_soon`) and its score is
      :func:`within_reach` of the window's; never a slot in *barred* (the
      scheduler's: crawlproject.frontier.host_harvest) — the next free
      slot's best is considered instead.
    * *only*: an exploring pop — the best URL of the first of these slots,
      in their order, that is not busy and holds one, whatever its rank
      (window and wait do not apply); nothing when none of them does.
    * *floor*: nothing scoring below it goes (``math.inf``: seeds alone, while
      the crawl waits for its seeds' answers before it chooses a link).
    """

    busy: Container[str] = ()
    window: int = 0
    hold: bool = False
    wait: float = 0.0
    barred: Container[str] = ()
    only: Sequence[str] | None = None
    floor: float = -math.inf


#: Any slot: the best URL, Scrapy's global order.
ANY_SLOT = PopRule()


def drained_soon(above: int, holders: int, window: int, wait: float) -> bool:
    """Whether a free host's best URL below the pages objective's window is
    better left to wait: the *above* URLs that rank above it, on *holders*
    busy hosts each fetching one per delay, drain past it — it enters the
    window — within *wait* of those delays. It waits (above − window + 1) /
    holders delays.

    >>> drained_soon(16, 1, 16, wait=1), drained_soon(40, 1, 16, wait=1)
    (False, False)
    >>> drained_soon(17, 4, 16, wait=1), drained_soon(20, 4, 16, wait=1)
    (True, False)
    """
    return above - window + 1 < wait * holders


def needed_above(holders: int, window: int, wait: float) -> int:
    """How many URLs above a free host's best make it too long a wait
    (:func:`drained_soon` is False from there): a walk counting them may stop
    at this many.

    >>> needed_above(1, 16, 1.0), needed_above(4, 16, 1.0), needed_above(3, 16, 0.5)
    (16, 19, 17)
    """
    return window - 1 + math.ceil(wait * holders)


def within_reach(score: float, best: float, window_last: float) -> bool:
    """Whether a URL below the window is worth a free host's fetch by value:
    its *score* no further below the window's last (the N-th best) than the
    window's *best* is above it, or than half the last's own size (a window
    of ties has no spread) — a host whose best is far below what the window
    holds (an off-topic host's) never reaches.

    >>> within_reach(0.5, best=0.8, window_last=0.6), within_reach(0.1, best=0.8, window_last=0.6)
    (True, False)
    >>> within_reach(0.4, best=0.6, window_last=0.6), within_reach(0.2, best=0.6, window_last=0.6)
    (True, False)
    """
    return score >= window_last - max(best - window_last, abs(window_last) / 2)
