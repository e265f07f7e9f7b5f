"""In-memory best-first frontier with a bound, leases, per-slot diversity
and a disk spill (docs/methods.md §1), compact enough for millions of queued URLs.

Layout, chosen for O(log n) push and pop in about 200 bytes per queued URL:

* every queued URL is one ``bytes`` item (crawlproject.frontier.items): rank
  (score, then a tie key in Scrapy's queue order), payload, origin and
  download-slot references, the rest of the URL;
* the seen set and the index of queued items are keyed by a 60-bit hash of
  the key (a small int), not by the URL string: the URL is stored once, in
  its item;
* a heap per download slot and a heap of slots keyed by their best item: a
  pop takes the best item of a slot that can take a request now (the
  scheduler says which cannot), and with k > 1 a slot not used yet in the
  current batch, so every k consecutive pops come from k distinct slots;
* past ``max_size`` the lowest-ranked items spill to disk
  (crawlproject.frontier.spill) and come back as memory drains — or, with
  ``overflow="drop"``, are dropped, with a warning and a count;
* a min-heap, built once the frontier first fills up, finds the lowest item;
  every heap is compacted when stale items outnumber live ones.

A popped URL is leased until acknowledged, refused or released. With
``jobdir`` the frontier is saved on close and loaded on open.
"""

from __future__ import annotations

import heapq
import logging
import pickle
import random
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawlproject import config
from crawlproject.frontier.base import FrontierEntry, PushOutcome, host_share, within_reach
from crawlproject.frontier.items import (
    ALL_BITS,
    COUNTER_LIMIT,
    HEAD,
    HEADER,
    RANK,
    START_TIER,
    ItemTables,
    fingerprint,
    order_of,
    score_of,
    split_origin,
    tie_of,
)
from crawlproject.frontier.journal import FrontierJournal
from crawlproject.frontier.seen import SeenSet, seen_set_settings
from crawlproject.frontier.spill import SpillStore, remove_orphans

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Container, Iterator
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

_RANK = struct.Struct(">QQ")  # order, tie: the first RANK bytes of an item
_LOWEST = struct.Struct(">QQQ")  # ~order, ~tie, fingerprint: the lowest-ranked item first

# Rebuild heaps when stale items exceed live entries by this factor (plus a
# floor, so small frontiers never bother).
_COMPACT_FACTOR = 2
_COMPACT_FLOOR = 4096
#: A re-score of at least 1/this of the queue rebuilds the heaps once rather than
#: pushing every moved entry (MemoryFrontier._rescore_some).
_BULK_SHARE = 4

