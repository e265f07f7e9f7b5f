"""The in-memory frontier against a brute-force model, and its promises."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest

from crawlproject.frontier.base import PushOutcome
from crawlproject.frontier.memory import MemoryFrontier
from crawlproject.frontier.pop_rule import PopRule, within_reach
from crawlproject.web.urls import host_of


class ModelFrontier:
    """The specification, written the slow obvious way."""

    def __init__(self, max_size: int, host_batch: int):
        self.max_size, self.host_batch = max_size, host_batch
        self.entries: dict[str, tuple[float, int]] = {}
        self.fetched: set[str] = set()
        self.batch: list[str] = []
        self.seq = 0

    def push(self, url: str, score: float) -> PushOutcome:
        if url in self.fetched:
            return PushOutcome.ALREADY_FETCHED
        if url in self.entries:
            if score <= self.entries[url][0]:
                return PushOutcome.DUPLICATE
            outcome = PushOutcome.RAISED
        elif len(self.entries) >= self.max_size:
            # the entry that would pop last: lowest score, newest among ties
            low_url, (low_score, _) = min(self.entries.items(), key=lambda kv: (kv[1][0], -kv[1][1]))
            if low_score >= score:
                return PushOutcome.REJECTED_FULL
            del self.entries[low_url]
            outcome = PushOutcome.ADDED_EVICTING
        else:
            outcome = PushOutcome.ADDED
        self.entries[url] = (score, self.seq)
        self.seq += 1
        return outcome

    def pop(self) -> str | None:
        if not self.entries:
            return None
        eligible = {u: v for u, v in self.entries.items() if host_of(u) not in self.batch}
        if not eligible:
            self.batch = []
            eligible = dict(self.entries)
        url = min(eligible, key=lambda u: (-eligible[u][0], eligible[u][1]))
        del self.entries[url]
        self.fetched.add(url)
        self.batch.append(host_of(url))
        if len(self.batch) >= self.host_batch:
            self.batch = []
        return url


@pytest.mark.parametrize("seed", range(40))
def test_matches_the_model(seed: int) -> None:
    rng = random.Random(seed)
    host_batch = rng.choice([1, 2, 3, 5])
    max_size = rng.choice([5, 20, 10_000])
    frontier = MemoryFrontier(max_size, host_batch, overflow="drop")
    model = ModelFrontier(max_size, host_batch)
    for _ in range(500):
        if rng.random() < 0.6:
            url = f"http://h{rng.randrange(6)}/p{rng.randrange(60)}"
            score = rng.choice([0.0, 0.5, 0.9, rng.random()])
            assert frontier.push(url, score) is model.push(url, score)
        else:
            entry = frontier.pop()
            assert (entry.url if entry else None) == model.pop()
        assert len(frontier) == len(model.entries)


@pytest.mark.parametrize("seed", range(30))
def test_a_spilling_frontier_pops_as_an_unbounded_one(seed: int, tmp_path: Path) -> None:
    """Past its bound the frontier spills to disk and loses nothing: the
    same pushes and pops give the same URLs, in the same order, as a
    frontier with room for everything — scores and ties alike. (Slot and
    host-batch choices look at the URLs in memory only.)"""
    rng = random.Random(seed)
    lifo, fifo = rng.random() < 0.5, rng.random() < 0.2
    bounded = MemoryFrontier(rng.choice([1, 4, 16]), fifo=fifo, lifo=lifo, spill_dir=tmp_path)
    unbounded = MemoryFrontier(100_000, fifo=fifo, lifo=lifo)
    for _ in range(600):
        if rng.random() < 0.65:
            url = f"http://h{rng.randrange(5)}/p{rng.randrange(120)}"
            score = rng.choice([0.0, 0.5, 0.9, rng.random()])
            start = rng.random() < 0.1
            assert bounded.push(url, score, start=start).queued == unbounded.push(url, score, start=start).queued
        else:
            got, expected = bounded.pop(), unbounded.pop()
            assert (got and (got.url, got.score)) == (expected and (expected.url, expected.score))
        assert len(bounded) == len(unbounded)
    assert bounded.spilled() > 0
    bounded.close()
    assert not any(tmp_path.iterdir())  # the spill is scratch space: gone when the frontier closes


def test_a_drop_frontier_warns_once_and_counts_every_drop(caplog: pytest.LogCaptureFixture) -> None:
    from scrapy.utils.test import get_crawler

    stats = get_crawler().stats
    frontier = MemoryFrontier(1000, overflow="drop", stats=stats)
    queued = sum(frontier.push(f"http://h/{i}", 0.5).queued for i in range(1500))
    assert queued == 1000
    assert stats.get_value("frontier/dropped") == 500
    assert caplog.text.count("FOCUS_FRONTIER_OVERFLOW=drop") == 1


def test_ties_pop_last_in_first_out_as_scrapy_s_default_queue() -> None:
    frontier = MemoryFrontier(100, lifo=True)
    for i in range(5):
        frontier.push(f"http://h/{i}", 0.5)
    frontier.push("http://h/best", 0.9)
    assert [frontier.pop().url for _ in range(6)] == ["http://h/best", *(f"http://h/{i}" for i in range(4, -1, -1))]  # type: ignore[union-attr]


def test_start_requests_pop_after_others_of_equal_score() -> None:
    frontier = MemoryFrontier(100, lifo=True, start_lifo=False)
    frontier.push("http://h/s1", 0.0, start=True)
    frontier.push("http://h/s2", 0.0, start=True)
    frontier.push("http://h/a", 0.0)
    frontier.push("http://h/b", 0.0)
    assert [frontier.pop().url for _ in range(4)] == ["http://h/b", "http://h/a", "http://h/s1", "http://h/s2"]  # type: ignore[union-attr]


def test_a_busy_slot_is_skipped_while_another_has_urls() -> None:
    frontier = MemoryFrontier(100)
    frontier.push("http://a/1", 0.9, slot="a")
    frontier.push("http://a/2", 0.8, slot="a")
    frontier.push("http://b/1", 0.1, slot="b")
    assert frontier.pop(PopRule(busy={"a"})).url == "http://b/1"  # type: ignore[union-attr]
    # every slot with URLs busy: nothing when told to hold, else the best URL all the same
    assert frontier.pop(PopRule(busy={"a", "b"}, hold=True)) is None
    assert frontier.pop(PopRule(busy={"a", "b"})).url == "http://a/1"  # type: ignore[union-attr]
    assert frontier.pop().url == "http://a/2"  # type: ignore[union-attr]


def test_with_a_window_a_ready_slot_takes_only_a_url_among_the_best() -> None:
    """The pages objective: a poor URL of a free slot waits while N better
    ones wait for their busy slot."""
    frontier = MemoryFrontier(100)
    for i in range(3):
        frontier.push(f"http://a/{i}", 0.9 - i / 10, slot="a")
    frontier.push("http://b/1", 0.1, slot="b")
    assert frontier.pop(PopRule(busy={"a"}, window=3)) is None  # 3 of a's rank above b's
    assert frontier.pop(PopRule(busy={"a", "b"}, window=4)) is None  # every slot busy: nothing, not the best anyway
    assert frontier.pop(PopRule(busy={"a"}, window=4)).url == "http://b/1"  # type: ignore[union-attr]  # b's is 4th best
    assert frontier.pop(PopRule(window=1)).url == "http://a/0"  # type: ignore[union-attr]
    assert len(frontier) == 2


def test_an_exploring_pop_takes_the_first_free_slot_named_whatever_its_rank() -> None:
    """PopRule.only (crawlproject.frontier.exploration): the best URL of the
    first named slot that is free and holds one, below any window."""
    frontier = MemoryFrontier(100)
    for i in range(3):
        frontier.push(f"http://a/{i}", 0.9 - i / 10, slot="a")
    frontier.push("http://b/1", 0.1, slot="b")
    frontier.push("http://b/2", 0.2, slot="b")
    frontier.push("http://c/1", 0.5, slot="c")
    assert frontier.pop(PopRule(only=["x", "b", "c"])).url == "http://b/2"  # type: ignore[union-attr]
    assert frontier.pop(PopRule(busy={"b"}, only=["b", "c"])).url == "http://c/1"  # type: ignore[union-attr]
    assert frontier.pop(PopRule(only=["c"])) is None  # c has no URL left: nothing, not the best of all
    assert frontier.pop(PopRule(busy={"a"}, window=2)) is None  # b's 0.1 waits: the window is a's
    assert [frontier.pop().url for _ in range(4)] == ["http://a/0", "http://a/1", "http://a/2", "http://b/1"]  # type: ignore[union-attr]


def test_a_floor_lets_only_urls_scoring_at_least_it_go() -> None:
    """PopRule.floor: while a crawl waits for its seeds' answers, only seeds (+∞) go."""
    frontier = MemoryFrontier(100)
    frontier.push("http://a/1", 0.9, slot="a")
    frontier.push("http://b/", math.inf, slot="b")
    assert frontier.pop(PopRule(floor=math.inf)).url == "http://b/"  # type: ignore[union-attr]
    assert frontier.pop(PopRule(floor=math.inf)) is None
    assert frontier.pop().url == "http://a/1"  # type: ignore[union-attr]


