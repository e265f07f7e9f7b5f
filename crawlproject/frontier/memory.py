"""In-memory best-first frontier with a bound and per-host diversity (SPEC §1).

Layout, chosen for O(log n) push and pop with nothing but tuples and dicts:

* every queued URL is one tuple ``(-score, seq, url, payload)``, held both
  by ``_entries`` (url → tuple, the source of truth) and by a heap. ``seq``
  is a push counter: it breaks score ties first-in first-out. A heap tuple
  that is no longer the very object in ``_entries`` is stale (its URL was
  raised, evicted or popped) and is skipped when met.
* k = 1 (no host diversity): one global max-heap; a pop is a heappop.
* k > 1: one max-heap per host, and a heap of hosts keyed by their best
  tuple. A pop takes the best host that is not in the current batch, so
  every batch of k consecutive pops comes from k distinct hosts (a batch
  ends early when no other host has URLs).
* a min-heap of (score, seq, url), built only once the frontier first fills
  up, finds the entry to evict.

Heaps are rebuilt when stale tuples outnumber live ones.
"""

from __future__ import annotations

import heapq
from itertools import count
from typing import TYPE_CHECKING, Any

from crawlproject.frontier.base import FrontierEntry, PushOutcome
from crawlproject.urls import host_of

if TYPE_CHECKING:
    from collections.abc import Callable

_Item = tuple[float, int, str, Any]  # (-score, seq, url, payload)
_HostQueueItem = tuple[float, int, str, _Item]  # (-score, seq, host, item)

# Rebuild heaps when stale tuples exceed live entries by this factor (plus a
# floor, so small frontiers never bother).
_COMPACT_FACTOR = 2
_COMPACT_FLOOR = 4096


