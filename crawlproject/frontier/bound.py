"""The memory frontier's bound: past ``max_size`` queued URLs in memory, the
lowest-ranked move out — to disk (crawlproject.frontier.spill), to come back
as memory drains, or dropped with a warning and a count
(``FOCUS_FRONTIER_OVERFLOW``).

The invariant that keeps the order exact lives here: while anything is
spilled, every item in memory ranks at least as high as the best spilled one.
A min-heap, built once the frontier first fills up, finds the lowest item in
memory; it keeps stale entries (items re-scored or popped since) and skips
them, and is rebuilt with the other heaps when those outnumber live ones.
"""

from __future__ import annotations

import heapq
import logging
import struct
from pathlib import Path
from typing import TYPE_CHECKING

from crawlproject.frontier.base import PushOutcome
from crawlproject.frontier.items import ALL_BITS, RANK, ItemTables
from crawlproject.frontier.spill import SpillStore, remove_orphans

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

_RANK = struct.Struct(">QQ")  # order, tie: the first RANK bytes of an item
_LOWEST = struct.Struct(">QQQ")  # ~order, ~tie, fingerprint: the lowest-ranked item first

OVERFLOW_CHOICES = ("spill", "drop")


class MemoryBound:
    """What leaves memory when the frontier is full, and what comes back.

    :param entries: the frontier's queued items in memory by fingerprint (shared:
        an eviction takes its item out of it).
    :param overflow: ``"spill"`` to disk (under *spill_dir*, else a temporary
        folder) or ``"drop"``.
    :param forget: called with the fingerprint of a dropped item (its journal entry goes).
    """

    def __init__(self, max_size: int, overflow: str, spill_dir: Path | None, entries: dict[int, bytes],
                 tables: ItemTables, forget: Callable[[int], None], stats: StatsCollector | None = None):
        if overflow not in OVERFLOW_CHOICES:
            raise ValueError(f"overflow must be one of {OVERFLOW_CHOICES}, got {overflow!r}")
        self.max_size = max_size
        self.overflow = overflow
        self.spill_dir = spill_dir
        self.stats = stats
        self._entries = entries
        self._tables = tables
        self._forget = forget
        #: URLs queued on disk (None until the first spill).
        self.spill: SpillStore | None = None
        self._lowest: list[bytes] | None = None
        self._warned = False

    def remove_orphans(self, jobdir: Path) -> None:
        """A crawl resumed from *jobdir*: the spill stores a stopped run left
        there are scratch (the journal holds the queue), deleted."""
        if self.spill_dir == jobdir and (orphans := remove_orphans(jobdir)):
            logger.info("Removed %(count)d spill stores a stopped run left in %(path)s (scratch: the journal "
                        "holds the queue)", {"count": orphans, "path": jobdir})
            if self.stats is not None:
                self.stats.inc_value("frontier/spill_orphans_removed", orphans)

    def holds(self, fp: int) -> bool:
        """Whether *fp* is queued, in memory or on the spill."""
        return fp in self._entries or (self.spill is not None and self.spill.rank(fp) is not None)

    def take_out(self, fp: int) -> bytes | None:
        """The queued item of *fp*, taken out of memory or the spill (None: not queued)."""
        item = self._entries.pop(fp, None)
        if item is None and self.spill is not None:
            item = self.spill.remove(fp)
        return item

    @property
    def heap_size(self) -> int:
        """Entries in the lowest-first heap, stale ones included."""
        return len(self._lowest) if self._lowest is not None else 0

    def added(self, fp: int, item: bytes) -> None:
        """*item* was queued in memory."""
        if self._lowest is not None:
            heapq.heappush(self._lowest, _lowest_item(item, fp))

    def rebuild(self) -> None:
        if self._lowest is not None:
            self._lowest = [_lowest_item(item, fp) for fp, item in self._entries.items()]
            heapq.heapify(self._lowest)

    def place(self, rank: bytes, force: bool) -> PushOutcome:
        """Where a new URL of *rank* goes: memory (ADDED; ADDED_EVICTING when
        the lowest there was dropped for it; ADDED_OVER_BOUND when forced past
        a full memory), the spill (SPILLED: it ranks below the best spilled
        one, or memory is full of better ones), or nowhere (REJECTED_FULL)."""
        best_spilled = self.spill.best() if self.spill is not None else None
        if not force and best_spilled is not None and rank > best_spilled:
            return PushOutcome.SPILLED  # memory holds nothing below the best spilled
        if len(self._entries) < self.max_size:
            return PushOutcome.ADDED
        if self.evict_below(rank):
            return PushOutcome.ADDED_EVICTING if self.overflow == "drop" else PushOutcome.ADDED
        if force:
            return PushOutcome.ADDED_OVER_BOUND
        if self.overflow == "spill":
            return PushOutcome.SPILLED
        self.dropped()
        return PushOutcome.REJECTED_FULL

    def evict_below(self, rank: bytes) -> bool:
        """Move the lowest-ranked item in memory out (to the spill, or
        dropped) if it ranks below *rank*; b"" ranks above everything."""
        if self._lowest is None:
            self._lowest = [_lowest_item(item, fp) for fp, item in self._entries.items()]
            heapq.heapify(self._lowest)
        lowest, entries = self._lowest, self._entries
        while lowest:
            inverted_order, inverted_tie, fp = _LOWEST.unpack(lowest[0])
            worst = _RANK.pack(inverted_order ^ ALL_BITS, inverted_tie ^ ALL_BITS)
            entry = entries.get(fp)
            if entry is None or entry[:RANK] != worst:
                heapq.heappop(lowest)  # stale
                continue
            if rank and worst <= rank:
                return False  # the worst item in memory ranks at least as high
            heapq.heappop(lowest)
            del entries[fp]
            if self.overflow == "spill":
                self.spill_item(fp, entry)
            else:
                self._tables.release(entry)
                self._forget(fp)
                self.dropped()
            return True
        return False

    def spill_item(self, fp: int, item: bytes) -> None:
        if self.spill is None:
            self.spill = SpillStore(self.spill_dir)
            logger.info(
                "The frontier holds %(max)d URLs in memory (FOCUS_FRONTIER_MAX): the lowest-ranked "
                "now spill to disk in %(path)s and come back as the queue drains",
                {"max": self.max_size, "path": self.spill.folder},
            )
        self.spill.put(fp, item)
        if self.stats is not None:
            self.stats.inc_value("frontier/spilled")

    def dropped(self) -> None:
        """An URL was dropped for want of room: counted, and said once."""
        if self.stats is not None:
            self.stats.inc_value("frontier/dropped")
        if not self._warned:
            self._warned = True
            logger.warning(
                "The frontier is full (FOCUS_FRONTIER_MAX=%(max)d) and FOCUS_FRONTIER_OVERFLOW=drop: "
                "the lowest-scored requests are dropped from now on; every drop is counted in "
                "frontier/dropped (FOCUS_FRONTIER_OVERFLOW=spill keeps them on disk)",
                {"max": self.max_size},
            )

    def refill(self) -> list[tuple[int, bytes]]:
        """The best spilled items to bring back, once memory is half empty."""
        spill = self.spill
        if spill is None or not len(spill) or len(self._entries) > self.max_size // 2:
            return []
        room = max(1, (3 * self.max_size) // 4 - len(self._entries))
        back = spill.take(room)
        if self.stats is not None:
            self.stats.inc_value("frontier/refilled")
        return back

    def close(self) -> None:
        if self.spill is not None:
            self.spill.close()
            self.spill = None


def _lowest_item(item: bytes, fp: int) -> bytes:
    order, tie = _RANK.unpack_from(item)
    return _LOWEST.pack(order ^ ALL_BITS, tie ^ ALL_BITS, fp)
