"""One contract, every backend (STYLE §11): the memory frontier, the memory
frontier with a durable JOBDIR, and the shared Redis frontier on a real
redis-server — including closing and reopening."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bench.servers import RedisServer  # noqa: TC001 (a fixture's type)
from crawlproject.distributed.frontier import RedisFrontier
from crawlproject.frontier.memory import MemoryFrontier

Factory = Callable[..., Any]
_names = itertools.count()
BLOOM = (2, 1000, 1e-6)


#: "-bloom": the seen set is exact for 2 fetched pages only, a Bloom filter after.
@pytest.fixture(params=["memory", "jobdir", "redis", "redis-prefetch", "memory-bloom", "redis-bloom"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    """make(**options) → an opened frontier; make(reopen=True) → a new
    instance on the same state (after close)."""
    kind = request.param
    key = f"test{next(_names)}:frontier"

    def make(max_size: int = 1000, host_batch: int = 1, host_cap: int = 0, lease: float = 60.0) -> Any:
        if kind.startswith("redis"):
            server = request.getfixturevalue("redis_server")
            frontier = RedisFrontier(
                redis.Redis.from_url(server.url),
                key,
                max_size,
                host_batch,
                host_cap=host_cap,
                lease_seconds=lease,
                prefetch=4 if kind == "redis-prefetch" else 1,
                seen=BLOOM if kind.endswith("bloom") else None,
            )
        else:
            # overflow="drop": the shared queue has no spill, and this is the contract both keep
            frontier = MemoryFrontier(max_size, host_batch, jobdir=tmp_path if kind == "jobdir" else None,
                                      host_cap=host_cap, overflow="drop",
                                      **({"seen": BLOOM} if kind.endswith("bloom") else {}))
        frontier.open()
        return frontier

    make.kind = kind  # type: ignore[attr-defined]
    yield make


def drain(frontier: Any, ack: bool = True) -> list[str]:
    keys = []
    while (entry := frontier.pop()) is not None:
        keys.append(entry.key)
        if ack:
            frontier.ack(entry.key)
    return keys


def test_best_first_with_first_in_first_out_ties(backend: Factory) -> None:
    frontier = backend()
    for name, score in [("a", 0.5), ("b", 0.9), ("c", 0.5), ("d", float("inf")), ("e", -1.0)]:
        frontier.push(f"http://h/{name}", score, payload=("p", name))
    entry = frontier.pop()
    assert entry is not None and (entry.key, entry.payload) == ("http://h/d", ("p", "d"))
    frontier.ack(entry.key)
    assert drain(frontier) == ["http://h/b", "http://h/a", "http://h/c", "http://h/e"]


def test_a_key_is_queued_once_raised_by_a_better_score_and_never_after_it_was_fetched(backend: Factory) -> None:
    frontier = backend()
    frontier.push("http://h/x", 0.2)
    frontier.push("http://h/x", 0.1)  # worse: ignored
    frontier.push("http://h/y", 0.5)
    frontier.push("http://h/x", 0.9)  # better: raised
    assert drain(frontier) == ["http://h/x", "http://h/y"]
    frontier.push("http://h/x", 1.0)  # fetched: never again
    assert drain(frontier) == []
    frontier.push("http://h/x", 1.0, force=True)  # unless forced (dont_filter)
    assert drain(frontier) == ["http://h/x"]


def test_a_full_frontier_keeps_the_best(backend: Factory) -> None:
    frontier = backend(max_size=3)
    for i, score in enumerate([0.5, 0.1, 0.9, 0.7, 0.05]):
        frontier.push(f"http://h/{i}", score)
    assert drain(frontier) == ["http://h/2", "http://h/3", "http://h/0"]


def test_leases_are_acknowledged_released_or_refused(backend: Factory) -> None:
    frontier = backend()
    for name, score in [("a", 0.9), ("b", 0.5), ("c", 0.1)]:
        frontier.push(f"http://h/{name}", score, url=f"http://h/{name}?as-found")
    a, b, c = frontier.pop(), frontier.pop(), frontier.pop()
    assert (a.url, frontier.leased()) == ("http://h/a?as-found", 3)
    frontier.ack(a.key)
    frontier.release(b.key)
    frontier.refuse(c.key, c.url)
    frontier.push("http://h/c", 0.3, url="http://h/c?as-found")  # the same URL as found is refused again
    frontier.push("http://h/c", 0.3, url="http://h/C-other-spelling")  # the page, spelt otherwise, is not
    assert [(e.key, e.url) for e in _pop_all(frontier)] == [
        ("http://h/b", "http://h/b?as-found"), ("http://h/c", "http://h/C-other-spelling")
    ]


def _pop_all(frontier: Any) -> list[Any]:
    entries = []
    while (entry := frontier.pop()) is not None:
        entries.append(entry)
        frontier.ack(entry.key)
    return entries


def test_a_claim_leases_now_and_only_once(backend: Factory) -> None:
    frontier = backend()
    frontier.push("http://h/queued", 0.5)
    assert frontier.claim("http://h/queued", 0.5)
    assert not frontier.claim("http://h/queued", 0.5)
    assert drain(frontier) == []
    frontier.ack("http://h/queued")
    assert not frontier.claim("http://h/queued", 0.5)


def test_the_per_host_cap_ends_a_host(backend: Factory) -> None:
    frontier = backend(host_cap=2)
    for i in range(5):
        frontier.push(f"http://trap/{i}", 1 - i / 10)
        frontier.push(f"http://other/{i}", 0.01)
    assert sum(1 for key in drain(frontier) if key.startswith("http://trap/")) == 2


def test_host_diversity_takes_k_hosts_per_batch(backend: Factory) -> None:
    frontier = backend(host_batch=3)
    for i in range(4):  # host a holds the four best URLs
        frontier.push(f"http://a/{i}", 0.9 - i / 100)
    for host in "bc":
        frontier.push(f"http://{host}/0", 0.5)
    order = [key.split("/")[2] for key in drain(frontier)]
    assert order[:3] == ["a", "b", "c"] and order[3:] == ["a", "a", "a"]


def test_rescore_reorders_what_is_queued_and_sees_the_payload(backend: Factory) -> None:
    frontier = backend()
    for i in range(5):
        frontier.push(f"http://h/{i}", i / 10, payload=("p", i))
    leased = frontier.pop()  # leased: not queued, not re-scored
    assert leased is not None and leased.key == "http://h/4"
    seen: list[Any] = []

    def inverse(key: str, score: float, payload: Any) -> float:
        seen.append(payload)
        return 1 - score

    frontier.rescore(inverse)
    assert sorted(seen) == [("p", i) for i in range(4)]
    frontier.release(leased.key)  # back with the score it had: 0.4
    assert drain(frontier) == ["http://h/0", "http://h/1", "http://h/2", "http://h/3", "http://h/4"]


@pytest.mark.parametrize("others", [0, 20])  # most of the queue (rebuilt at once) or a few keys (moved one by one)
def test_rescoring_some_keys_moves_them_up_or_down(backend: Factory, others: int) -> None:
    frontier = backend()
    for i in range(5):
        frontier.push(f"http://h/{i}", i / 10, payload=("p", i))
    for i in range(others):
        frontier.push(f"http://low/{i}", -2.0 - i)
    seen: list[Any] = []

    def scorer(key: str, score: float, payload: Any) -> float:
        seen.append((key, round(score, 6), payload))
        return {"http://h/0": 0.9, "http://h/4": -1.0}.get(key, score)

    frontier.rescore(scorer, ["http://h/0", "http://h/4", "http://h/not-queued"])
    assert sorted(seen) == [("http://h/0", 0.0, ("p", 0)), ("http://h/4", 0.4, ("p", 4))]
    lows = [f"http://low/{i}" for i in range(others)]
    assert drain(frontier) == ["http://h/0", "http://h/3", "http://h/2", "http://h/1", "http://h/4", *lows]


def test_a_sample_of_scores_is_of_the_urls_queued_now(backend: Factory) -> None:
    """The estimate of what is left reads the queue through a sample of its
    scores: a re-scored URL counts once, with its new score, and a leased one
    not at all (the memory frontier's heap keeps a re-scored URL's old place
    as a stale item until it is compacted)."""
    frontier = backend()
    for i in range(40):
        frontier.push(f"http://h/{i}", 0.0)
    for i in range(5):  # a few at a time: each moves to its new place in the heap
        frontier.rescore(lambda key, score, payload: 1.0, [f"http://h/{i}"])
    leased = frontier.pop()
    assert leased is not None and leased.key == "http://h/0"
    held = 3 if backend.kind == "redis-prefetch" else 0  # the next three, prefetched: out of the shared queue
    assert sorted(frontier.sample(1000)) == [(0.0, "h")] * 35 + [(1.0, "h")] * (4 - held)
    few = frontier.sample(10)
    assert 5 <= len(few) <= 39 and set(few) <= {(0.0, "h"), (1.0, "h")}


def test_the_scores_of_the_urls_in_flight_are_those_leased_and_not_settled(backend: Factory) -> None:
    frontier = backend()
    for i in range(6):
        frontier.push(f"http://h/{i}", i / 10)
    assert frontier.in_flight_scores() == []
    first, second = frontier.pop(), frontier.pop()
    assert first is not None and second is not None
    assert sorted(frontier.in_flight_scores()) == pytest.approx([0.4, 0.5])  # prefetched ones are not in flight
    frontier.ack(first.key)
    frontier.release(second.key)
    assert frontier.claim("http://h/new", 0.7)  # a target claimed for a fetch now
    assert frontier.in_flight_scores() == pytest.approx([0.7])


def test_a_first_in_first_out_frontier_has_no_scores_to_show() -> None:
    frontier = MemoryFrontier(100, fifo=True)
    frontier.open()
    frontier.push("http://h/1", 0.9)
    frontier.push("http://h/2", 0.1)
    assert frontier.pop() is not None
    assert frontier.sample(10) == [] and frontier.in_flight_scores() == []


@pytest.mark.parametrize("backend", ["jobdir", "redis"], indirect=True)  # without JOBDIR nothing is kept, by design
def test_closing_and_reopening_keeps_the_queue_and_the_seen_set(backend: Factory) -> None:
    frontier = backend()
    for i in range(6):
        frontier.push(f"http://h/{i}", i / 10, payload=("p", i))
    done = frontier.pop()
    frontier.ack(done.key)
    frontier.pop()  # leased when the crawl stops: given back on close
    frontier.close()
    again = backend()
    assert len(again) == 5
    assert drain(again) == [f"http://h/{i}" for i in (4, 3, 2, 1, 0)]
    again.push(done.key, 1.0)
    assert drain(again) == []


def test_a_dead_workers_leases_come_back_after_they_expire(redis_server: RedisServer) -> None:
    client = redis.Redis.from_url(redis_server.url)
    key = f"test{next(_names)}:frontier"
    dying = RedisFrontier(client, key, 1000, lease_seconds=1, prefetch=2)
    dying.open()
    for i in range(4):
        dying.push(f"http://h/{i}", i / 10)
    taken = [dying.pop().key, dying.pop().key]  # type: ignore[union-attr]
    dying.flush()
    # SIGKILL: the worker never acknowledges, releases nor renews.
    survivor = RedisFrontier(client, key, 1000, lease_seconds=1, prefetch=10)
    survivor.open()
    assert sorted(drain(survivor, ack=False)) == ["http://h/0", "http://h/1"]
    assert len(survivor) == 2  # the dead worker's two leases may come back: not done yet
    client.zadd(
        f"{key}:leases",
        {fp: 0 for fp in client.zrange(f"{key}:leases", 0, -1) if fp.decode() not in survivor._trips.held},
    )  # noqa: SLF001 (expire them now, not after a sleep)
    back = drain(survivor)
    assert sorted(back) == sorted(taken)


def test_a_restarted_redis_gets_its_scripts_again(redis_server: RedisServer) -> None:
    client = redis.Redis.from_url(redis_server.url)
    frontier = RedisFrontier(client, f"test{next(_names)}:frontier", 1000, prefetch=1)
    frontier.open()
    frontier.push("http://h/a", 0.5)
    frontier.flush()
    client.script_flush()  # what a restart of redis-server does to cached scripts
    frontier.push("http://h/b", 0.9)
    assert drain(frontier) == ["http://h/b", "http://h/a"]


def test_the_redis_frontier_rescores_off_the_reactor(redis_server: RedisServer) -> None:
    """In a crawl the scan runs in a thread: rescore() hands it over and
    returns; the queue is re-scored when the thread has run it. (Round trips
    go through the thread too: here they land at once.)"""
    from twisted.internet.defer import Deferred, succeed

    handed: list[Any] = []

    def in_thread(function: Any, *args: Any) -> Any:
        if getattr(function, "__name__", "") in ("execute", "_close_in_thread"):
            return succeed(function(*args))
        handed.append((function, args))
        return Deferred()

    frontier = RedisFrontier(redis.Redis.from_url(redis_server.url), "rescore-thread", 1000, in_thread=in_thread)
    frontier.open()
    for i in range(5):
        frontier.push(f"http://h/{i}", i / 10)
    frontier.flush()
    frontier.rescore(lambda key, score, payload: 1 - score)
    frontier.rescore(lambda key, score, payload: score)  # while one runs: kept for after it
    assert len(handed) == 1  # nothing scored on the caller's thread
    function, args = handed[0]
    function(*args)  # what the thread does
    assert drain(frontier) == [f"http://h/{i}" for i in range(5)]
    frontier.close()


def test_the_redis_frontier_samples_its_scores_off_the_reactor(redis_server: RedisServer) -> None:
    """The estimate of what is left samples the queue's scores every 50
    fetches: in a crawl the draw runs in a thread (a paused Redis held the
    reactor, and every download with it); the caller gets the last sample."""
    from twisted.internet.defer import Deferred, succeed

    handed: list[Any] = []

    def in_thread(function: Any, *args: Any) -> Any:
        if getattr(function, "__name__", "") in ("execute", "_close_in_thread"):
            return succeed(function(*args))
        handed.append(Deferred())
        handed[-1].addCallback(lambda _: function(*args))
        return handed[-1]

    frontier = RedisFrontier(redis.Redis.from_url(redis_server.url), f"test{next(_names)}:frontier", 1000,
                             in_thread=in_thread)
    frontier.open()
    for i in range(5):
        frontier.push(f"http://h/{i}", i / 10)
    frontier.flush()
    assert frontier.sample(10) == []  # nothing drawn on the caller's thread
    assert frontier.sample(10) == [] and len(handed) == 1  # one draw at a time
    handed[0].callback(None)  # what the thread does
    assert sorted(score for score, _ in frontier.sample(10)) == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    assert len(handed) == 2  # and the next is on its way
    frontier.close()


@pytest.mark.parametrize("error", [0.01, 0.001])
def test_the_redis_bloom_filter_never_refetches_and_its_false_positive_rate_is_the_one_configured(
    redis_server: RedisServer, error: float
) -> None:
    """Past its exact bound the shared seen set is a Bloom filter in plain
    Redis: every fetched URL stays fetched, and new URLs are taken for
    fetched at about the configured rate once it holds its capacity."""
    capacity = 20_000
    frontier = RedisFrontier(redis.Redis.from_url(redis_server.url), f"bloom{next(_names)}:frontier", 10**6,
                             prefetch=1000, batch=5000, seen=(100, capacity, error))
    frontier.open()
    fetched = [f"http://www.h{i % 50}.test/p{i}" for i in range(capacity + 100)]
    for url in fetched:
        frontier.push(url, 0.5)
    assert len(drain(frontier)) == len(fetched)
    frontier.flush()
    frontier._trips.outcomes.clear()
    for url in fetched:
        frontier.push(url, 0.5)
    frontier.flush()
    assert frontier._trips.outcomes == {"already_fetched": len(fetched)}  # not one queued again
    frontier._trips.outcomes.clear()
    fresh = [f"http://www.h{i % 50}.test/new{i}" for i in range(50_000)]
    for url in fresh:
        frontier.push(url, 0.5)
    frontier.flush()
    taken = frontier._trips.outcomes["already_fetched"] / len(fresh)
    assert error / 3 < taken < error * 3, taken
    client = redis.Redis.from_url(redis_server.url)
    assert client.scard(f"{frontier.key}:fetched") == 100  # the exact part stopped at its bound
    assert client.strlen(f"{frontier.key}:bloom") > 0
    frontier.clear()


def test_a_redis_bloom_filter_bigger_than_a_redis_string_is_refused_with_a_clear_error() -> None:
    from crawlproject.distributed.connection import bloom_bits

    assert bloom_bits(10_000_000, 1e-4) == 191_701_168  # 24 MB in Redis
    with pytest.raises(ValueError, match="largest string"):
        bloom_bits(1_000_000_000, 1e-9)