class MemoryFrontier:
    """Best-first (or FIFO) frontier kept in this process's memory.

    :param max_size: at most this many queued URLs (MAX_BUFFER).
    :param host_batch: k, the number of distinct hosts per batch of pops.
    :param fifo: ignore scores: pure first-in first-out (breadth-first); a
        full FIFO frontier refuses new URLs rather than evicting old ones.
    """

    def __init__(self, max_size: int, host_batch: int = 1, fifo: bool = False):
        if max_size < 1:
            raise ValueError(f"max_size must be ≥ 1, got {max_size}")
        if host_batch < 1:
            raise ValueError(f"host_batch must be ≥ 1, got {host_batch}")
        self.max_size = max_size
        self.host_batch = host_batch
        self.fifo = fifo
        self._clear()
        # Bind the pop for this k once, instead of branching on every call.
        self.pop = self._pop_global if host_batch == 1 else self._pop_diverse  # type: ignore[method-assign]

    def _clear(self) -> None:
        self._entries: dict[str, _Item] = {}
        self._fetched: set[str] = set()
        self._seq = count()
        self._heap: list[_Item] = []  # k = 1
        self._host_heaps: dict[str, list[_Item]] = {}  # k > 1
        self._host_queue: list[_HostQueueItem] = []
        self._host_key: dict[str, _Item] = {}
        self._heap_items = 0
        self._resting: set[str] = set()  # hosts already used in this batch
        self._lowest: list[tuple[float, int, str]] | None = None

    # -- Frontier protocol -------------------------------------------------

    def push(
        self, url: str, score: float, payload: Any = None, force: bool = False
    ) -> PushOutcome:
        if self.fifo:
            score = 0.0
        if url in self._fetched:
            if not force:
                return PushOutcome.ALREADY_FETCHED
            self._fetched.discard(url)
        old = self._entries.get(url)
        if old is not None:
            if score <= -old[0]:
                return PushOutcome.DUPLICATE
            outcome = PushOutcome.RAISED
        elif len(self._entries) >= self.max_size:
            if not self._evict_below(score):
                return PushOutcome.REJECTED_FULL
            outcome = PushOutcome.ADDED_EVICTING
        else:
            outcome = PushOutcome.ADDED
        item = (-score, next(self._seq), url, payload)
        self._entries[url] = item
        if self.host_batch == 1:
            heapq.heappush(self._heap, item)
            self._heap_items += 1
        else:
            self._index_by_host(item)
        if self._lowest is not None:
            heapq.heappush(self._lowest, (score, item[1], url))
        if self._heap_items > _COMPACT_FACTOR * len(self._entries) + _COMPACT_FLOOR:
            self._rebuild()
        return outcome

    def pop(self) -> FrontierEntry | None:
        # Replaced per instance in __init__ by _pop_global or _pop_diverse.
        return self._pop_global() if self.host_batch == 1 else self._pop_diverse()

    def rescore(self, scorer: Callable[[str, float, Any], float]) -> None:
        entries = self._entries
        for url, (neg_score, seq, _, payload) in entries.items():
            score = 0.0 if self.fifo else float(scorer(url, -neg_score, payload))
            entries[url] = (-score, seq, url, payload)
        self._rebuild()

    def snapshot(self) -> dict[str, Any]:
        return {
            "version": 2,
            "entries": self._entries,
            "fetched": self._fetched,
            "next_seq": next(self._seq),
            "resting": self._resting,
            "max_size": self.max_size,
            "host_batch": self.host_batch,
            "fifo": self.fifo,
        }

    def restore(self, state: dict[str, Any]) -> None:
        if state.get("version") != 2:
            raise ValueError(f"unknown frontier state version {state.get('version')!r}")
        self._clear()
        self._entries = dict(state["entries"])
        self._fetched = set(state["fetched"])
        self._seq = count(state["next_seq"])
        self._resting = set(state["resting"]) if self.host_batch > 1 else set()
        self._rebuild()
        # A restart with a smaller bound keeps only the best entries.
        while len(self._entries) > self.max_size:
            self._evict_below(float("inf"))

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, url: object) -> bool:
        return url in self._entries

    # -- Internals ----------------------------------------------------------

    def _pop_global(self) -> FrontierEntry | None:
        heap, entries = self._heap, self._entries
        while heap:
            item = heapq.heappop(heap)
            self._heap_items -= 1
            url = item[2]
            if entries.get(url) is not item:
                continue  # stale: raised, evicted or popped since
            del entries[url]
            self._fetched.add(url)
            return FrontierEntry(url, -item[0], item[3])
        return None

    def _pop_diverse(self) -> FrontierEntry | None:
        host_queue = self._host_queue
        while True:
            if not host_queue:
                # Only hosts of the current batch have URLs left: the batch
                # ends early. If none has, keep the batch (nothing to pop).
                if not self._end_batch(only_if_pending=True):
                    return None
                continue
            _, _, host, queued = heapq.heappop(host_queue)
            if self._host_key.get(host) is not queued:
                continue  # superseded by a better entry of the same host
            del self._host_key[host]
            top = self._clean_top(host)
            if top is None:
                continue
            if top is not queued:
                self._queue_host(host, top)  # its best was evicted meanwhile
                continue
            heapq.heappop(self._host_heaps[host])
            self._heap_items -= 1
            url = top[2]
            del self._entries[url]
            self._fetched.add(url)
            self._after_pop(host)
            return FrontierEntry(url, -top[0], top[3])

    def _index_by_host(self, item: _Item) -> None:
        self._heap_items += 1
        host = host_of(item[2])
        heap = self._host_heaps.get(host)
        if heap is None:
            heap = self._host_heaps[host] = []
        heapq.heappush(heap, item)
        if host not in self._resting:
            key = self._host_key.get(host)
            if key is None or item < key:
                self._queue_host(host, item)

    def _queue_host(self, host: str, top: _Item) -> None:
        self._host_key[host] = top
        heapq.heappush(self._host_queue, (top[0], top[1], host, top))

    def _clean_top(self, host: str) -> _Item | None:
        """The host's best live tuple, dropping stale ones on the way."""
        heap = self._host_heaps.get(host)
        if heap is None:
            return None
        entries = self._entries
        while heap:
            top = heap[0]
            if entries.get(top[2]) is top:
                return top
            heapq.heappop(heap)
            self._heap_items -= 1
        del self._host_heaps[host]
        return None

    def _after_pop(self, host: str) -> None:
        self._resting.add(host)
        if len(self._resting) >= self.host_batch:
            self._end_batch()

    def _end_batch(self, only_if_pending: bool = False) -> bool:
        """Start a new batch; return whether any resting host had URLs."""
        tops = [(host, self._clean_top(host)) for host in self._resting]
        pending = [(host, top) for host, top in tops if top is not None]
        if only_if_pending and not pending:
            return False
        self._resting = set()
        for host, top in pending:
            self._queue_host(host, top)
        return bool(pending)

    def _evict_below(self, score: float) -> bool:
        """Evict the lowest-scored entry if it scores below *score*."""
        if self._lowest is None:
            self._lowest = [(-item[0], item[1], url) for url, item in self._entries.items()]
            heapq.heapify(self._lowest)
        lowest, entries = self._lowest, self._entries
        while lowest:
            low_score, seq, url = lowest[0]
            entry = entries.get(url)
            if entry is None or entry[1] != seq:
                heapq.heappop(lowest)
                continue
            if low_score >= score:
                return False
            heapq.heappop(lowest)
            del entries[url]
            return True
        return False

    def _rebuild(self) -> None:
        """Rebuild every heap from ``_entries``, dropping stale tuples."""
        items = list(self._entries.values())
        self._heap_items = len(items)
        self._host_key = {}
        self._host_queue = []
        if self.host_batch == 1:
            heapq.heapify(items)
            self._heap = items
        else:
            host_heaps: dict[str, list[_Item]] = {}
            for item in items:
                host = host_of(item[2])
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
            self._lowest = [(-item[0], item[1], url) for url, item in self._entries.items()]
            heapq.heapify(self._lowest)
