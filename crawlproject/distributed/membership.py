"""A worker's membership of a shared crawl (crawlproject.distributed.frontier).

* Which crawl the frontier holds: the first worker writes a random identity
  to ``<key>:crawl``, and what the crawl is (its spider, strategy, topic and
  seeds) to ``<key>:signature``; a worker of another crawl that names the
  same key stops at start with one line, before it touches the frontier (a
  worker that brings no seeds joins whatever crawl's seeds). Every round trip
  reads the identity back. Gone, the frontier was
  wiped (a Redis restarted without persistence, FLUSHALL); another's, it was
  replaced — either way the URLs it held are lost, and the worker says so and
  stops rather than crawl an empty or foreign frontier. A worker that
  cleared a drained frontier (``SCHEDULER_PERSIST`` off) leaves a *finished*
  mark in its place for a while: the crawl ended, it was not wiped.
* When a worker may leave: once the shared frontier has stayed drained
  (nothing queued, nothing leased by anyone) for the grace time
  (``FOCUS_REDIS_IDLE_GRACE``): work may still come from a page another
  worker is processing, or from a lease that lapses.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import DontCloseSpider

from crawlproject.store_lock import StoreInUse

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: The reason a worker's crawl ends with when its shared frontier is gone.
FRONTIER_LOST = "shared_frontier_lost"


class FrontierLost(RuntimeError):
    """The shared frontier was wiped or replaced while this worker used it."""


def crawl_signature(spider: Any) -> dict[str, str]:
    """What makes a crawl the one a shared frontier holds: its spider, its
    strategy and judge, its topic and its seeds (a digest)."""
    focus = getattr(spider, "focus", None)
    strategy = focus.strategy_name if focus is not None else ""
    seeds = sorted(getattr(spider, "seed_urls", ()) or ())
    return {
        "spider": str(getattr(spider, "name", "")),
        "strategy": str(strategy),
        "topic": " | ".join(str(part) for part in (getattr(spider, "query", ""), getattr(spider, "model_path", ""),
                                                  ",".join(getattr(spider, "good_categories", ()) or ())) if part),
        "seeds": hashlib.sha1("\n".join(seeds).encode()).hexdigest()[:16] if seeds else "",
        "seed_count": str(len(seeds)),
    }


def signature_conflict(theirs: dict[str, str], mine: dict[str, str]) -> str | None:
    """What tells another crawl's signature from this one's (None: the same
    crawl). Seeds count only when both name some.

    >>> signature_conflict({"spider": "a", "seeds": "x"}, {"spider": "a", "seeds": ""}) is None
    True
    >>> signature_conflict({"spider": "a", "seeds": "x"}, {"spider": "b", "seeds": "x"})
    "spider 'a', not 'b'"
    """
    for name, value in mine.items():
        other = theirs.get(name, "")
        if name in ("seeds", "seed_count") and (not value or not other):
            continue
        if other != value:
            return f"{name.replace('_', ' ')} {other!r}, not {value!r}"
    return None


def close_on_loss(crawler: Crawler, reason: str) -> None:
    """The shared frontier is gone (*reason*): the crawl says why in its stats and ends."""
    from scrapy.utils.defer import deferred_from_coro

    if crawler.stats is not None:
        crawler.stats.set_value("frontier/lost", reason)
    if crawler.engine is not None:
        deferred_from_coro(crawler.engine.close_spider_async(reason=FRONTIER_LOST))


#: The shared frontier's keys (``<key>:<name>``), every one: what clearing it deletes.
FRONTIER_KEYS = (
    "queue",
    "entries",
    "leased",
    "leases",
    "fetched",
    "refused",
    "payloads",
    "refs",
    "hosts",
    "seq",
    "polite",
    "bloom",
    "again",
    "bloomcfg",
    "crawl",
    "signature",
)
#: What a worker that cleared a drained frontier leaves as its identity, and for how long.
_FINISHED, _FINISHED_SECONDS = "finished:", 3600


class CrawlIdentity:
    def __init__(self, server: Any, key: str):
        self.server, self.key = server, key
        self.value: str | None = None  # None until joined: nothing to check against
        #: what makes this crawl the one the frontier holds (crawl_signature; empty: any crawl's)
        self.signature: dict[str, str] = {}

    def check(self) -> None:
        """Stop with one line if the frontier holds another crawl than this
        one's signature names (before this worker touches anything)."""
        found, signature = self.server.get(f"{self.key}:signature"), self.signature
        if not found or not signature:
            return
        try:
            theirs = json.loads(found)
        except ValueError:
            return
        conflict = signature_conflict(theirs.get("crawl", {}), signature)
        if conflict is not None:
            raise StoreInUse(
                f"the shared frontier {self.key} holds another crawl (started {theirs.get('started', '?')}: its "
                f"{conflict}): a second crawl would trample it — name another FOCUS_REDIS_KEY, or start this "
                "worker as that crawl's (same spider, strategy, topic and seeds)"
            )

    def join(self) -> None:
        """Write this crawl's identity and signature if no worker has, and
        read the identity there."""
        self.server.set(f"{self.key}:crawl", uuid.uuid4().hex, nx=True)
        if self.signature:
            said = {"crawl": self.signature, "started": datetime.now(UTC).isoformat(timespec="seconds")}
            self.server.set(f"{self.key}:signature", json.dumps(said), nx=True)
        found = self.server.get(f"{self.key}:crawl")
        self.value = found.decode() if isinstance(found, bytes) else found

    def loss(self, seen: bytes | None) -> str | None:
        """None while the frontier is this crawl's (*seen*: what a round trip
        read at ``<key>:crawl``); else why it is gone, in one message."""
        if self.value is None or (seen is not None and seen.decode() in (self.value, f"{_FINISHED}{self.value}")):
            return None
        cause = "wiped: its crawl key is gone (a Redis restarted without persistence, or FLUSHALL)" \
            if seen is None else "replaced by another crawl's"
        return (f"the shared frontier {self.key} was {cause}; the URLs it held are lost and this worker "
                "stops rather than crawl an empty or foreign frontier. Give Redis persistence "
                "(appendonly yes: docs/distributed.md) and start the crawl again")

    def clear(self) -> None:
        """Forget the whole shared frontier."""
        self.server.delete(*(f"{self.key}:{name}" for name in FRONTIER_KEYS))

    def end_if_drained(self, pending: int) -> bool:
        """A worker leaves a crawl that keeps nothing (``SCHEDULER_PERSIST``
        off): the frontier is cleared unless URLs are still *pending*
        (queued, or leased by other workers still crawling). Whether it was."""
        if pending:
            logger.info("SCHEDULER_PERSIST is off, but other workers are still crawling %s: kept", self.key)
            return False
        self.clear()
        self.finish()
        return True

    def finish(self) -> None:
        """The frontier was cleared when drained: a worker still in its grace time ends as drained, not as wiped."""
        if self.value is not None:
            self.server.set(f"{self.key}:crawl", f"{_FINISHED}{self.value}", ex=_FINISHED_SECONDS)


class DrainWatch:
    """How long the shared frontier has stayed drained, and whether that is the grace time."""

    def __init__(self, grace: float = 0.0):
        self.grace = grace
        self._since: float | None = None

    def busy(self) -> None:
        """Something is queued or leased somewhere: the drained time starts again."""
        self._since = None

    def leave_when_drained(self, pending: int | None, key: str) -> None:
        """The worker is idle: it stays (DontCloseSpider) while *pending* URLs
        are queued or leased anywhere (None: the counts are on their way), or
        the frontier has been drained for less than the grace time; else it
        says so and ends."""
        if pending is None:
            raise DontCloseSpider
        if pending:
            self.busy()
            raise DontCloseSpider
        drained = self.drained_long_enough()
        if drained is None:
            raise DontCloseSpider
        logger.info("The shared frontier %s has been empty, nothing leased, for %.0f s: this worker ends", key, drained)

    def drained_long_enough(self) -> float | None:
        """Drained now: the seconds it has been, once they reach the grace time (None before)."""
        now = time.monotonic()
        if self._since is None:
            self._since = now
        return now - self._since if now - self._since >= self.grace else None
