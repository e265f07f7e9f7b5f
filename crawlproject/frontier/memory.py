"""In-memory best-first frontier with a bound and per-host diversity (SPEC §1).

Layout, chosen for O(log n) push and pop with nothing but tuples and dicts:

* ``_entries``: url → (score, seq, payload), the one source of truth. ``seq``
  is a push counter: it breaks score ties first-in first-out, and it
  versions an entry, so a heap tuple whose seq differs is stale.
* one max-heap per host of (-score, seq, url), and a heap of hosts keyed by
  their best entry. A pop takes the best host that is not in the current
  batch, so every batch of k consecutive pops comes from k distinct hosts
  (a batch ends early when no other host has URLs). With k = 1 this is plain
  global best-first.
* a min-heap of (score, seq, url), built only once the frontier first fills
  up, to find the entry to evict.

Raised and evicted entries leave stale tuples behind; they are skipped when
met and the heaps are rebuilt when stale tuples outnumber live ones.
"""

from __future__ import annotations

import heapq
from itertools import count
from typing import TYPE_CHECKING, Any

from crawlproject.frontier.base import FrontierEntry, PushOutcome
from crawlproject.urls import host_of

if TYPE_CHECKING:
    from collections.abc import Callable

_HeapItem = tuple[float, int, str]

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

    def _clear(self) -> None:
        self._entries: dict[str, tuple[float, int, Any]] = {}
        self._fetched: set[str] = set()
        self._seq = count()
        self._host_heaps: dict[str, list[_HeapItem]] = {}
        self._host_queue: list[tuple[float, int, str]] = []
        self._host_key: dict[str, tuple[float, int]] = {}
        self._heap_items = 0
        self._resting: set[str] = set()  # hosts already used in this batch
        self._lowest: list[_HeapItem] | None = None

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
        entry = self._entries.get(url)
        if entry is not None:
            if score <= entry[0]:
                return PushOutcome.DUPLICATE
            outcome = PushOutcome.RAISED
        elif len(self._entries) >= self.max_size:
            if not self._evict_below(score):
                return PushOutcome.REJECTED_FULL
            outcome = PushOutcome.ADDED_EVICTING
        else:
            outcome = PushOutcome.ADDED
        seq = next(self._seq)
        self._entries[url] = (score, seq, payload)
        self._index(url, score, seq)
        return outcome

    def pop(self) -> FrontierEntry | None:
        host_queue = self._host_queue
        while True:
            if not host_queue:
                # Only hosts of the current batch have URLs left: the batch
                # ends early. If none has, keep the batch (nothing to pop).
                if not self._end_batch(only_if_pending=True):
                    return None
                continue
            neg_score, seq, host = heapq.heappop(host_queue)
            if self._host_key.get(host) != (neg_score, seq):
                continue  # superseded by a better entry of the same host
            del self._host_key[host]
            top = self._clean_top(host)
            if top is None:
                continue
            if top[1] != seq:
                self._queue_host(host, top)  # its best was evicted meanwhile
                continue
            heapq.heappop(self._host_heaps[host])
            self._heap_items -= 1
            url = top[2]
            score, _, payload = self._entries.pop(url)
            self._fetched.add(url)
            self._after_pop(host)
            return FrontierEntry(url, score, payload)

    def rescore(self, scorer: Callable[[str, float, Any], float]) -> None:
        entries = self._entries
        for url, (score, seq, payload) in entries.items():
            new_score = 0.0 if self.fifo else float(scorer(url, score, payload))
            entries[url] = (new_score, seq, payload)
        self._rebuild()

    def snapshot(self) -> dict[str, Any]:
        return {
            "version": 1,
            "entries": self._entries,
            "fetched": self._fetched,
            "next_seq": next(self._seq),
            "resting": self._resting,
            "max_size": self.max_size,
            "host_batch": self.host_batch,
            "fifo": self.fifo,
        }

    def restore(self, state: dict[str, Any]) -> None:
        if state.get("version") != 1:
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

    # -- Introspection for stats and tests ---------------------------------

    @property
    def fetched_count(self) -> int:
        return len(self._fetched)

    def was_fetched(self, url: str) -> bool:
        return url in self._fetched

    def host_count(self) -> int:
        return len(self._host_heaps)

    # -- Internals ----------------------------------------------------------

    def _index(self, url: str, score: float, seq: int) -> None:
        host = host_of(url)
        item = (-score, seq, url)
        heap = self._host_heaps.get(host)
        if heap is None:
            heap = self._host_heaps[host] = []
        heapq.heappush(heap, item)
        self._heap_items += 1
        if self._lowest is not None:
            heapq.heappush(self._lowest, (score, seq, url))
        if host not in self._resting:
            key = self._host_key.get(host)
            if key is None or (item[0], seq) < key:
                self._queue_host(host, item)
        if self._heap_items > _COMPACT_FACTOR * len(self._entries) + _COMPACT_FLOOR:
            self._rebuild()

    def _queue_host(self, host: str, top: _HeapItem) -> None:
        self._host_key[host] = (top[0], top[1])
        heapq.heappush(self._host_queue, (top[0], top[1], host))

    def _clean_top(self, host: str) -> _HeapItem | None:
        """The host's best live tuple, dropping stale ones on the way."""
        heap = self._host_heaps.get(host)
        if heap is None:
            return None
        entries = self._entries
        while heap:
            top = heap[0]
            entry = entries.get(top[2])
            if entry is not None and entry[1] == top[1]:
                return top
            heapq.heappop(heap)
            self._heap_items -= 1
        del self._host_heaps[host]
        return None

    def _after_pop(self, host: str) -> None:
        if self.host_batch == 1:
            top = self._clean_top(host)
            if top is not None:
                self._queue_host(host, top)
            return
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
            self._lowest = [(s, q, u) for u, (s, q, _) in self._entries.items()]
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
        host_heaps: dict[str, list[_HeapItem]] = {}
        for url, (score, seq, _) in self._entries.items():
            host = host_of(url)
            heap = host_heaps.get(host)
            if heap is None:
                heap = host_heaps[host] = []
            heap.append((-score, seq, url))
        for heap in host_heaps.values():
            heapq.heapify(heap)
        self._host_heaps = host_heaps
        self._heap_items = len(self._entries)
        self._host_key = {}
        self._host_queue = []
        for host, heap in host_heaps.items():
            if host not in self._resting:
                self._queue_host(host, heap[0])
        if self._lowest is not None:
            self._lowest = [(s, q, u) for u, (s, q, _) in self._entries.items()]
            heapq.heapify(self._lowest)
