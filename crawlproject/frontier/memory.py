"""In-memory best-first frontier with a bound, leases, per-slot diversity
and a disk spill (docs/methods.md §1), compact enough for millions of queued URLs.

Layout, chosen for O(log n) push and pop in about 200 bytes per queued URL:

* every queued URL is one ``bytes`` item (crawlproject.frontier.items): rank
  (score, then a tie key in Scrapy's queue order), payload, origin and
  download-slot references, the rest of the URL;
* the seen set and the index of queued items are keyed by a 60-bit hash of
  the key (a small int), not by the URL string: the URL is stored once, in
  its item;
* the order is a heap per download slot under the diversity, window and
  wait rules (crawlproject.frontier.slot_queue);
* past ``max_size`` the lowest-ranked items spill to disk or are dropped
  (crawlproject.frontier.bound);
* every heap is compacted when stale items outnumber live ones.

Here: the queue's entries, joining the order, the bound and the leases
(crawlproject.frontier.leases: a popped URL is leased until acknowledged,
refused or released; the seen and refused sets; the host cap). With
``jobdir`` every change is journaled (crawlproject.frontier.journal) and the
frontier loaded on open.
"""

from __future__ import annotations

import logging
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawlproject import config
from crawlproject.frontier.base import FrontierEntry, PushOutcome
from crawlproject.frontier.bound import MemoryBound
from crawlproject.frontier.items import (
    HEADER,
    ItemTables,
    fingerprint,
    order_of,
    score_of,
)
from crawlproject.frontier.journal import JobJournal
from crawlproject.frontier.leases import MemoryLeases
from crawlproject.frontier.pop_rule import ANY_SLOT
from crawlproject.frontier.rescoring import BULK_SHARE, moved_items
from crawlproject.frontier.seen import seen_set_settings
from crawlproject.frontier.slot_queue import SlotQueue
from crawlproject.frontier.spill import SpillStore
from crawlproject.frontier.ties import TieKeys, scrapy_tie_order

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from crawlproject.frontier.pop_rule import PopRule

logger = logging.getLogger(__name__)

_RANK = struct.Struct(">QQ")  # order, tie: the first RANK bytes of an item

# Rebuild heaps when stale items exceed live entries by this factor (plus a
# floor, so small frontiers never bother).
_COMPACT_FACTOR = 2
_COMPACT_FLOOR = 4096


