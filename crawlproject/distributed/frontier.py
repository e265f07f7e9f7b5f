"""A frontier shared by any number of crawl processes, on Redis.

    -s FOCUS_FRONTIER_BACKEND=crawlproject.distributed.frontier.RedisFrontier -s REDIS_URL=redis://127.0.0.1:6379

The same contract as the memory frontier (crawlproject.frontier.base):
float scores, one global best-first order, a bound with eviction, one seen
set, refusal on rediscovery, per-host diversity and cap — kept in Redis and
changed only by atomic Lua scripts (crawlproject.distributed.scripts), so
workers on one or many machines share one frontier.

It builds on scrapy-redis where its idioms fit — the connection
(``REDIS_URL``, ``REDIS_PARAMS``), ``SCHEDULER_PERSIST``,
``SCHEDULER_FLUSH_ON_START``, keys named after the spider — and replaces its
queue, which takes integer priorities and pays a round trip per request:
pushes are buffered and sent with the settlement of the page whose links
they are, pops lease a few URLs at once, a leased URL comes back when its
worker dies, and a worker ends by itself once the shared frontier has stayed
drained (docs/distributed.md: what is shared, what is per worker; Redis off
the reactor; leases; when a worker ends).
"""

from __future__ import annotations

import logging
import time
from functools import partial
from typing import TYPE_CHECKING, Any

from scrapy import signals
from twisted.internet import task, threads

from crawlproject import config
from crawlproject.config import DEFAULTS
from crawlproject.distributed import scan
from crawlproject.distributed.connection import (
    configure_seen_set,
    reachable_redis,
    redis_key,
    warn_without_persistence,
)
from crawlproject.distributed.courier import Courier
from crawlproject.distributed.membership import (
    CrawlIdentity,
    DrainWatch,
    FrontierLost,
    close_on_loss,
    crawl_signature,
)
from crawlproject.distributed.round_trips import RoundTrips
from crawlproject.distributed.wire import RoundTrip, Scripts, entry_tail, fingerprint, now_ms
from crawlproject.frontier.base import FrontierEntry, PushOutcome
from crawlproject.frontier.pop_rule import ANY_SLOT
from crawlproject.frontier.seen import seen_set_settings
from crawlproject.scrapy_private import wake_engine

if TYPE_CHECKING:
    from collections.abc import Callable, Collection
    from typing import Self

    from redis import Redis
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.defer import Deferred

    from crawlproject.frontier.pop_rule import PopRule

logger = logging.getLogger(__name__)

