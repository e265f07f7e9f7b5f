"""The memory frontier's order: a heap of items per download slot, a heap of
slots keyed by their best item, batches of distinct slots, and the rule that
picks which slot's best goes next (docs/methods.md §1; Frontier.pop).

A pop takes the best item of a slot that can take a request now (the
scheduler names the busy ones), and with a batch of k > 1 a slot not used
yet in the current batch, so every k consecutive pops come from k distinct
slots. Under the pages objective (a *window*) a free slot's best goes only
when it ranks among the window's best — or, with a *wait*, when the busy
slots holding the URLs above it would keep it waiting longer than that.

The queue holds items only; which of them are still their URL's place in the
queue (not stale copies a re-score or an eviction left) is the owner's
business: it is asked through *live*, and decides through *take* whether a
popped item is leased after all.
"""

from __future__ import annotations

import heapq
import math
import random
from typing import TYPE_CHECKING

from crawlproject.frontier.items import HEADER, ItemTables, score_of
from crawlproject.frontier.pop_rule import drained_soon, needed_above, within_reach

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Container, Iterable, Sequence

    from crawlproject.frontier.pop_rule import PopRule


class SlotQueue:
    """Heaps of items by download slot, popped best first under the
    diversity, window and wait rules.

    :param host_batch: k, the number of distinct download slots per batch of pops.
    :param tables: the items' tables (the slot keys by index: ItemTables.slot_names).
    :param live: whether an item is still its URL's place in the queue.
    """

    def __init__(self, host_batch: int, tables: ItemTables, live: Callable[[bytes], bool]):
        self.host_batch = host_batch
        self._tables = tables
        self._live = live
        self._heaps: dict[int, list[bytes]] = {}  # slot → its heap of items
        self._queue: list[tuple[bytes, int]] = []  # (a slot's best item, slot), best first
        self._top: dict[int, bytes] = {}  # slot → the item it is queued under
        self._resting: set[int] = set()  # slots already used in this batch
        #: Items in the heaps, stale ones included (the owner compacts past a bound).
        self.size = 0

    def add(self, item: bytes) -> None:
        self.size += 1
        slot = ItemTables.slot_of(item)
        heap = self._heaps.get(slot)
        if heap is None:
            heap = self._heaps[slot] = []
        heapq.heappush(heap, item)
        if slot not in self._resting:
            top = self._top.get(slot)
            if top is None or item < top:
                self._queue_slot(slot, item)

    def rebuild(self, items: Iterable[bytes]) -> None:
        """Every heap anew from the live *items*, stale ones dropped."""
        self._top = {}
        self._queue = []
        heaps: dict[int, list[bytes]] = {}
        size = 0
        for item in items:
            slot = ItemTables.slot_of(item)
            heap = heaps.get(slot)
            if heap is None:
                heap = heaps[slot] = []
            heap.append(item)
            size += 1
        for slot, heap in heaps.items():
            heapq.heapify(heap)
            if slot not in self._resting:
                self._queue_slot(slot, heap[0])
        self._heaps = heaps
        self.size = size

    def sample(self, items: Collection[bytes], count: int) -> list[bytes]:
        """About *count* of the live *items* (the queue's), drawn uniformly.
        With one slot, from its heap: a list to draw from without copying the
        queue. It also holds stale items (the old places of re-scored and
        evicted URLs, up to twice the live ones): those drawn are dropped, so
        the sample is a uniform one of the URLs queued now, as they rank now."""
        if len(self._heaps) != 1:
            return random.sample(list(items), min(count, len(items)))
        heap = next(iter(self._heaps.values()))
        wanted = min(len(heap), -(-count * len(heap) // len(items)))  # ≈ count live ones
        return [item for item in random.sample(heap, wanted) if self._live(item)]

    def pop(self, take: Callable[[bytes], bool], rule: PopRule) -> bytes | None:
        """The best live item *rule* allows (Frontier.pop), out of its heap;
        *take* says whether it is leased (False: dropped, and the next one is
        tried)."""
        if rule.only is not None:
            return self._pop_only(take, rule.only, rule.busy)
        skip, window, hold, wait, barred = rule.busy, rule.window, rule.hold or rule.window > 0, rule.wait, rule.barred
        floor = rule.floor
        queue, slots = self._queue, self._tables.slot_names
        skipped: list[tuple[bytes, int]] = []  # busy slots (and barred ones passed over), best first
        try:
            while True:
                if queue:
                    top, slot = heapq.heappop(queue)
                    if self._top.get(slot) is not top:
                        continue  # superseded by a better item of the same slot
                    if skip and slots[slot] in skip:
                        skipped.append((top, slot))
                        continue
                    if window and skipped and not self._may_go(top, slots[slot], skipped, window, wait, barred):
                        skipped.append((top, slot))  # put back with the busy ones
                        if wait and slots[slot] in barred:
                            continue  # a barred slot passed over: the next free one may go
                        return None  # the best wait for their slots
                elif self._end_batch(only_if_pending=True):
                    continue  # only slots of the current batch had URLs: the batch ends early
                elif skipped and not hold:
                    top, slot = skipped.pop(0)  # every slot is busy: the best URL anyway
                else:
                    return None
                if floor > -math.inf and _score(top) < floor:
                    skipped.append((top, slot))  # put back: below the floor, as everything after it
                    return None
                del self._top[slot]
                live = self._clean_top(slot)
                if live is None:
                    continue
                if live is not top:
                    self._queue_slot(slot, live)  # its best was evicted meanwhile
                    continue
                heapq.heappop(self._heaps[slot])
                self.size -= 1
                taken = take(top)
                self._after_pop(slot)
                if taken:
                    return top
        finally:
            for top, slot in skipped:
                heapq.heappush(queue, (top, slot))

    def _pop_only(self, take: Callable[[bytes], bool], only: Sequence[str], busy: Container[str]) -> bytes | None:
        """The best live item of the first slot *only* names that is not
        *busy* (nor resting in the current diversity batch) and holds one,
        whatever its rank."""
        while True:
            for name in only:
                slot = self._tables.known_slot(name)
                if slot is None or slot in self._resting or name in busy:
                    continue
                top = self._clean_top(slot)
                if top is not None:
                    break
            else:
                return None
            heapq.heappop(self._heaps[slot])
            self.size -= 1
            if self._top.get(slot) is top:  # its place in the slot queue moves to its next best
                del self._top[slot]
                following = self._clean_top(slot)
                if following is not None:
                    self._queue_slot(slot, following)
            taken = take(top)
            self._after_pop(slot)
            if taken:
                return top

    def _may_go(self, top: bytes, slot: str, skipped: list[tuple[bytes, int]], window: int, wait: float,
                barred: Container[str]) -> bool:
        """Whether a free slot's best *top* goes while the *skipped* slots
        hold URLs above it: when fewer than *window* do, or (with *wait*)
        when they would keep it waiting longer than *wait* of their delays,
        it is within reach of the window's score and its slot is not barred."""
        holders = len({held for _, held in skipped})  # the slot queue may name a slot twice
        # counted as far as the answer needs: the window, or the wait's count (never fewer)
        above = self._count_above(skipped, top, needed_above(holders, window, wait) if wait else window)
        if above < window:
            return True
        if not wait or slot in barred or drained_soon(above, holders, window, wait):
            return False
        return within_reach(_score(top), _score(skipped[0][0]), _score(self._nth_best(skipped, window)))

    def _count_above(self, slots: list[tuple[bytes, int]], item: bytes, limit: int) -> int:
        """How many live items of *slots* rank above *item*, counted up to
        *limit*: a walk down each slot's heap that stops where an item ranks
        below *item* (its children rank lower still)."""
        count = 0
        for slot in {slot for _, slot in slots}:
            heap = self._heaps.get(slot, [])
            stack = [0] if heap else []
            while stack:
                index = stack.pop()
                node = heap[index]
                if node >= item:
                    continue
                if self._live(node):
                    count += 1
                    if count >= limit:
                        return count
                stack.extend(child for child in (2 * index + 1, 2 * index + 2) if child < len(heap))
        return count

    def _nth_best(self, slots: list[tuple[bytes, int]], n: int) -> bytes:
        """The *n*-th best live item of *slots* (they hold at least *n*): a
        merge of their heaps, best first, that opens a node's children only
        when the node is taken."""
        frontier = [(heap[0], slot, 0) for slot in {slot for _, slot in slots} if (heap := self._heaps.get(slot))]
        heapq.heapify(frontier)
        taken, last = 0, slots[0][0]
        while frontier and taken < n:
            item, slot, index = heapq.heappop(frontier)
            heap = self._heaps[slot]
            for child in (2 * index + 1, 2 * index + 2):
                if child < len(heap):
                    heapq.heappush(frontier, (heap[child], slot, child))
            if self._live(item):
                taken, last = taken + 1, item
        return last

    def _queue_slot(self, slot: int, top: bytes) -> None:
        self._top[slot] = top
        heapq.heappush(self._queue, (top, slot))

    def _clean_top(self, slot: int) -> bytes | None:
        """The slot's best live item, dropping stale ones on the way."""
        heap = self._heaps.get(slot)
        if heap is None:
            return None
        while heap:
            top = heap[0]
            if self._live(top):
                return top
            heapq.heappop(heap)
            self.size -= 1
        del self._heaps[slot]
        return None

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


def _score(item: bytes) -> float:
    return score_of(HEADER.unpack_from(item)[0])
