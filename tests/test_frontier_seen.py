"""The seen set of fetched URLs: exact up to a bound, then a Bloom filter."""

from __future__ import annotations

import random

import pytest

from crawlproject.frontier.base import PushOutcome
from crawlproject.frontier.items import fingerprint
from crawlproject.frontier.memory import MemoryFrontier
from crawlproject.frontier.seen import SeenSet


def fingerprints(count: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return [fingerprint(f"http://h{rng.randrange(10**9)}.test/{i}".encode()) for i in range(count)]


def test_exact_first_then_the_filter_and_no_fetched_url_is_ever_taken_for_new() -> None:
    seen = SeenSet(exact_max=1000, bloom_capacity=50_000, bloom_error=1e-3)
    added = fingerprints(20_000, seed=1)
    seen.update(added)
    assert seen.in_bloom == 19_000  # the first 1,000 exactly
    assert len(seen) == 20_000
    assert all(fp in seen for fp in added)  # no false negative, ever
    assert seen.bloom_bytes() > 0


@pytest.mark.parametrize("error", [0.01, 0.001])
def test_the_measured_false_positive_rate_is_the_one_configured(error: float) -> None:
    seen = SeenSet(exact_max=0, bloom_capacity=50_000, bloom_error=error)
    seen.update(fingerprints(50_000, seed=2))
    fresh = fingerprints(200_000, seed=3)
    rate = sum(fp in seen for fp in fresh) / len(fresh)
    assert error * 0.5 <= rate <= error * 1.5


def test_a_url_queued_again_on_purpose_is_new_until_fetched_again() -> None:
    seen = SeenSet(exact_max=1, bloom_capacity=1000, bloom_error=1e-4)
    first, second = fingerprints(2, seed=4)
    seen.update([first, second])  # first exact, second in the filter
    seen.discard(first)
    seen.discard(second)
    assert first not in seen and second not in seen
    seen.add(second)
    assert second in seen


def crawl_all(frontier: MemoryFrontier, urls: list[str]) -> None:
    for url in urls:
        frontier.push(url, 1.0)
    while (entry := frontier.pop()) is not None:
        frontier.ack(entry.key)


def test_a_memory_frontier_past_its_exact_bound_never_queues_a_fetched_url_again(tmp_path) -> None:
    urls = [f"http://www.site{i % 7}.test/d0/{i}.html" for i in range(3000)]
    frontier = MemoryFrontier(max_size=10_000, jobdir=tmp_path, seen=(100, 10_000, 1e-6))
    frontier.open()
    crawl_all(frontier, urls)
    assert frontier._leases.fetched.in_bloom == 2900
    assert {frontier.push(url, 1.0) for url in urls} == {PushOutcome.ALREADY_FETCHED}
    frontier.close()
    resumed = MemoryFrontier(max_size=10_000, jobdir=tmp_path, seen=(100, 10_000, 1e-6))
    resumed.open()  # the seen set is rebuilt from the journal, the filter included
    assert {resumed.push(url, 1.0) for url in urls} == {PushOutcome.ALREADY_FETCHED}
    assert resumed.pop() is None
    resumed.close()


def test_bad_seen_set_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="bloom_error"):
        SeenSet(exact_max=10, bloom_capacity=10, bloom_error=1.5)