class RedisFrontier:
    def __init__(
        self,
        server: Redis,
        key: str,
        max_size: int,
        host_batch: int = 1,
        fifo: bool = False,
        host_cap: int = 0,
        lease_seconds: float = DEFAULTS["FOCUS_REDIS_LEASE_SECONDS"],
        prefetch: int = DEFAULTS["FOCUS_REDIS_PREFETCH"],
        batch: int = DEFAULTS["FOCUS_REDIS_BATCH"],
        persist: bool = True,
        flush_on_start: bool = False,
        stats: StatsCollector | None = None,
        in_thread: Callable[..., Deferred[Any]] | None = None,
        seen: tuple[int, int, float] | None = None,
    ):
        self.server: Any = server  # redis-py's types are loose: bytes in, bytes out here
        self.key = key
        self.max_size, self.host_batch, self.fifo, self.host_cap = max_size, host_batch, fifo, host_cap
        self.lease_ms = int(lease_seconds * 1000)
        self.prefetch, self.batch = prefetch, batch
        self.persist, self.flush_on_start = persist, flush_on_start
        #: (exact, capacity, error): the seen set is exact up to *exact* fetched
        #: pages, then a Bloom filter in Redis (None: exact whatever the size).
        self.seen = seen
        self.stats = stats
        #: Runs a re-score off the reactor (``threads.deferToThread`` in a
        #: crawl); ``None``: at once, for tools and tests with no reactor.
        self.in_thread = in_thread
        self._scripts = Scripts(server, ("PUSH", "POP", "SETTLE", "CLAIM", "RENEW", "RESCORE"))
        #: what this worker holds and sends, and what its round trips brought
        self._trips = RoundTrips(server, key, self._scripts, fifo, max_size, host_cap, self.lease_ms, host_batch,
                                 self._gone, stats)
        self._renewal: task.LoopingCall | None = None
        self._closing = False
        self._reads = scan.QueueReads(server, key, self._scripts, in_thread, self._before_rescore, self._count_trips,
                                      lambda: self._closing)
        self.drain = DrainWatch()  # its grace: seconds the frontier must stay drained before this worker ends
        #: Off the reactor (a crawl: *in_thread* given): every round trip of
        #: the crawl's own calls runs in a thread, one at a time, in order;
        #: pops are served from what the last round trip prefetched.
        self.asynchronous = in_thread is not None
        self._courier = Courier(key, self._trips.execute, self._trips.calls, self._landed, self._trips.failed,
                                lambda: bool(self._trips.outbox), lambda: self._closing, in_thread)
        self._idle_asked_at = 0.0  # when an idle check last asked for fresh counts
        #: Called when a round trip brought URLs (the engine is woken).
        self.wake: Callable[[], None] | None = None
        #: The crawl's identity (``<key>:crawl``), read back with every round trip.
        self.identity = CrawlIdentity(server, key)
        self.lost: str | None = None  #: why the frontier is gone, once it is
        #: Called once with :attr:`lost` (a crawl closes the spider).
        self.on_lost: Callable[[str], None] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        from scrapy_redis.connection import get_redis_from_settings

        settings = crawler.settings
        spider = crawler.spider
        frontier = cls(
            server=reachable_redis(settings, get_redis_from_settings),
            key=redis_key(settings, spider.name if spider else "crawl"),
            max_size=config.get_int(settings, "FOCUS_FRONTIER_MAX"),
            host_batch=config.get_int(settings, "FOCUS_FRONTIER_HOST_BATCH"),
            fifo=config.get_choice(settings, "FOCUS_FRONTIER_ORDER") == "fifo",
            host_cap=config.get_int(settings, "FOCUS_MAX_PAGES_PER_HOST"),
            lease_seconds=config.get_float(settings, "FOCUS_REDIS_LEASE_SECONDS"),
            prefetch=config.get_int(settings, "FOCUS_REDIS_PREFETCH"),
            batch=config.get_int(settings, "FOCUS_REDIS_BATCH"),
            persist=settings.getbool("SCHEDULER_PERSIST", True),
            flush_on_start=settings.getbool("SCHEDULER_FLUSH_ON_START", False),
            stats=crawler.stats,
            in_thread=threads.deferToThread,
            seen=seen_set_settings(settings),
        )
        frontier.identity.signature = crawl_signature(spider) if spider is not None else {}
        frontier.drain.grace = config.get_float(settings, "FOCUS_REDIS_IDLE_GRACE")
        frontier.wake = partial(wake_engine, crawler)
        frontier.on_lost = partial(close_on_loss, crawler)
        crawler.signals.connect(frontier._spider_idle, signals.spider_idle)
        return frontier

    # -- lifecycle -------------------------------------------------------------

    def open(self) -> None:
        self.identity.check()  # another crawl's frontier: one line, nothing touched
        if self.flush_on_start:
            self.clear()
        if self.seen is not None:
            configure_seen_set(self.server, self.key, self.seen)
            self._trips.count += 2
        self.identity.join()
        warn_without_persistence(self.server, self.key)
        self._trips.queued = self._trips.count_pending()
        if self._trips.queued:
            logger.info("Joining the shared frontier %(key)s: %(queued)d URLs queued or leased",
                        {"key": self.key, "queued": self._trips.queued})
        self._renewal = task.LoopingCall(self._renew)
        self._renewal.start(min(_FLUSH_SECONDS * 5, self.lease_ms / 3000), now=False)

    def close(self) -> Deferred[None] | None:
        """Give back what this worker leases and send what is buffered; off
        the reactor, once the round trip in flight has landed (a Deferred
        the scheduler's close returns: Scrapy waits for it)."""
        self._closing = True  # a re-score still running stops at its next chunk
        if self._renewal is not None and self._renewal.running:
            self._renewal.stop()
        if self.lost is not None:
            return None  # nothing of ours is left there to give back
        if not self.asynchronous:
            self._trips.give_back_everything()
            self._courier.now()
            if not self.persist:
                self._trips.count += self.identity.end_if_drained(self._trips.count_pending())  # one round trip
            self._trips.publish()
            return None
        assert self.in_thread is not None
        in_thread = self.in_thread

        def send(_: Any) -> Deferred[Any]:
            self._trips.give_back_everything()
            calls = self._trips.calls(0)
            return in_thread(self._close_in_thread, calls.commands).addCallback(self._closed, calls)

        return self._courier.detach().addBoth(send)

    def _close_in_thread(self, commands: list[tuple[str, list[Any]]]) -> tuple[list[Any], int]:
        results = self._trips.execute(commands)
        return results, (self._trips.pending() if not self.persist else 0)

    def _closed(self, landed: tuple[list[Any], int], calls: RoundTrip) -> None:
        results, pending = landed
        self._trips.apply(results, calls)
        if not self.persist:
            self._trips.count += self.identity.end_if_drained(pending)  # cleared: one round trip
        self._trips.publish()

    def clear(self) -> None:
        """Forget the whole shared frontier (``SCHEDULER_FLUSH_ON_START``)."""
        self.identity.clear()
        self._trips.count += 1

    def flush(self) -> None:
        """Send the buffered pushes, then the settlements (in that order: a
        page's links are queued before its lease is acknowledged), in one
        round trip — off the reactor in a crawl."""
        if self._trips.outbox:
            self._courier.send()

    def _landed(self, results: list[Any], calls: RoundTrip) -> None:
        before = len(self._trips.prefetched)
        self._trips.apply(results, calls)
        if len(self._trips.prefetched) > before and self.wake is not None and not self._closing:
            self.wake()

    def _gone(self, identity: bytes | None) -> bool:
        """Whether the frontier joined is gone (its identity missing or another's); the first time, say so and stop."""
        loss = self.identity.loss(identity)
        if loss is None:
            return False
        if self.lost is None:
            self.lost = loss
            logger.error("%s", self.lost)
            self._trips.forget()
            if self.on_lost is None:
                raise FrontierLost(self.lost)
            self.on_lost(self.lost)
        return True

    # -- the frontier contract ------------------------------------------------------

    def push(
        self,
        key: str,
        score: float,
        payload: Any = None,
        force: bool = False,
        url: str | None = None,
        slot: str | None = None,  # a shared queue orders by score alone (docs/distributed.md)
        start: bool = False,
    ) -> PushOutcome:
        """Buffered: the outcome is known at the next flush (counted in stats)."""
        if self._trips.outbox.push(key, score, payload, force, url) >= self.batch:
            self._courier.send()
        return PushOutcome.PENDING

    def pop(self, rule: PopRule = ANY_SLOT) -> FrontierEntry | None:
        """Off the reactor, a URL prefetched by an earlier round trip (the next
        asked for at half the prefetch; None while it is on its way: it wakes
        the engine when it lands), *rule* applied within it (Frontier.pop)."""
        if self.asynchronous:
            if len(self._trips.prefetched) <= self.prefetch // 2:
                self._courier.send(pop=self.prefetch)
        elif not self._trips.prefetched:
            self._courier.send(pop=self.prefetch)  # our own links first, so the choice is global
        entry = self._trips.prefetched.take(rule)
        if entry is None and self._trips.prefetched.ask_for_explored():
            self._courier.send(pop=1)  # the explored hosts' best come with it
            if not self.asynchronous:
                entry = self._trips.prefetched.take(rule)
        return entry

    def claim(
        self, key: str, score: float, payload: Any = None, url: str | None = None, slot: str | None = None
    ) -> bool:
        """Off the reactor the claim is sent with the next round trip and
        granted at once: a target another worker claimed first may be
        fetched twice (``frontier/claim_lost``), never lost."""
        pid, blob = self._trips.outbox.payload_id(payload)
        fp = fingerprint(key)
        if fp in self._trips.held:
            return False
        arguments = [now_ms(), self.host_cap, self.lease_ms, fp, entry_tail(key, url if url and url != key else ""),
                     repr(-(score + 0.0)), pid, blob]
        if self.asynchronous:
            self._trips.held[fp] = score
            self._trips.outbox.claim(fp, arguments)
            self._courier.send()
            return True
        self.flush()
        granted = self._trips.run_alone("CLAIM", arguments)
        if granted:
            self._trips.held[fp] = score
        return bool(granted)

    def ack(self, key: str) -> None:
        fp = fingerprint(key)
        self._trips.held.pop(fp, None)
        self._trips.outbox.settle("ack", fp)
        # A page done: its links and lease go together, in order, within FLUSH_SECONDS (a kill loses leases only).
        waited = time.monotonic() - self._trips.last_send
        if waited >= _FLUSH_SECONDS or len(self._trips.outbox.settles) >= 3 * self.batch:
            self._courier.send()

    def release(self, key: str) -> None:
        fp = fingerprint(key)
        self._trips.held.pop(fp, None)
        self._trips.outbox.settle("release", fp)

    def refuse(self, key: str, url: str) -> None:
        fp = fingerprint(key)
        self._trips.held.pop(fp, None)
        self._trips.outbox.settle("refuse", fp, fingerprint(url))
        self._courier.send()

    def rescore(self, scorer: Callable[[str, float, Any], float], keys: Collection[str] | None = None) -> None:
        """Re-score every URL queued in the shared frontier (by whichever
        worker's strategy asks), a thousand at a time, in a thread: the scan
        is as long as the queue, and the reactor goes on meanwhile (a URL
        popped before its new score is written keeps its place; the script
        writes only scores of URLs still queued). A re-score asked for while
        one runs is run once after it, with the latest scorer."""
        if not self.fifo:
            self._reads.rescore(scorer, list(keys) if keys is not None else None)

    def _before_rescore(self) -> None:
        self._trips.give_back_prefetched()  # queued, as far as the crawl knows: re-scored with the rest
        self.flush()

    def _count_trips(self, trips: int) -> None:
        self._trips.count += trips

    def sample(self, count: int) -> list[tuple[float, str]]:
        """Off the reactor, the last draw's sample (none before the first); the next
        is drawn in a thread: a slow Redis never stops the crawl for an estimate."""
        return [] if self.fifo else self._reads.sample(count)

    def __len__(self) -> int:
        """URLs queued, plus those other workers lease (they may come back,
        or bring links): a worker stops only when nothing is left anywhere."""
        return self._trips.queued + len(self._trips.prefetched)

    def leased(self) -> int:
        return len(self._trips.held)

    def in_flight_scores(self) -> list[float]:
        """This worker's leases less those prefetched (still to be handed out:
        counted as queued)."""
        if self.fifo:
            return []  # scores are ignored
        waiting = {fingerprint(entry.key) for entry in self._trips.prefetched}
        return [score for fp, score in self._trips.held.items() if fp not in waiting]

    def queued_keys(self) -> set[str]:  # every key queued (inspection, tests)
        return scan.queued_keys(self.server, self.key)

    def leased_keys(self) -> set[str]:  # every key any worker leases (inspection, tests)
        return scan.leased_keys(self.server, self.key)

    def _spider_idle(self) -> None:
        """Idle: the worker ends once the shared frontier stayed drained for
        the grace time (membership.DrainWatch); off the reactor the counts
        come from a round trip in a thread, and it stays while one is due."""
        if self._closing:
            return
        if not self.asynchronous:
            self.flush()
            pending: int | None = self._trips.count_pending()
        elif self._trips.outbox or self._trips.counted_at <= self._idle_asked_at:  # no counts read since last asked
            self._idle_asked_at = time.monotonic()
            self._courier.send(pop=self.prefetch)
            pending = None
        else:
            pending = self._trips.queued
        self.drain.leave_when_drained(None if pending is None else pending + len(self._trips.prefetched), self.key)

    # -- internals -------------------------------------------------------------------

    def _renew(self) -> None:
        """Keep this worker's leases alive (a dead worker's lapse), and take
        the occasion to send what is buffered and refresh the counts."""
        if self.asynchronous:
            self._trips.renewal_due = True
            self._courier.send(pop=0 if self._trips.prefetched else self.prefetch)
            self._trips.publish()
            return
        try:
            if self._trips.held:
                self._trips.run_alone("RENEW", [now_ms() + self.lease_ms, *self._trips.held])
            self.flush()
            if not self._trips.prefetched:
                self._trips.queued = self._trips.count_pending()
            self._trips.publish()
        except Exception:  # noqa: BLE001 (Redis away for a moment: the next renewal tries again)
            logger.warning("Renewing leases in %s failed; retrying", self.key, exc_info=True)


_FLUSH_SECONDS = 0.2