def test_ties_pop_first_in_first_out() -> None:
    frontier = MemoryFrontier(100)
    for i in range(10):
        frontier.push(f"http://h/{i}", 0.5)
    assert [frontier.pop().url for _ in range(10)] == [f"http://h/{i}" for i in range(10)]  # type: ignore[union-attr]


def test_fifo_mode_ignores_scores_and_refuses_when_full() -> None:
    frontier = MemoryFrontier(3, fifo=True, overflow="drop")
    outcomes = [frontier.push(f"http://h/{i}", float(i)) for i in range(5)]
    assert outcomes[3:] == [PushOutcome.REJECTED_FULL, PushOutcome.REJECTED_FULL]
    assert [frontier.pop().url for _ in range(3)] == ["http://h/0", "http://h/1", "http://h/2"]  # type: ignore[union-attr]


def test_full_frontier_evicts_the_lowest() -> None:
    frontier = MemoryFrontier(2, overflow="drop")
    frontier.push("http://h/low", 0.1)
    frontier.push("http://h/mid", 0.5)
    assert frontier.push("http://h/high", 0.9) is PushOutcome.ADDED_EVICTING
    assert "http://h/low" not in frontier
    assert frontier.push("http://h/lower", 0.05) is PushOutcome.REJECTED_FULL