OVERFLOW_CHOICES = ("spill", "drop")


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
        if overflow not in OVERFLOW_CHOICES:
            raise ValueError(f"overflow must be one of {OVERFLOW_CHOICES}, got {overflow!r}")
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

        from crawlproject.frontier.ties import scrapy_tie_order

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
        self._leased: dict[int, bytes] = {}  # fingerprint → leased item
        self._fetched = SeenSet(*self.seen)
        self._refused: set[int] = set()  # fingerprints of URLs (as found) refused by policy
        self._host_fetched: dict[int, int] = {}  # origin index → pages fetched (the host cap)
        self._counter = 0  # pushes so far: the tie keys
        self._slot_heaps: dict[int, list[bytes]] = {}  # slot → its heap of items
        self._slot_queue: list[tuple[bytes, int]] = []  # (a slot's best item, slot), best first
        self._slot_top: dict[int, bytes] = {}  # slot → the item it is queued under
        self._resting: set[int] = set()  # slots already used in this batch
        self._heap_items = 0
        self._lowest: list[bytes] | None = None
        self._spill: SpillStore | None = None
        self._warned_overflow = False
        self._journal: FrontierJournal | None = None
        self._unsaved: set[int] = set()  # payload indices that cannot be journaled

    # -- Frontier protocol -------------------------------------------------

    def open(self) -> None:
        if self.jobdir is None:
            return
        if self.spill_dir == self.jobdir and (orphans := remove_orphans(self.jobdir)):
            logger.info("Removed %(count)d spill stores a stopped run left in %(path)s (scratch: the journal "
                        "holds the queue)", {"count": orphans, "path": self.jobdir})
            if self.stats is not None:
                self.stats.inc_value("frontier/spill_orphans_removed", orphans)
        journal = FrontierJournal(self.jobdir)
        if not journal.empty():
            self._load(journal.load())
            logger.info(
                "Resuming crawl from %(path)s: %(queued)d URLs queued, %(fetched)d fetched",
                {"path": journal.path, "queued": len(self), "fetched": len(self._fetched)},
            )
        self._journal = journal
        self._tables.on_new_payload = self._journal_payload
        self._tables.on_new_origin = journal.origin
        self._tables.on_new_slot = journal.slot

    def close(self) -> None:
        for fp in list(self._leased):
            self._release(fp)
        if self._journal is not None:
            self._journal.close()
            self._journal = None
            logger.info("Frontier saved in %(path)s: %(queued)d URLs queued", {"path": self.jobdir, "queued": len(self)})
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def flush(self) -> None:
        """Make every change so far durable (a no-op without JOBDIR)."""
        if self._journal is not None:
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
        if not force and (fp in self._fetched or fp in self._leased):
            return PushOutcome.ALREADY_FETCHED
        if self._refused and (
            fingerprint(url.encode()) if url is not None and url != key else fp
        ) in self._refused:
            return PushOutcome.REFUSED
        if self.host_cap and self._capped(self._tables.origin_index(split_origin(key_bytes)[0])):
            return PushOutcome.HOST_CAP
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
            self._fetched.discard(fp)  # fetched once, queued again on purpose
        tie = self._next_tie(start)
        rank = _RANK.pack(order, tie)
        if old is None:
            best_spilled = self._spill.best() if self._spill is not None else None
            if not force and best_spilled is not None and rank > best_spilled:
                return self._push_to_spill(fp, order, tie, key_bytes, payload, url, slot, outcome)
            if len(self._entries) >= self.max_size:
                if self._evict_below(rank):
                    if self.overflow == "drop":
                        outcome = PushOutcome.ADDED_EVICTING
                elif force:
                    outcome = PushOutcome.ADDED_OVER_BOUND
                elif self.overflow == "spill":
                    return self._push_to_spill(fp, order, tie, key_bytes, payload, url, slot, outcome)
                else:
                    self._dropped()
                    return PushOutcome.REJECTED_FULL
        item = self._tables.pack(order, tie, key_bytes, payload, url, slot)
        self._enqueue(fp, item)
        self._journal_queued(fp, item)
        return outcome

    def _push_to_spill(
        self,
        fp: int,
        order: int,
        tie: int,
        key: bytes,
        payload: Any,
        url: str | None,
        slot: str | None,
        outcome: PushOutcome,
    ) -> PushOutcome:
        item = self._tables.pack(order, tie, key, payload, url, slot)
        self._spill_item(fp, item)
        self._journal_queued(fp, item)
        return PushOutcome.RAISED if outcome is PushOutcome.RAISED else PushOutcome.SPILLED

    def pop(self, skip: Container[str] = (), window: int = 0, hold: bool = False,
            reach: int = 0, dead: Container[str] = ()) -> FrontierEntry | None:
        """The best URL, from a download slot not in *skip* when any other
        slot has URLs (a slot that cannot take a request now); with *hold*
        only from one not in *skip*; with *window*, only one that fewer than
        *window* queued URLs rank above, or within *reach* when few busy
        slots hold those (Frontier.pop)."""
        self._refill()
        item = self._pop_item(skip, window, hold or window > 0, reach, dead)
        if item is None:
            return None
        return self._entry(item)

    def _entry(self, item: bytes) -> FrontierEntry:
        order, _, payload, origin, _ = HEADER.unpack_from(item)
        key_rest, _, url = item[HEAD:].partition(b"\0")
        key = (self._tables.origins[origin] + key_rest).decode()
        return FrontierEntry(
            key,
            0.0 if self.fifo else score_of(order),
            self._tables.payloads[payload],
            url.decode() if url else key,
        )

    def claim(
        self, key: str, score: float, payload: Any = None, url: str | None = None, slot: str | None = None
    ) -> bool:
        key_bytes = key.encode()
        fp = fingerprint(key_bytes)
        if fp in self._fetched or fp in self._leased:
            return False
        queued = self._entries.pop(fp, None)
        if queued is not None:  # its heap items are stale from now on
            self._tables.release(queued)
        elif self._spill is not None and (spilled := self._spill.remove(fp)) is not None:
            self._tables.release(spilled)
        order = 0 if self.fifo else order_of(score)
        item = self._leased[fp] = self._tables.pack(order, self._next_tie(False), key_bytes, payload, url, slot)
        if self.host_cap:
            origin = ItemTables.origin(item)
            self._host_fetched[origin] = self._host_fetched.get(origin, 0) + 1
        self._journal_queued(fp, item)  # durable as queued until acknowledged
        return True

    def ack(self, key: str) -> None:
        fp = fingerprint(key.encode())
        item = self._leased.pop(fp, None)
        if item is not None:
            self._tables.release(item)
            self._fetched.add(fp)
            if self._journal is not None:
                self._journal.fetched(fp, ItemTables.origin(item))
                self._journal.commit()  # a page done: the unit of durability

    def release(self, key: str) -> None:
        fp = fingerprint(key.encode())
        if fp in self._leased:
            self._release(fp)

    def refuse(self, key: str, url: str) -> None:
        fp = fingerprint(key.encode())
        item = self._leased.pop(fp, None)
        if item is not None:
            self._tables.release(item)
            if self.host_cap:  # refused, not fetched: it does not count
                origin = ItemTables.origin(item)
                self._host_fetched[origin] = max(0, self._host_fetched.get(origin, 0) - 1)
        url_fp = fingerprint(url.encode())
        self._refused.add(url_fp)
        if self._journal is not None:
            self._journal.refused(fp, url_fp)
            self._journal.commit()

    def rescore(self, scorer: Callable[[str, float, Any], float], keys: Collection[str] | None = None) -> None:
        """Re-score what is in memory (spilled URLs keep their scores until
        they come back: they rank below everything in memory)."""
        if self.fifo:
            return  # scores are ignored
        if keys is not None:
            self._rescore_some(scorer, keys)
            return
        tables, entries = self._tables, self._entries
        for fp, item in entries.items():
            order = HEADER.unpack_from(item)[0]
            key, _ = tables.key_and_url(item)
            new = order_of(float(scorer(key, score_of(order), tables.payload(item))))
            if new != order:
                entries[fp] = tables.reorder(item, order=new)
        self._rebuild()
        self._journal_rewrite()

    def _rescore_some(self, scorer: Callable[[str, float, Any], float], keys: Collection[str]) -> None:
        """A few keys re-scored in place: each moves to its new place (the
        heaps keep the old item as a stale one), O(log n) apiece. Most of the
        queue (a learner re-scoring every link it remembers): the entries
        change in place and the heaps are rebuilt once, O(n) in all."""
        tables, entries = self._tables, self._entries
        bulk = len(keys) * _BULK_SHARE >= len(entries)
        for key in keys:
            fp = fingerprint(key.encode())
            item = entries.get(fp)
            if item is None:
                continue
            order = HEADER.unpack_from(item)[0]
            new = order_of(float(scorer(key, score_of(order), tables.payload(item))))
            if new != order:
                moved = tables.reorder(item, order=new)
                if bulk:
                    entries[fp] = moved
                else:
                    self._enqueue(fp, moved)
                self._journal_queued(fp, moved)  # appended: a rewrite would read every spilled URL
        if bulk:
            self._rebuild()

    def sample_scores(self, count: int) -> list[float]:
        if self.fifo or not self._entries:
            return []
        entries = self._entries
        if len(self._slot_heaps) != 1:
            drawn = random.sample(list(entries.values()), min(count, len(entries)))
        else:
            # One slot's heap: a list to draw from without copying the queue. It
            # also holds stale items (the old places of re-scored and evicted
            # URLs, up to twice the live ones): those drawn are dropped, so the
            # sample is a uniform one of the URLs queued now, with their scores now.
            heap = next(iter(self._slot_heaps.values()))
            wanted = min(len(heap), -(-count * len(heap) // len(entries)))  # ≈ count live ones
            drawn = [item for item in random.sample(heap, wanted) if self._live(item)]
        return [score_of(HEADER.unpack_from(item)[0]) for item in drawn]

    def __len__(self) -> int:
        return len(self._entries) + (len(self._spill) if self._spill is not None else 0)

    def leased(self) -> int:
        return len(self._leased)

    def in_flight_scores(self) -> list[float]:
        if self.fifo:
            return []  # scores are ignored
        return [score_of(HEADER.unpack_from(item)[0]) for item in self._leased.values()]

    def spilled(self) -> int:
        """URLs queued on disk now."""
        return len(self._spill) if self._spill is not None else 0

    def spill_disk_bytes(self) -> int:
        return self._spill.disk_bytes() if self._spill is not None else 0

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        fp = fingerprint(key.encode())
        return fp in self._entries or (self._spill is not None and self._spill.rank(fp) is not None)

    def entries(self) -> Iterator[FrontierEntry]:
        """Every queued entry, in no particular order (for tests and tools)."""
        for item in self._entries.values():
            yield self._entry(item)
        if self._spill is not None:
            for _, item in self._spill.items():
                yield self._entry(item)

    # -- Persistence (crawlproject.frontier.journal) ---------------------------

    def _load(self, state: dict[str, Any]) -> None:
        self._tables.load(state["origins"], state["payloads"], state["items"], state["slots"])
        self._fetched = SeenSet(*self.seen)
        self._fetched.update(state["fetched"])
        self._host_fetched = dict(state["host_fetched"])
        self._refused = set(state["refused"])
        counter = -1
        for item in state["items"]:
            self._entries[fingerprint(self._tables.key(item))] = item
            counter = max(counter, self._counter_of(HEADER.unpack_from(item)[1]))
        self._counter = counter + 1
        self._rebuild()
        while len(self._entries) > self.max_size:  # more than the bound (spilled before, or a smaller bound)
            if not self._evict_below(b""):
                break

    def _journal_payload(self, index: int, payload: Any) -> None:
        assert self._journal is not None
        try:
            self._journal.payload(index, payload)
        except (pickle.PicklingError, TypeError, AttributeError, ValueError):
            self._unsaved.add(index)  # e.g. a Request whose callback is a lambda
        else:
            self._unsaved.discard(index)

    def _journal_queued(self, fp: int, item: bytes) -> None:
        if self._journal is None:
            return
        if HEADER.unpack_from(item)[2] in self._unsaved:
            if self.stats is not None:
                self.stats.inc_value("frontier/not_saved")
            return
        self._journal.queued(fp, item)

    def _journal_rewrite(self) -> None:
        if self._journal is not None:
            live = {**self._entries, **self._leased}
            if self._spill is not None:
                live.update(self._spill.items())
            self._journal.rewrite(
                {fp: item for fp, item in live.items() if HEADER.unpack_from(item)[2] not in self._unsaved}
            )

    # -- Ties ---------------------------------------------------------------------

    def _next_tie(self, start: bool) -> int:
        counter = self._counter
        self._counter = counter + 1
        if start and self.start_lifo is not None:
            return tie_of(counter, self.start_lifo, start_tier=True)
        return tie_of(counter, self.lifo)

    def _counter_of(self, tie: int) -> int:
        """The push counter a saved tie key was made from (under today's order)."""
        start = bool(tie & START_TIER) and self.start_lifo is not None
        low = tie & (START_TIER - 1)
        lifo = self.start_lifo if start else self.lifo
        counter = COUNTER_LIMIT - 1 - low if lifo else low
        return counter if counter < COUNTER_LIMIT // 2 else 0  # saved under another order: restart

    # -- Memory bound: spill or drop ---------------------------------------------

    def _evict_below(self, rank: bytes) -> bool:
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
                self._spill_item(fp, entry)
            else:
                self._tables.release(entry)
                if self._journal is not None:
                    self._journal.dequeued(fp)
                self._dropped()
            return True
        return False

    def _spill_item(self, fp: int, item: bytes) -> None:
        if self._spill is None:
            self._spill = SpillStore(self.spill_dir)
            logger.info(
                "The frontier holds %(max)d URLs in memory (FOCUS_FRONTIER_MAX): the lowest-ranked "
                "now spill to disk in %(path)s and come back as the queue drains",
                {"max": self.max_size, "path": self._spill.folder},
            )
        self._spill.put(fp, item)
        if self.stats is not None:
            self.stats.inc_value("frontier/spilled")

    def _dropped(self) -> None:
        if self.stats is not None:
            self.stats.inc_value("frontier/dropped")
        if not self._warned_overflow:
            self._warned_overflow = True
            logger.warning(
                "The frontier is full (FOCUS_FRONTIER_MAX=%(max)d) and FOCUS_FRONTIER_OVERFLOW=drop: "
                "the lowest-scored requests are dropped from now on; every drop is counted in "
                "frontier/dropped (FOCUS_FRONTIER_OVERFLOW=spill keeps them on disk)",
                {"max": self.max_size},
            )

    def _refill(self) -> None:
        """Bring the best spilled items back once memory is half empty."""
        spill = self._spill
        if spill is None or not len(spill) or len(self._entries) > self.max_size // 2:
            return
        room = max(1, (3 * self.max_size) // 4 - len(self._entries))
        for fp, item in spill.take(room):
            self._enqueue(fp, item)
        if self.stats is not None:
            self.stats.inc_value("frontier/refilled")

    # -- Leases -------------------------------------------------------------------

    def _release(self, fp: int) -> None:
        item = self._leased.pop(fp)
        if self.host_cap:  # not fetched after all: it no longer counts
            origin = ItemTables.origin(item)
            self._host_fetched[origin] = max(0, self._host_fetched.get(origin, 0) - 1)
        if fp in self._entries or (self._spill is not None and self._spill.rank(fp) is not None):
            self._tables.release(item)  # queued again meanwhile (a forced push): keep that one
            return
        self._enqueue(fp, item)

    def _take(self, item: bytes) -> bool:
        """Lease a popped item; False if its host had its share of pages meanwhile."""
        fp = fingerprint(self._tables.key(item))
        del self._entries[fp]
        if self.host_cap:
            origin = ItemTables.origin(item)
            if self._capped(origin):
                self._tables.release(item)
                if self._journal is not None:
                    self._journal.dequeued(fp)
                if self.stats is not None:
                    self.stats.inc_value("frontier/host_cap_dropped")
                return False
            self._host_fetched[origin] = self._host_fetched.get(origin, 0) + 1  # leased counts: no overshoot
        self._leased[fp] = item
        return True

    def _capped(self, origin: int) -> bool:
        return self._host_fetched.get(origin, 0) >= self.host_cap

    # -- Heaps --------------------------------------------------------------------

    def _enqueue(self, fp: int, item: bytes) -> None:
        self._entries[fp] = item
        self._heap_items += 1
        slot = ItemTables.slot_of(item)
        heap = self._slot_heaps.get(slot)
        if heap is None:
            heap = self._slot_heaps[slot] = []
        heapq.heappush(heap, item)
        if slot not in self._resting:
            top = self._slot_top.get(slot)
            if top is None or item < top:
                self._queue_slot(slot, item)
        if self._lowest is not None:
            heapq.heappush(self._lowest, _lowest_item(item, fp))
        limit = _COMPACT_FACTOR * len(self._entries) + _COMPACT_FLOOR
        if self._heap_items > limit or (self._lowest is not None and len(self._lowest) > limit):
            self._rebuild()

    def _pop_item(self, skip: Container[str], window: int = 0, hold: bool = False,
                  reach: int = 0, dead: Container[str] = ()) -> bytes | None:
        queue, slots = self._slot_queue, self._tables.slot_names
        skipped: list[tuple[bytes, int]] = []  # busy slots (and free ones passed over), best first
        try:
            while True:
                if queue:
                    top, slot = heapq.heappop(queue)
                    if self._slot_top.get(slot) is not top:
                        continue  # superseded by a better item of the same slot
                    if skip and slots[slot] in skip:
                        skipped.append((top, slot))
                        continue
                    if window and skipped:
                        above, held_by_few = self._ranked_above(skipped, top, window, max(reach, window))
                        if held_by_few and above >= window:
                            held_by_few = within_reach(_score(top), _score(skipped[0][0]),
                                                       _score(self._nth_best(skipped, window)))
                        if above >= window and not (held_by_few and slots[slot] not in dead):
                            skipped.append((top, slot))  # put back with the busy ones
                            if held_by_few:
                                continue  # a dead slot passed over: the next free one may go
                            return None  # too far down: the best wait for their slots
                elif self._end_batch(only_if_pending=True):
                    continue  # only slots of the current batch had URLs: the batch ends early
                elif skipped and not hold:
                    top, slot = skipped.pop(0)  # every slot is busy: the best URL anyway
                else:
                    return None
                del self._slot_top[slot]
                live = self._clean_top(slot)
                if live is None:
                    continue
                if live is not top:
                    self._queue_slot(slot, live)  # its best was evicted meanwhile
                    continue
                heapq.heappop(self._slot_heaps[slot])
                self._heap_items -= 1
                taken = self._take(top)
                self._after_pop(slot)
                if taken:
                    return top
        finally:
            for top, slot in skipped:
                heapq.heappush(queue, (top, slot))

    def _ranked_above(self, slots: list[tuple[bytes, int]], item: bytes, window: int, reach: int) -> tuple[int, bool]:
        """How many live items of *slots* rank above *item* (counted up to
        *reach*), and whether they are held by few: fewer than *reach* of
        them, and fewer than *window* when each slot counts at most
        :func:`host_share` of the window (Frontier.pop). A walk down each
        slot's heap that stops where an item ranks below *item* (its
        children rank lower still)."""
        share = host_share(window)
        count = capped = 0
        for slot in {slot for _, slot in slots}:  # the slot queue may name a slot twice
            heap = self._slot_heaps.get(slot, [])
            stack = [0] if heap else []
            own = 0
            while stack:
                index = stack.pop()
                node = heap[index]
                if node >= item:
                    continue
                if self._live(node):
                    count += 1
                    own += 1
                    capped += own <= share
                    if count >= reach:
                        return count, False
                stack.extend(child for child in (2 * index + 1, 2 * index + 2) if child < len(heap))
        return count, reach > window and capped < window

    def _nth_best(self, slots: list[tuple[bytes, int]], n: int) -> bytes:
        """The *n*-th best live item of *slots* (they hold at least *n*): a
        merge of their heaps, best first, that opens a node's children only
        when the node is taken."""
        frontier = [(heap[0], slot, 0) for slot in {slot for _, slot in slots} if (heap := self._slot_heaps.get(slot))]
        heapq.heapify(frontier)
        taken, last = 0, slots[0][0]
        while frontier and taken < n:
            item, slot, index = heapq.heappop(frontier)
            heap = self._slot_heaps[slot]
            for child in (2 * index + 1, 2 * index + 2):
                if child < len(heap):
                    heapq.heappush(frontier, (heap[child], slot, child))
            if self._live(item):
                taken, last = taken + 1, item
        return last

    def _queue_slot(self, slot: int, top: bytes) -> None:
        self._slot_top[slot] = top
        heapq.heappush(self._slot_queue, (top, slot))

    def _clean_top(self, slot: int) -> bytes | None:
        """The slot's best live item, dropping stale ones on the way."""
        heap = self._slot_heaps.get(slot)
        if heap is None:
            return None
        while heap:
            top = heap[0]
            if self._live(top):
                return top
            heapq.heappop(heap)
            self._heap_items -= 1
        del self._slot_heaps[slot]
        return None

    def _live(self, item: bytes) -> bool:
        """Whether a heap item is its URL's place in the queue now (not a stale
        one, left by a re-score or an eviction)."""
        return self._entries.get(fingerprint(self._tables.key(item))) is item

    def _after_pop(self, slot: int) -> None:
        self._resting.add(slot)
        if len(self._resting) >= self.host_batch:
            self._end_batch()

    def _end_batch(self, only_if_pending: bool = False) -> bool:
        """Start a new batch; return whether any resting slot had URLs."""
        tops = [(slot, self._clean_top(slot)) for slot in self._resting]
        pending = [(slot, top) for slot, top in tops if top is not None]
        if only_if_pending and not pending:
            return False
        self._resting = set()
        for slot, top in pending:
            self._queue_slot(slot, top)
        return bool(pending)

    def _rebuild(self) -> None:
        """Rebuild every heap from the live entries, dropping stale items."""
        self._heap_items = len(self._entries)
        self._slot_top = {}
        self._slot_queue = []
        slot_heaps: dict[int, list[bytes]] = {}
        for item in self._entries.values():
            slot = ItemTables.slot_of(item)
            heap = slot_heaps.get(slot)
            if heap is None:
                heap = slot_heaps[slot] = []
            heap.append(item)
        for slot, heap in slot_heaps.items():
            heapq.heapify(heap)
            if slot not in self._resting:
                self._queue_slot(slot, heap[0])
        self._slot_heaps = slot_heaps
        if self._lowest is not None:
            self._lowest = [_lowest_item(item, fp) for fp, item in self._entries.items()]
            heapq.heapify(self._lowest)


def _score(item: bytes) -> float:
    return score_of(HEADER.unpack_from(item)[0])


def _lowest_item(item: bytes, fp: int) -> bytes:
    order, tie = _RANK.unpack_from(item)
    return _LOWEST.pack(order ^ ALL_BITS, tie ^ ALL_BITS, fp)
