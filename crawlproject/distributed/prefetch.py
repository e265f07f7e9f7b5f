"""The URLs a worker leased ahead from the shared frontier, best first, and the
rule that hands them out (Frontier.pop): the best of a host that can take a
request now, under the pages objective only among the window's first — or,
with a wait, when the busy hosts holding the URLs above would keep it
waiting longer than that.

The POP script leases them in the shared queue's order; the rule here is the
memory frontier's (crawlproject.frontier.slot_queue), counted within what
was prefetched.
"""

from __future__ import annotations

import pickle
import time
from collections import deque
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from crawlproject.distributed.wire import parse_entry
from crawlproject.frontier.base import FrontierEntry
from crawlproject.frontier.pop_rule import drained_soon, within_reach

if TYPE_CHECKING:
    from collections.abc import Iterator

    from crawlproject.frontier.pop_rule import PopRule


class Prefetched:
    """The entries a POP brought, waiting to be handed out."""

    def __init__(self, fifo: bool):
        self.fifo = fifo
        self._entries: deque[FrontierEntry] = deque()
        #: The hosts the worker's current diversity batch has used (the POP script's).
        self.batch_hosts: list[str] = []
        #: The explored hosts (crawlproject.frontier.exploration) none of whose
        #: URLs the last exploring take found here.
        self._missing: list[str] = []
        self._asked: tuple[list[str], float] = ([], 0.0)  # the explored hosts last asked for, and when
        #: The hosts whose best the next POP brings too, wherever it ranks.
        self.wanted: list[str] = []

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[FrontierEntry]:
        return iter(self._entries)

    def clear(self) -> None:
        self._entries.clear()
        self.batch_hosts = []

    def take(self, rule: PopRule) -> FrontierEntry | None:
        """The entry *rule* allows, out of the prefetch; None if none."""
        entries = self._entries
        self._missing = []
        if rule.only is not None:
            first: dict[str, int] = {}  # each host's best prefetched entry
            for index, entry in enumerate(entries):
                first.setdefault(urlsplit(entry.url).hostname or "", index)
            for host in rule.only:
                if host in first and host not in rule.busy:
                    entry = entries[first[host]]
                    del entries[first[host]]
                    return entry
            self._missing = [host for host in rule.only if host not in rule.busy]
            return None
        skip, window, hold, wait, barred = rule.busy, rule.window, rule.hold, rule.wait, rule.barred
        holders: set[str] = set()  # the hosts of the entries above: busy, or barred and passed over
        for index, entry in enumerate(entries):
            host = urlsplit(entry.url).hostname or ""
            passed_over = bool(skip) and host in skip
            if not passed_over and window and index >= window:
                if not wait:
                    return None  # the window only
                passed_over = host in barred  # a barred host is passed over
                if not passed_over and (drained_soon(index, len(holders), window, wait) or not within_reach(
                        entry.score, entries[0].score, entries[window - 1].score)):
                    return None  # it enters the window soon, or is worth far less than the window's
            if passed_over:
                holders.add(host)
                continue
            if entry.score < rule.floor:
                return None  # below the floor, as everything after it
            del entries[index]
            return entry
        if window or hold or not entries or entries[0].score < rule.floor:
            return None
        return entries.popleft()

    def ask_for_explored(self) -> bool:
        """Whether a round trip should bring the explored hosts' best: the
        last exploring take found none prefetched, and they were not asked
        for in the last second (they may have none queued)."""
        hosts, when = self._asked
        if not self._missing or (hosts == self._missing and time.monotonic() - when < 1.0):
            return False
        self._asked = (self._missing, time.monotonic())
        self.wanted = self._missing
        return True

    def fill(self, result: list[Any]) -> tuple[int, list[tuple[str, float]]]:
        """Add what a POP brought: returns the URLs its host cap dropped, and
        the (fingerprint, score) of each URL leased."""
        dropped, popped, hosts = int(result[0]), int(result[1]), int(result[2])
        self.batch_hosts = [host.decode() for host in result[3:3 + hosts]]
        start = 3 + hosts
        end = start + 3 * popped
        tail = result[end:]
        # one object per payload: the links of a page share it, as in memory
        payloads = {tail[i].decode(): pickle.loads(tail[i + 1]) if tail[i + 1] else None  # noqa: S301 (our Redis)
                    for i in range(0, len(tail), 2)}
        leased = []
        for i in range(start, end, 3):
            fp, score, entry = result[i].decode(), result[i + 1], result[i + 2].decode()
            key, url, pid = parse_entry(entry)
            taken = FrontierEntry(key, 0.0 if self.fifo else -float(score), payloads.get(pid), url or key)
            leased.append((fp, taken.score))
            self._entries.append(taken)
        return dropped, leased