def test_a_url_found_again_with_a_better_score_is_raised() -> None:
    frontier = MemoryFrontier(10)
    frontier.push("http://a/1", 0.2, payload="old")
    frontier.push("http://a/2", 0.5)
    assert frontier.push("http://a/1", 0.9, payload="new") is PushOutcome.RAISED
    first = frontier.pop()
    assert first is not None and (first.url, first.score, first.payload) == ("http://a/1", 0.9, "new")


def test_fetched_urls_are_never_queued_again_unless_forced() -> None:
    frontier = MemoryFrontier(10)
    frontier.push("http://a/1", 0.2)
    frontier.pop()
    assert frontier.push("http://a/1", 0.9) is PushOutcome.ALREADY_FETCHED
    assert frontier.push("http://a/1", 0.9, force=True) is PushOutcome.ADDED


def test_every_batch_of_k_pops_has_k_distinct_hosts() -> None:
    k = 4
    frontier = MemoryFrontier(10_000, host_batch=k)
    rng = random.Random(7)
    for i in range(2000):
        frontier.push(f"http://host{rng.randrange(12)}/{i}", rng.random())
    hosts = [host_of(frontier.pop().url) for _ in range(2000)]  # type: ignore[union-attr]
    # With 12 hosts always available, every aligned batch is full and distinct.
    for start in range(0, 1200, k):
        assert len(set(hosts[start : start + k])) == k


