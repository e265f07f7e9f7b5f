"""The memory frontier's record of what left the queue: the URLs handed out
and not yet settled (leased), those fetched for good (the seen set), those
the policy refused, and the pages each host has had (``FOCUS_MAX_PAGES_PER_HOST``).

A popped or claimed URL is leased until it is acknowledged (fetched: seen
for good), refused (never queued again) or given back (queued again). Items
are the frontier's packed ``bytes`` (crawlproject.frontier.items); the
frontier keeps the queue, the journal and the item tables, and asks here.
"""

from __future__ import annotations

from typing import Any

from crawlproject.frontier.base import PushOutcome
from crawlproject.frontier.items import HEADER, ItemTables, fingerprint, score_of, split_origin
from crawlproject.frontier.seen import SeenSet


class MemoryLeases:
    """:param seen: the seen set's exact size, Bloom capacity and error (crawlproject.frontier.seen).
    :param host_cap: at most this many pages fetched or in flight per origin (0: no cap)."""

    def __init__(self, seen: tuple[int, int, float], host_cap: int = 0):
        self.host_cap = host_cap
        self.leased: dict[int, bytes] = {}  # fingerprint → leased item
        self.fetched = SeenSet(*seen)
        self.refused: set[int] = set()  # fingerprints of URLs (as found) refused by policy
        self.host_fetched: dict[int, int] = {}  # origin index → pages fetched or leased

    def load(self, state: dict[str, Any]) -> None:
        """What a journal saved (crawlproject.frontier.journal): nothing is leased after a restart."""
        self.fetched.update(state["fetched"])
        self.host_fetched = dict(state["host_fetched"])
        self.refused = set(state["refused"])

    def known(self, fp: int) -> bool:
        """Fetched for good, or leased now: not to be queued again unless forced."""
        return fp in self.fetched or fp in self.leased

    def refusal(self, fp: int, key: str, url: str | None, force: bool, tables: ItemTables) -> PushOutcome | None:
        """Why a URL pushed may not be queued — fetched or leased (unless
        *force*: queued again on purpose), refused as found (*url*), or its
        host had its share — or None: it may."""
        if not force and self.known(fp):
            return PushOutcome.ALREADY_FETCHED
        if self.refused and (fingerprint(url.encode()) if url is not None and url != key else fp) in self.refused:
            return PushOutcome.REFUSED
        if self.host_cap and self.capped(tables.origin_index(split_origin(key.encode())[0])):
            return PushOutcome.HOST_CAP
        return None

    def capped(self, origin: int) -> bool:
        return bool(self.host_cap) and self.host_fetched.get(origin, 0) >= self.host_cap

    def lease(self, fp: int, item: bytes) -> None:
        """*item* handed out: its host's page counts from now (a lease counts: no overshoot)."""
        self.leased[fp] = item
        if self.host_cap:
            origin = ItemTables.origin(item)
            self.host_fetched[origin] = self.host_fetched.get(origin, 0) + 1

    def acknowledge(self, fp: int) -> bytes | None:
        """The leased item fetched for good (None if not leased)."""
        item = self.leased.pop(fp, None)
        if item is not None:
            self.fetched.add(fp)
        return item

    def give_back(self, fp: int) -> bytes | None:
        """The leased item not fetched after all: its host's page no longer counts."""
        item = self.leased.pop(fp, None)
        if item is not None and self.host_cap:
            origin = ItemTables.origin(item)
            self.host_fetched[origin] = max(0, self.host_fetched.get(origin, 0) - 1)
        return item

    def refuse(self, fp: int, url_fp: int) -> bytes | None:
        """The URL (its fingerprint as found, *url_fp*) refused by policy: never
        queued again; the leased item, if it was one, given back uncounted."""
        self.refused.add(url_fp)
        return self.give_back(fp)

    def scores(self) -> list[float]:
        """The scores of the URLs in flight."""
        return [score_of(HEADER.unpack_from(item)[0]) for item in self.leased.values()]

    def __len__(self) -> int:
        return len(self.leased)

    def __contains__(self, fp: object) -> bool:
        return fp in self.leased
