"""In-memory best-first frontier with a bound, leases and per-host diversity
(SPEC §1), compact enough for millions of queued URLs.

Layout, chosen for O(log n) push and pop in about 200 bytes per queued URL:

* every queued URL is one ``bytes`` item (crawlproject.frontier.items): order
  key, push counter, payload and origin references, the rest of the URL;
* the seen set and the index of queued items are keyed by a 60-bit hash of
  the key (a small int), not by the URL string: the URL is stored once, in
  its item;
* k = 1: one global heap of items. k > 1: a heap per origin and a heap of
  origins keyed by their best item; a pop takes the best origin not in the
  current batch, so every k consecutive pops come from k distinct hosts;
* a min-heap, built once the frontier first fills up, finds the entry to
  evict; every heap is compacted when stale items outnumber live ones.

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
from crawlproject.frontier.base import FrontierEntry, PushOutcome
from crawlproject.frontier.items import (
    ALL_BITS,
    HEAD,
    HEADER,
    SEQ_LIMIT,
    ItemTables,
    fingerprint,
    order_of,
    score_of,
    split_origin,
)
from crawlproject.frontier.journal import FrontierJournal
from crawlproject.frontier.seen import SeenSet, seen_set_settings

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

_LOWEST = struct.Struct(">QIQ")  # ~order, ~seq, fingerprint: lowest score, newest first

# Rebuild heaps when stale items exceed live entries by this factor (plus a
# floor, so small frontiers never bother).
_COMPACT_FACTOR = 2
_COMPACT_FLOOR = 4096


class MemoryFrontier:
    """Best-first (or FIFO) frontier kept in this process's memory.

    :param max_size: at most this many queued URLs (MAX_BUFFER); forced
        pushes and released leases may exceed it.
    :param host_batch: k, the number of distinct hosts per batch of pops.
    :param fifo: ignore scores: pure first-in first-out (breadth-first); a
        full FIFO frontier refuses new URLs rather than evicting old ones.
    :param jobdir: save the frontier here on close, load it on open.
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
        self._clear()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        from scrapy.utils.job import job_dir

        settings = crawler.settings
        return cls(
            max_size=config.get_int(settings, "FOCUS_FRONTIER_MAX"),
            host_batch=config.get_int(settings, "FOCUS_FRONTIER_HOST_BATCH"),
            fifo=config.get_choice(settings, "FOCUS_FRONTIER_ORDER") == "fifo",
            jobdir=job_dir(settings),
            stats=crawler.stats,
            host_cap=config.get_int(settings, "FOCUS_MAX_PAGES_PER_HOST"),
            seen=seen_set_settings(settings),
        )

    def _clear(self) -> None:
        self._tables = ItemTables()
        self._entries: dict[int, bytes] = {}  # fingerprint → queued item
        self._leased: dict[int, bytes] = {}  # fingerprint → leased item
        self._fetched = SeenSet(*self.seen)
        self._refused: set[int] = set()  # fingerprints of URLs (as found) refused by policy
        self._host_fetched: dict[int, int] = {}  # origin index → pages fetched (the host cap)
        self._seq = 0
        self._heap: list[bytes] = []  # k = 1
        self._host_heaps: dict[int, list[bytes]] = {}  # k > 1: origin → its heap
        self._host_queue: list[tuple[bytes, int]] = []
        self._host_key: dict[int, bytes] = {}
        self._resting: set[int] = set()  # origins already used in this batch
        self._heap_items = 0
        self._lowest: list[bytes] | None = None
        self._journal: FrontierJournal | None = None
        self._unsaved: set[int] = set()  # payload indices that cannot be journaled

    # -- Frontier protocol -------------------------------------------------

    def open(self) -> None:
        if self.jobdir is None:
            return
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

    def close(self) -> None:
        for fp in list(self._leased):
            self._release(fp)
        if self._journal is not None:
            self._journal.close()
            self._journal = None
            logger.info("Frontier saved in %(path)s: %(queued)d URLs queued", {"path": self.jobdir, "queued": len(self)})

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
        if old is not None:
            if order >= HEADER.unpack_from(old)[0]:
                return PushOutcome.DUPLICATE
            self._tables.release(old)
            outcome = PushOutcome.RAISED
        elif len(self._entries) >= self.max_size:
            if self._evict_below(order):
                outcome = PushOutcome.ADDED_EVICTING
            elif force:
                outcome = PushOutcome.ADDED_OVER_BOUND
            else:
                return PushOutcome.REJECTED_FULL
        else:
            outcome = PushOutcome.ADDED
        if force:
            self._fetched.discard(fp)  # fetched once, queued again on purpose
        item = self._tables.pack(order, self._next_seq(), key_bytes, payload, url)
        self._enqueue(fp, item)
        self._journal_queued(fp, item)
        return outcome

    def pop(self) -> FrontierEntry | None:
        item = self._pop_global() if self.host_batch == 1 else self._pop_diverse()
        if item is None:
            return None
        return self._entry(item)

    def _entry(self, item: bytes) -> FrontierEntry:
        order, _, payload, origin = HEADER.unpack_from(item)
        key_rest, _, url = item[HEAD:].partition(b"\0")
        key = (self._tables.origins[origin] + key_rest).decode()
        return FrontierEntry(
            key,
            0.0 if self.fifo else score_of(order),
            self._tables.payloads[payload],
            url.decode() if url else key,
        )

    def claim(self, key: str, score: float, payload: Any = None, url: str | None = None) -> bool:
        key_bytes = key.encode()
        fp = fingerprint(key_bytes)
        if fp in self._fetched or fp in self._leased:
            return False
        queued = self._entries.pop(fp, None)
        if queued is not None:  # its heap items are stale from now on
            self._tables.release(queued)
        order = 0 if self.fifo else order_of(score)
        item = self._leased[fp] = self._tables.pack(order, self._next_seq(), key_bytes, payload, url)
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
        heaps keep the old item as a stale one), O(log n) apiece."""
        tables, entries = self._tables, self._entries
        for key in keys:
            fp = fingerprint(key.encode())
            item = entries.get(fp)
            if item is None:
                continue
            order = HEADER.unpack_from(item)[0]
            new = order_of(float(scorer(key, score_of(order), tables.payload(item))))
            if new != order:
                moved = tables.reorder(item, order=new, seq=self._next_seq())  # a new seq: the old item is stale
                self._enqueue(fp, moved)
                self._journal_queued(fp, moved)

    def sample_scores(self, count: int) -> list[float]:
        if self.fifo:
            return []
        # the heap: a list to draw from in O(count), a few stale items among the live
        pool = self._heap if self.host_batch == 1 else list(self._entries.values())
        drawn = random.sample(pool, min(count, len(pool))) if pool else []
        return [score_of(HEADER.unpack_from(item)[0]) for item in drawn]

    def __len__(self) -> int:
        return len(self._entries)

    def leased(self) -> int:
        return len(self._leased)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and fingerprint(key.encode()) in self._entries

    def entries(self) -> Iterator[FrontierEntry]:
        """Every queued entry, in no particular order (for tests and tools)."""
        for item in self._entries.values():
            yield self._entry(item)

    # -- Persistence (crawlproject.frontier.journal) ---------------------------

    def _load(self, state: dict[str, Any]) -> None:
        self._tables.load(state["origins"], state["payloads"], state["items"])
        self._fetched = SeenSet(*self.seen)
        self._fetched.update(state["fetched"])
        self._host_fetched = dict(state["host_fetched"])
        self._refused = set(state["refused"])
        seq = -1
        for item in state["items"]:
            self._entries[fingerprint(self._tables.key(item))] = item
            seq = max(seq, HEADER.unpack_from(item)[1])
        self._seq = seq + 1
        self._rebuild()
        while len(self._entries) > self.max_size:  # restarted with a smaller bound
            if not self._evict_below(0):
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
            self._journal.rewrite(
                {fp: item for fp, item in live.items() if HEADER.unpack_from(item)[2] not in self._unsaved}
            )

    # -- Items ----------------------------------------------------------------------

    def _next_seq(self) -> int:
        seq = self._seq
        if seq >= SEQ_LIMIT - 1:
            self._renumber()
            seq = self._seq
        self._seq = seq + 1
        return seq

    def _renumber(self) -> None:
        """Give every live item a new push counter, in the same order, from 0:
        once per 4 billion pushes, before the 32-bit counter wraps."""
        live = sorted([*self._entries.items(), *self._leased.items()], key=lambda pair: HEADER.unpack_from(pair[1])[1])
        leased = self._leased
        self._entries, self._leased = {}, {}
        for seq, (fp, item) in enumerate(live):
            renumbered = self._tables.reorder(item, seq=seq)
            (self._leased if fp in leased else self._entries)[fp] = renumbered
        self._seq = len(live)
        self._rebuild()
        self._journal_rewrite()

    # -- Heaps --------------------------------------------------------------------

    def _enqueue(self, fp: int, item: bytes) -> None:
        self._entries[fp] = item
        if self.host_batch == 1:
            heapq.heappush(self._heap, item)
            self._heap_items += 1
        else:
            self._index_by_host(item)
        if self._lowest is not None:
            heapq.heappush(self._lowest, _lowest_item(item, fp))
        limit = _COMPACT_FACTOR * len(self._entries) + _COMPACT_FLOOR
        if self._heap_items > limit or (self._lowest is not None and len(self._lowest) > limit):
            self._rebuild()

    def _release(self, fp: int) -> None:
        item = self._leased.pop(fp)
        if self.host_cap:  # not fetched after all: it no longer counts
            origin = ItemTables.origin(item)
            self._host_fetched[origin] = max(0, self._host_fetched.get(origin, 0) - 1)
        if fp in self._entries:  # queued again meanwhile (a forced push): keep that one
            self._tables.release(item)
            return
        self._enqueue(fp, item)

    def _take(self, item: bytes) -> bool:
        """Lease a popped heap item if it is live; False if it is stale, or
        dropped because its host had its share of pages meanwhile."""
        fp = fingerprint(self._tables.key(item))
        if self._entries.get(fp) is not item:
            return False  # stale: raised, evicted, claimed or popped since
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

    def _pop_global(self) -> bytes | None:
        heap = self._heap
        while heap:
            item = heapq.heappop(heap)
            self._heap_items -= 1
            if self._take(item):
                return item
        return None

    def _pop_diverse(self) -> bytes | None:
        host_queue = self._host_queue
        while True:
            if not host_queue:
                # Only origins of the current batch have URLs left: the batch
                # ends early. If none has, keep the batch (nothing to pop).
                if not self._end_batch(only_if_pending=True):
                    return None
                continue
            queued, host = heapq.heappop(host_queue)
            if self._host_key.get(host) is not queued:
                continue  # superseded by a better item of the same origin
            del self._host_key[host]
            top = self._clean_top(host)
            if top is None:
                continue
            if top is not queued:
                self._queue_host(host, top)  # its best was evicted meanwhile
                continue
            heapq.heappop(self._host_heaps[host])
            self._heap_items -= 1
            self._take(top)
            self._after_pop(host)
            return top

    def _index_by_host(self, item: bytes) -> None:
        self._heap_items += 1
        host = ItemTables.origin(item)
        heap = self._host_heaps.get(host)
        if heap is None:
            heap = self._host_heaps[host] = []
        heapq.heappush(heap, item)
        if host not in self._resting:
            key = self._host_key.get(host)
            if key is None or item < key:
                self._queue_host(host, item)

    def _queue_host(self, host: int, top: bytes) -> None:
        self._host_key[host] = top
        heapq.heappush(self._host_queue, (top, host))

    def _clean_top(self, host: int) -> bytes | None:
        """The origin's best live item, dropping stale ones on the way."""
        heap = self._host_heaps.get(host)
        if heap is None:
            return None
        entries, tables = self._entries, self._tables
        while heap:
            top = heap[0]
            if entries.get(fingerprint(tables.key(top))) is top:
                return top
            heapq.heappop(heap)
            self._heap_items -= 1
        del self._host_heaps[host]
        return None

    def _after_pop(self, host: int) -> None:
        self._resting.add(host)
        if len(self._resting) >= self.host_batch:
            self._end_batch()

    def _end_batch(self, only_if_pending: bool = False) -> bool:
        """Start a new batch; return whether any resting origin had URLs."""
        tops = [(host, self._clean_top(host)) for host in self._resting]
        pending = [(host, top) for host, top in tops if top is not None]
        if only_if_pending and not pending:
            return False
        self._resting = set()
        for host, top in pending:
            self._queue_host(host, top)
        return bool(pending)

    def _evict_below(self, order: int) -> bool:
        """Evict the lowest-scored entry if it scores below *order*'s score."""
        if self._lowest is None:
            self._lowest = [_lowest_item(item, fp) for fp, item in self._entries.items()]
            heapq.heapify(self._lowest)
        lowest, entries = self._lowest, self._entries
        while lowest:
            inverted_order, inverted_seq, fp = _LOWEST.unpack(lowest[0])
            entry = entries.get(fp)
            if entry is None or HEADER.unpack_from(entry)[1] != inverted_seq ^ 0xFFFF_FFFF:
                heapq.heappop(lowest)  # stale
                continue
            if inverted_order ^ ALL_BITS <= order:
                return False  # the worst queued URL is at least as good
            heapq.heappop(lowest)
            del entries[fp]
            self._tables.release(entry)
            if self._journal is not None:
                self._journal.dequeued(fp)
            return True
        return False

    def _rebuild(self) -> None:
        """Rebuild every heap from the live entries, dropping stale items."""
        items = list(self._entries.values())
        self._heap_items = len(items)
        self._host_key = {}
        self._host_queue = []
        if self.host_batch == 1:
            heapq.heapify(items)
            self._heap = items
        else:
            host_heaps: dict[int, list[bytes]] = {}
            for item in items:
                host = ItemTables.origin(item)
                heap = host_heaps.get(host)
                if heap is None:
                    heap = host_heaps[host] = []
                heap.append(item)
            for host, heap in host_heaps.items():
                heapq.heapify(heap)
                if host not in self._resting:
                    self._queue_host(host, heap[0])
            self._host_heaps = host_heaps
        if self._lowest is not None:
            self._lowest = [_lowest_item(item, fp) for fp, item in self._entries.items()]
            heapq.heapify(self._lowest)


def _lowest_item(item: bytes, fp: int) -> bytes:
    order, seq, _, _ = HEADER.unpack_from(item)
    return _LOWEST.pack(order ^ ALL_BITS, seq ^ 0xFFFF_FFFF, fp)