def test_batch_ends_early_when_only_batch_hosts_remain() -> None:
    frontier = MemoryFrontier(100, host_batch=3)
    for i in range(3):
        frontier.push(f"http://only/{i}", 1.0 - i / 10)
    assert [frontier.pop().url for _ in range(3)] == [f"http://only/{i}" for i in range(3)]  # type: ignore[union-attr]


def test_a_closed_jobdir_frontier_resumes_the_same_order(tmp_path: Path) -> None:
    rng = random.Random(3)
    original = MemoryFrontier(500, host_batch=3, jobdir=tmp_path)
    original.open()
    for i in range(800):
        original.push(f"http://h{rng.randrange(9)}/{i}", rng.random(), payload=("p", i % 7))
    popped = [original.pop().url for _ in range(50)]  # type: ignore[union-attr]
    for url in popped:
        original.ack(url)  # fetched
    expected = [(e.key, e.score, e.payload) for e in _drain(MemoryFrontier(500, 3), original)]
    original.close()
    resumed = MemoryFrontier(500, host_batch=3, jobdir=tmp_path)
    resumed.open()
    got = [(e.key, e.score, e.payload) for e in _drain(None, resumed)]
    assert sorted(got) == sorted(expected) and len(got) == 750  # past the bound of 500: spilled, not lost
    assert all(resumed.push(url, 1.0) is PushOutcome.ALREADY_FETCHED for url in popped)


def _drain(_: object, frontier: MemoryFrontier) -> list[Any]:
    """Everything queued, without changing *frontier* (a copy through its entries)."""
    return list(frontier.entries())


def test_a_killed_frontier_loses_nothing_but_its_leases_come_back(tmp_path: Path) -> None:
    frontier = MemoryFrontier(10_000, jobdir=tmp_path)
    frontier.open()
    for i in range(100):
        frontier.push(f"http://h/{i}", i / 100, payload=("get", "parse", None, {"depth": 1}, False))
    done = []
    for _ in range(30):
        entry = frontier.pop()
        assert entry is not None
        frontier.ack(entry.key)
        done.append(entry.key)
    in_flight = [frontier.pop() for _ in range(5)]  # popped, never acknowledged
    for i in range(100, 120):
        frontier.push(f"http://h/{i}", 0.5)  # links of a page being processed
    frontier.ack(in_flight[0].key)  # type: ignore[union-attr]  # one more page done: all before it is durable
    # SIGKILL here: no close(), the process is gone.
    resumed = MemoryFrontier(10_000, jobdir=tmp_path)
    resumed.open()
    queued = {entry.key for entry in resumed.entries()}
    expected = {f"http://h/{i}" for i in range(120)} - set(done) - {in_flight[0].key}  # type: ignore[union-attr]
    assert queued == expected  # the 4 unacknowledged leases are back, nothing is lost
    for key in done:
        assert resumed.push(key, 1.0) is PushOutcome.ALREADY_FETCHED
    entry = next(e for e in resumed.entries() if e.key == "http://h/0")
    assert entry.payload == ("get", "parse", None, {"depth": 1}, False)


def test_rescore_changes_the_order() -> None:
    frontier = MemoryFrontier(10)
    for i in range(5):
        frontier.push(f"http://h/{i}", i / 10)
    frontier.rescore(lambda url, score, payload: -score)
    assert frontier.pop().url == "http://h/0"  # type: ignore[union-attr]


