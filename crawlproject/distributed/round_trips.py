"""This worker's side of its round trips to the shared frontier
(crawlproject.distributed.frontier): what each one takes out of the buffers
— the pushes, settlements and claims (crawlproject.distributed.outbox), a
renewal of this worker's leases, a pop — and what it brings back: the
pushes' outcomes, the URLs popped and now leased to this worker
(crawlproject.distributed.prefetch), the counts of what is queued and
leased, and the crawl's identity.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from crawlproject.distributed.outbox import Outbox
from crawlproject.distributed.prefetch import Prefetched
from crawlproject.distributed.wire import RoundTrip, Scripts, fingerprint, now_ms
from crawlproject.frontier.base import PushOutcome

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.statscollectors import StatsCollector

_OUTCOMES = {outcome.value: outcome for outcome in PushOutcome}


class RoundTrips:
    """:param gone: whether the crawl identity a round trip read back says
        the frontier this worker joined is gone (it then stops reading it)."""

    def __init__(
        self, server: Any, key: str, scripts: Scripts, fifo: bool, max_size: int, host_cap: int, lease_ms: int,
        host_batch: int, gone: Callable[[bytes | None], bool], stats: StatsCollector | None = None,
    ):
        self.server, self.key, self._scripts = server, key, scripts
        self.lease_ms, self.host_batch = lease_ms, host_batch
        self._gone = gone
        self.stats = stats
        self.outbox = Outbox(fifo, max_size, host_cap)
        self.prefetched = Prefetched(fifo)
        self.held: dict[str, float] = {}  # fingerprint → score of the URLs this worker leases
        self.queued = 0  # the last count Redis gave (queued, plus leased by others)
        self.outcomes: Counter[str] = Counter()  # of the pushes, not yet in the stats
        self.renewal_due = False  # the next round trip renews this worker's leases
        self.count = 0  # round trips made (this worker's own calls, counts and scans included)
        self.last_send = 0.0  # when the last round trip landed
        self.counted_at = 0.0  # when the counts were last read

    def calls(self, pop: int) -> RoundTrip:
        """What the next round trip sends, taken out of the buffers."""
        renew = (now_ms() + self.lease_ms, list(self.held)) if self.renewal_due and self.held else None
        self.renewal_due = False
        explore: list[str] = []
        if pop:  # the explored hosts' best, wherever they rank (crawlproject.frontier.exploration)
            explore, self.prefetched.wanted = self.prefetched.wanted, []
        popping = [pop, self.lease_ms, self.host_batch, len(explore), *explore, *self.prefetched.batch_hosts] \
            if pop else None
        return self.outbox.take(popping, renew)

    def execute(self, commands: list[tuple[str, list[Any]]]) -> list[Any]:
        """The network part (safe in a thread: it touches no state but the
        scripts' SHAs)."""

        def build(pipe: Any) -> None:
            for name, arguments in commands:
                self._scripts.call(pipe, name, self.key, arguments)
            pipe.zcard(f"{self.key}:queue")
            pipe.zcard(f"{self.key}:leases")
            pipe.get(f"{self.key}:crawl")

        return self._scripts.execute(build)

    def failed(self, calls: RoundTrip) -> None:
        """A round trip that failed: its buffers back, in order (the courier tries again)."""
        self.outbox.put_back(calls)
        self.renewal_due = self.renewal_due or calls.renew

    def apply(self, results: list[Any], calls: RoundTrip) -> None:
        """What a round trip brought, read back in the order it was sent."""
        self.count += 1
        self.last_send = self.counted_at = time.monotonic()
        at = 0
        if calls.pushes:
            self.outcomes.update(outcome.decode() for outcome in results[0])
            at = 1
        if calls.settles:
            at += 1
        for fp, _ in calls.claims:
            if not results[at]:  # another worker had it: it may be fetched twice
                self.held.pop(fp, None)
                self.outcomes["claim_lost"] += 1
            at += 1
        if calls.renew:
            at += 1
        if self._gone(results[-1]):
            return
        queued, leases = int(results[-3]), int(results[-2])
        popped = results[-4] if calls.pop else [0, 0, 0]
        self.queued = queued + max(0, leases - len(self.held) - int(popped[1]))
        if calls.pop:
            dropped, leased = self.prefetched.fill(popped)
            if dropped and self.stats is not None:
                self.stats.inc_value("frontier/host_cap_dropped", dropped)
            self.held.update(leased)

    def give_back_prefetched(self) -> None:
        """The URLs popped and not handed out yet, released in the buffers."""
        for entry in self.prefetched:
            fp = fingerprint(entry.key)
            self.held.pop(fp, None)
            self.outbox.settle("release", fp)
        self.prefetched.clear()

    def give_back_everything(self) -> None:
        """Every lease this worker holds, released in the buffers (not fetched: back for anyone)."""
        self.give_back_prefetched()
        for fp in list(self.held):
            self.outbox.settle("release", fp)
        self.held.clear()

    def forget(self) -> None:
        """The frontier is gone: nothing of it is held or sent any more."""
        self.prefetched.clear()
        self.held.clear()
        self.outbox.clear()

    def run_alone(self, script: str, arguments: list[Any]) -> Any:
        """One script in a round trip of its own (a worker without a thread of its own)."""
        self.count += 1
        return self._scripts.run(script, self.key, arguments)

    def count_pending(self) -> int:
        """:meth:`pending`, in a round trip of its own."""
        self.count += 1
        return self.pending()

    def pending(self) -> int:
        """URLs queued, plus those other workers lease, read now (safe in a thread)."""
        pipe = self.server.pipeline(transaction=False)
        pipe.zcard(f"{self.key}:queue")
        pipe.zcard(f"{self.key}:leases")
        queued, leases = pipe.execute()
        return int(queued) + max(0, int(leases) - len(self.held))

    def publish(self) -> None:
        """The pushes' outcomes and the round trips so far, in the crawl's stats."""
        if self.stats is None:
            return
        for outcome, count in self.outcomes.items():
            self.stats.inc_value(f"frontier/{_OUTCOMES[outcome].value}", count)
            if outcome in ("added", "added_evicting", "added_over_bound", "raised"):
                self.stats.inc_value("scheduler/enqueued/redis", count)
            if outcome == "added_evicting":
                self.stats.inc_value("frontier/evicted", count)
        self.outcomes.clear()
        self.stats.set_value("frontier/redis_round_trips", self.count)