class MemoryFrontier:
    """Best-first (or FIFO) frontier kept in this process's memory.

    :param max_size: at most this many queued URLs in memory (MAX_BUFFER);
        forced pushes and released leases may exceed it.
    :param host_batch: k, the number of distinct download slots per batch of pops.
    :param fifo: ignore scores: pure first-in first-out (breadth-first).
    :param jobdir: save the frontier here on close, load it on open.
    :param lifo: equal scores pop last-in first-out (Scrapy's default
        memory queue) rather than first-in first-out.
    :param start_lifo: the same for start requests, which pop after other
        requests of equal score; ``None``: they share the other requests' order.
    :param overflow: past ``max_size``, ``"spill"`` the lowest-ranked URLs to
        disk (under *spill_dir*, else a temporary folder) or ``"drop"`` them.
    """

    def __init__(
        self,
        max_size: int,
        host_batch: int = 1,
        fifo: bool = False,
        jobdir: str | Path | None = None,
        stats: StatsCollector | None = None,
        host_cap: int = 0,
        seen: tuple[int, int, float] = (1_000_000, 10_000_000, 1e-4),
        lifo: bool = False,
        start_lifo: bool | None = False,
        overflow: str = "spill",
        spill_dir: str | Path | None = None,
    ):
        if max_size < 1:
            raise ValueError(f"max_size must be ≥ 1, got {max_size}")
        if host_batch < 1:
            raise ValueError(f"host_batch must be ≥ 1, got {host_batch}")
        self.max_size = max_size
        self.host_batch = host_batch
        self.fifo = fifo
        self.jobdir = Path(jobdir) if jobdir else None
        self.stats = stats
        self.host_cap = host_cap  # at most this many pages fetched per origin (0: no cap)
        self.seen = seen  # the seen set: exact up to, Bloom capacity, Bloom error (frontier.seen)
        self.lifo = lifo
        self.start_lifo = start_lifo
        self.overflow = overflow
        self.spill_dir = Path(spill_dir) if spill_dir else self.jobdir
        self._clear()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        from scrapy.utils.job import job_dir

        settings = crawler.settings
        lifo, start_lifo = scrapy_tie_order(settings)
        return cls(
            max_size=config.get_int(settings, "FOCUS_FRONTIER_MAX"),
            host_batch=config.get_int(settings, "FOCUS_FRONTIER_HOST_BATCH"),
            fifo=config.get_choice(settings, "FOCUS_FRONTIER_ORDER") == "fifo",
            jobdir=job_dir(settings),
            stats=crawler.stats,
            host_cap=config.get_int(settings, "FOCUS_MAX_PAGES_PER_HOST"),
            seen=seen_set_settings(settings),
            lifo=lifo,
            start_lifo=start_lifo,
            overflow=config.get_choice(settings, "FOCUS_FRONTIER_OVERFLOW"),
        )

    def _clear(self) -> None:
        self._tables = ItemTables()
        self._entries: dict[int, bytes] = {}  # fingerprint → queued item (in memory)
        self._leases = MemoryLeases(self.seen, self.host_cap)
        self._ties = TieKeys(self.lifo, self.start_lifo)
        self._order = SlotQueue(self.host_batch, self._tables, self._live)
        self._journal = JobJournal(self.stats)  # nothing journaled without a JOBDIR
        self._bound = MemoryBound(self.max_size, self.overflow, self.spill_dir, self._entries, self._tables,
                                  self._journal.dequeued, self.stats)

    @property
    def _spill(self) -> SpillStore | None:
        return self._bound.spill

    # -- Frontier protocol -------------------------------------------------

    def open(self) -> None:
        if self.jobdir is None:
            return
        self._bound.remove_orphans(self.jobdir)
        state = self._journal.resume(self.jobdir)
        if state is not None:
            self._load(state)
            logger.info(
                "Resuming crawl from %(path)s: %(queued)d URLs queued, %(fetched)d fetched",
                {"path": self._journal.path, "queued": len(self), "fetched": len(self._leases.fetched)},
            )
        self._journal.attach(self._tables)

    def close(self) -> None:
        for fp in list(self._leases.leased):
            self._release(fp)
        if self._journal.close():
            logger.info(
                "Frontier saved in %(path)s: %(queued)d URLs queued", {"path": self.jobdir, "queued": len(self)}
            )
        self._bound.close()

    def flush(self) -> None:
        """Make every change so far durable (a no-op without JOBDIR)."""
        self._journal.commit()

    def push(
        self,
        key: str,
        score: float,
        payload: Any = None,
        force: bool = False,
        url: str | None = None,
        slot: str | None = None,
        start: bool = False,
    ) -> PushOutcome:
        key_bytes = key.encode()
        fp = fingerprint(key_bytes)
        refusal = self._leases.refusal(fp, key, url, force, self._tables)
        if refusal is not None:
            return refusal
        order = 0 if self.fifo else order_of(score)
        old = self._entries.get(fp)
        outcome = PushOutcome.ADDED
        if old is not None:
            if order >= HEADER.unpack_from(old)[0]:
                return PushOutcome.DUPLICATE
            self._tables.release(old)  # its heap items are stale from now on
            outcome = PushOutcome.RAISED
        elif self._spill is not None and (spilled := self._spill.rank(fp)) is not None:
            if order >= _RANK.unpack(spilled)[0]:
                return PushOutcome.DUPLICATE
            self._tables.release(self._spill.remove(fp) or b"")
            outcome = PushOutcome.RAISED
        if force:
            self._leases.fetched.discard(fp)  # fetched once, queued again on purpose
        tie = self._ties.next(start)
        rank = _RANK.pack(order, tie)
        if old is None:
            place = self._bound.place(rank, force)
            if place is PushOutcome.SPILLED:
                item = self._tables.pack(order, tie, key_bytes, payload, url, slot)
                self._bound.spill_item(fp, item)
                self._journal.queued(fp, item)
                return PushOutcome.RAISED if outcome is PushOutcome.RAISED else PushOutcome.SPILLED
            if place is not PushOutcome.ADDED:  # evicting, over the bound, or rejected
                outcome = place
                if place is PushOutcome.REJECTED_FULL:
                    return outcome
        item = self._tables.pack(order, tie, key_bytes, payload, url, slot)
        self._enqueue(fp, item)
        self._journal.queued(fp, item)
        return outcome

    def pop(self, rule: PopRule = ANY_SLOT) -> FrontierEntry | None:
        """The best URL *rule* allows (Frontier.pop, crawlproject.frontier.pop_rule)."""
        for fp, back in self._bound.refill():
            self._enqueue(fp, back)
        item = self._order.pop(self._take, rule)
        return None if item is None else self._tables.entry(item, self.fifo)

    def claim(
        self, key: str, score: float, payload: Any = None, url: str | None = None, slot: str | None = None
    ) -> bool:
        key_bytes = key.encode()
        fp = fingerprint(key_bytes)
        if self._leases.known(fp):
            return False
        queued = self._bound.take_out(fp)
        if queued is not None:  # its heap items are stale from now on
            self._tables.release(queued)
        order = 0 if self.fifo else order_of(score)
        item = self._tables.pack(order, self._ties.next(False), key_bytes, payload, url, slot)
        self._leases.lease(fp, item)
        self._journal.queued(fp, item)  # durable as queued until acknowledged
        return True

    def ack(self, key: str) -> None:
        fp = fingerprint(key.encode())
        item = self._leases.acknowledge(fp)
        if item is not None:
            self._tables.release(item)
            self._journal.fetched(fp, ItemTables.origin(item))  # a page done: the unit of durability

    def release(self, key: str) -> None:
        fp = fingerprint(key.encode())
        if fp in self._leases:
            self._release(fp)

    def refuse(self, key: str, url: str) -> None:
        fp, url_fp = fingerprint(key.encode()), fingerprint(url.encode())
        item = self._leases.refuse(fp, url_fp)  # refused, not fetched: its host's page does not count
        if item is not None:
            self._tables.release(item)
        self._journal.refused(fp, url_fp)

    def rescore(self, scorer: Callable[[str, float, Any], float], keys: Collection[str] | None = None) -> None:
        """Re-score what is in memory (spilled URLs keep their scores until
        they come back: they rank below everything in memory). A few keys:
        each moves to its new place (the heaps keep the old item as a stale
        one). Most of the queue (a learner re-scoring every link it
        remembers): the entries change in place, the heaps are rebuilt once."""
        if self.fifo:
            return  # scores are ignored
        moved = moved_items(self._tables, self._entries, scorer, keys)
        bulk = keys is None or len(keys) * BULK_SHARE >= len(self._entries)
        for fp, item in moved:
            if bulk:
                self._entries[fp] = item
            else:
                self._enqueue(fp, item)
        if bulk:
            self._rebuild()
        if keys is None:
            self._journal.rewrite(self._live_items)
        else:
            for fp, item in moved:
                self._journal.queued(fp, item)  # appended: a rewrite would read every spilled URL

    def sample(self, count: int) -> list[tuple[float, str]]:
        if self.fifo or not self._entries:
            return []
        slots = self._tables.slot_names
        return [(score_of(HEADER.unpack_from(item)[0]), slots[ItemTables.slot_of(item)])
                for item in self._order.sample(self._entries.values(), count)]

    def __len__(self) -> int:
        return len(self._entries) + (len(self._spill) if self._spill is not None else 0)

    def leased(self) -> int:
        return len(self._leases)

    def in_flight_scores(self) -> list[float]:
        return [] if self.fifo else self._leases.scores()  # FIFO: scores are ignored

    def spilled(self) -> int:
        """URLs queued on disk now."""
        return len(self._spill) if self._spill is not None else 0

    def spill_disk_bytes(self) -> int:
        return self._spill.disk_bytes() if self._spill is not None else 0

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        return self._bound.holds(fingerprint(key.encode()))

    def entries(self) -> Iterator[FrontierEntry]:
        """Every queued entry, in no particular order (for tests and tools)."""
        for item in self._entries.values():
            yield self._tables.entry(item, self.fifo)
        if self._spill is not None:
            for _, item in self._spill.items():
                yield self._tables.entry(item, self.fifo)

    # -- Persistence (crawlproject.frontier.journal) ---------------------------

    def _load(self, state: dict[str, Any]) -> None:
        self._tables.load(state["origins"], state["payloads"], state["items"], state["slots"])
        self._leases = MemoryLeases(self.seen, self.host_cap)
        self._leases.load(state)
        for item in state["items"]:
            self._entries[fingerprint(self._tables.key(item))] = item
        self._ties.resume_after(HEADER.unpack_from(item)[1] for item in state["items"])
        self._rebuild()
        while len(self._entries) > self.max_size:  # more than the bound (spilled before, or a smaller bound)
            if not self._bound.evict_below(b""):
                break

    def _live_items(self) -> dict[int, bytes]:
        """Every item queued or leased, by fingerprint (what a journal rewrite writes)."""
        live = {**self._entries, **self._leases.leased}
        if self._spill is not None:
            live.update(self._spill.items())
        return live

    # -- Leases -------------------------------------------------------------------

    def _release(self, fp: int) -> None:
        item = self._leases.give_back(fp)
        assert item is not None  # noqa: S101 (called for a leased fingerprint)
        if self._bound.holds(fp):
            self._tables.release(item)  # queued again meanwhile (a forced push): keep that one
            return
        self._enqueue(fp, item)

    def _take(self, item: bytes) -> bool:
        """Lease a popped item; False if its host had its share of pages meanwhile."""
        fp = fingerprint(self._tables.key(item))
        del self._entries[fp]
        if self.host_cap and self._leases.capped(ItemTables.origin(item)):
            self._tables.release(item)
            self._journal.dequeued(fp)
            if self.stats is not None:
                self.stats.inc_value("frontier/host_cap_dropped")
            return False
        self._leases.lease(fp, item)
        return True

    # -- The order (crawlproject.frontier.slot_queue) --------------------------------

    def _enqueue(self, fp: int, item: bytes) -> None:
        self._entries[fp] = item
        self._order.add(item)
        self._bound.added(fp, item)
        limit = _COMPACT_FACTOR * len(self._entries) + _COMPACT_FLOOR
        if self._order.size > limit or self._bound.heap_size > limit:
            self._rebuild()

    def _live(self, item: bytes) -> bool:
        """Whether a heap item is its URL's place in the queue now (not a stale
        one, left by a re-score or an eviction)."""
        return self._entries.get(fingerprint(self._tables.key(item))) is item

    def _rebuild(self) -> None:
        """Rebuild every heap from the live entries, dropping stale items."""
        self._order.rebuild(self._entries.values())
        self._bound.rebuild()