@pytest.mark.parametrize("rescored", [2, 20])  # a few keys (moved one by one) or most of the queue (rebuilt)
def test_rescored_scores_survive_a_crash_through_the_journal(tmp_path: Path, rescored: int) -> None:
    frontier = MemoryFrontier(10_000, jobdir=tmp_path)
    frontier.open()
    for i in range(30):
        frontier.push(f"http://h/{i}", i / 100)
    raised = [f"http://h/{i}" for i in range(rescored)]
    frontier.rescore(lambda key, score, payload: 1 + score, raised)
    frontier.ack(frontier.pop().key)  # type: ignore[union-attr]  # one fetch done: all before it is durable; then SIGKILL
    resumed = MemoryFrontier(10_000, jobdir=tmp_path)
    resumed.open()
    popped = [entry.key for entry in iter(resumed.pop, None)]  # type: ignore[union-attr]
    assert len(popped) == 29 and popped[: rescored - 1] == raised[::-1][1:]


def test_stale_tuples_are_compacted() -> None:
    frontier = MemoryFrontier(100)
    for round_ in range(20_000):
        frontier.push("http://h/x", float(round_))  # raised every time
    assert frontier._order.size < 10_000  # noqa: SLF001 (the compaction promise)
    assert frontier.pop().score == 19_999.0  # type: ignore[union-attr]


def test_a_forced_push_into_a_full_frontier_is_never_lost() -> None:
    frontier = MemoryFrontier(max_size=2)
    frontier.push("http://h/a", 0.1)
    frontier.push("http://h/b", 0.9)
    assert frontier.pop().url == "http://h/b"  # type: ignore[union-attr]
    frontier.push("http://h/c", 0.8)  # full again: a, c
    # b could not be fetched after all (its lease is given back): it must stay.
    outcome = frontier.push("http://h/b", 0.05, force=True)
    assert outcome is not PushOutcome.REJECTED_FULL
    popped = []
    while (entry := frontier.pop()) is not None:
        popped.append(entry.url)
    assert "http://h/b" in popped


def test_the_eviction_heap_stays_bounded_when_the_frontier_cycles_full() -> None:
    rng = random.Random(3)
    frontier = MemoryFrontier(max_size=1000, overflow="drop")
    for i in range(1001):  # one eviction builds the eviction heap
        frontier.push(f"http://h/{i}", rng.random())
    for i in range(200_000):
        entry = frontier.pop()
        assert entry is not None
        frontier.ack(entry.key)
        frontier.push(f"http://h/n{i}", rng.random())
    assert len(frontier) == 1000
    lowest = frontier._bound._lowest  # noqa: SLF001 (the promise is about this heap)
    assert lowest is not None and len(lowest) <= 3 * 1000 + 4096, len(lowest)


def test_leases_are_acknowledged_or_given_back() -> None:
    frontier = MemoryFrontier(max_size=10)
    for name, score in [("a", 0.9), ("b", 0.5), ("c", 0.1)]:
        frontier.push(f"http://h/{name}", score, payload=name)
    a, b = frontier.pop(), frontier.pop()
    assert a is not None and b is not None and frontier.leased() == 2
    frontier.ack(a.key)
    frontier.release(b.key)
    assert frontier.leased() == 0 and len(frontier) == 2
    again = frontier.pop()
    assert again is not None and (again.key, again.payload) == ("http://h/b", "b")
    assert frontier.push("http://h/a", 1.0) is PushOutcome.ALREADY_FETCHED


def test_a_claim_leases_a_queued_or_new_url_but_never_a_fetched_one() -> None:
    frontier = MemoryFrontier(max_size=10)
    frontier.push("http://h/queued", 0.5)
    assert frontier.claim("http://h/queued", 0.5)
    assert len(frontier) == 0 and frontier.leased() == 1
    assert frontier.pop() is None  # not fetched twice
    assert frontier.claim("http://h/new", 0.1)
    assert not frontier.claim("http://h/new", 0.1)  # leased
    frontier.ack("http://h/new")
    assert not frontier.claim("http://h/new", 0.1)  # fetched


def test_the_url_as_found_is_kept_beside_its_key() -> None:
    frontier = MemoryFrontier(max_size=10)
    frontier.push("http://h/dir/", 0.5, url="http://h/dir/index.html")
    frontier.push("http://h/other", 0.1)
    first, second = frontier.pop(), frontier.pop()
    assert first == ("http://h/dir/", 0.5, None, "http://h/dir/index.html")
    assert second is not None and second.url == second.key == "http://h/other"


def test_payloads_are_freed_with_their_last_url() -> None:
    frontier = MemoryFrontier(max_size=10)
    shared = ("get", "parse", None, {"depth": 1})
    for i in range(5):
        frontier.push(f"http://h/{i}", 0.5, payload=shared)
    tables = frontier._tables  # noqa: SLF001
    assert tables.references == [0, 5]
    for _ in range(5):
        entry = frontier.pop()
        assert entry is not None and entry.payload is shared
        frontier.ack(entry.key)
    assert tables.references == [0, 0] and tables.payloads == [None, None]
    frontier.push("http://h/again", 0.5, payload=("other",))
    assert tables.references == [0, 1]  # the freed slot is reused


def expected_pop(order: list[str], score: dict[str, float], busy: set[str], window: int, wait: float,
                 barred: set[str]) -> str | None:
    """The pages objective's rule, written plainly (Frontier.pop): the best
    URL of a free host among the *window* best; below them, with *wait*, the
    first free host's best when the r URLs above it, on h hosts (busy, or
    barred and passed over), drain past it in (r − window + 1) / h ≥ *wait*
    delays and its score is within reach of the window's — a barred host
    passed over."""
    holders: set[str] = set()
    for index, url in enumerate(order):
        host = host_of(url)
        free = host not in busy and host not in holders
        if free and (not window or index < window):
            return url
        if free and not wait:
            return None
        if free and host not in barred:
            waits = (index - window + 1) / len(holders) < wait
            return None if waits or not within_reach(score[url], score[order[0]], score[order[window - 1]]) else url
        holders.add(host)
    return None


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize(("window", "wait"), [(0, 0.0), (1, 0.0), (3, 0.0), (12, 0.0), (3, 1.0), (4, 2.0), (2, 0.5)])
def test_pops_the_best_url_of_a_slot_that_can_take_one(seed: int, window: int, wait: float) -> None:
    """Against the obvious model: the best URL (ties first in, first out)
    among the slots not busy, else the best URL of all — raises included;
    with a window, only among the *window* best URLs, or below them when the
    busy hosts above would keep it waiting longer than *wait* of their delays
    (never a barred host's), else none."""
    rng = random.Random(seed)
    frontier = MemoryFrontier(10_000)
    model: dict[str, tuple[float, int]] = {}
    fetched: set[str] = set()
    seq = 0
    for _ in range(400):
        if rng.random() < 0.6:
            url = f"http://h{rng.randrange(4)}/p{rng.randrange(50)}"
            score = rng.choice([0.1, 0.2, 0.3, rng.random()])
            frontier.push(url, score)
            if url not in fetched and (url not in model or score > model[url][0]):
                model[url], seq = (score, seq), seq + 1
        else:
            busy = {f"h{i}" for i in range(4) if rng.random() < 0.4}
            barred = {f"h{i}" for i in range(4) if rng.random() < 0.2}
            entry = frontier.pop(PopRule(busy, window, wait=wait, barred=barred))
            order = sorted(model, key=lambda url: (-model[url][0], model[url][1]))
            scores = {url: value for url, (value, _) in model.items()}
            best = expected_pop(order, scores, busy, window, wait, barred) or (
                None if window else next(iter(order), None)
            )
            if best is None:
                assert entry is None
                continue
            assert entry is not None and entry.url == best
            del model[best]
            fetched.add(best)
            frontier.ack(entry.key)
