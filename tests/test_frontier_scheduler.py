"""The scheduler's Scrapy contract, request round trips, leases and JOBDIR state."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from scrapy import Request

from crawlproject.frontier.scheduler import FrontierScheduler
from crawlproject.spiders import BestFirstSpider
from crawlproject.web.meta import KEY, LEASE, SCORE
from tests.conftest import open_scheduler, stop_scheduler

SCORE_KEY = SCORE


def make_scheduler(settings: dict[str, object] | None = None) -> tuple[FrontierScheduler, BestFirstSpider]:
    _, scheduler, spider = open_scheduler(BestFirstSpider, settings, query="course", seeds="http://h/")
    assert isinstance(spider, BestFirstSpider)
    return scheduler, spider


def test_pops_best_score_first_and_rebuilds_the_request() -> None:
    scheduler, spider = make_scheduler()
    for url, score in [("http://a/1", 0.1), ("http://b/2", 0.9), ("http://c/3", 0.5)]:
        scheduler.enqueue_request(
            Request(url, callback=spider.parse, errback=spider.on_error, meta={SCORE_KEY: score, "depth": 2})
        )
    popped = [scheduler.next_request() for _ in range(3)]
    assert [r.url for r in popped] == ["http://b/2", "http://c/3", "http://a/1"]  # type: ignore[union-attr]
    first = popped[0]
    assert first is not None
    assert first.callback == spider.parse and first.errback == spider.on_error
    assert first.meta[SCORE_KEY] == 0.9 and first.meta["depth"] == 2
    assert first.meta[LEASE] == "http://b/2"
    assert scheduler.next_request() is None
    assert not scheduler.has_pending_requests()


def test_duplicates_are_refused_and_counted() -> None:
    scheduler, _ = make_scheduler()
    assert scheduler.enqueue_request(Request("http://a/1", meta={SCORE_KEY: 0.5}))
    assert not scheduler.enqueue_request(Request("http://a/1", meta={SCORE_KEY: 0.1}))
    assert scheduler.enqueue_request(Request("http://a/1", meta={SCORE_KEY: 0.7}))  # raised
    scheduler.next_request()
    assert not scheduler.enqueue_request(Request("http://a/1", meta={SCORE_KEY: 0.9}))
    scheduler.counts.flush()
    stats = scheduler.stats.get_stats()
    assert (stats["frontier/duplicate"], stats["frontier/raised"], stats["frontier/already_fetched"]) == (1, 1, 1)


def test_urls_are_deduplicated_by_key_but_fetched_as_found() -> None:
    scheduler, _ = make_scheduler()
    assert scheduler.enqueue_request(Request("HTTP://A:80/x/index.html#frag"))
    assert not scheduler.enqueue_request(Request("http://a/x/"))
    request = scheduler.next_request()
    assert request is not None and request.url == "http://a:80/x/index.html#frag"
    assert request.meta[LEASE] == "http://a/x/"


def test_a_key_computed_by_the_finder_is_used_only_for_its_url() -> None:
    scheduler, _ = make_scheduler()
    scheduler.enqueue_request(Request("http://a/Page", meta={KEY: ("http://a/Page", "http://a/the-key")}))
    scheduler.enqueue_request(Request("http://a/other", meta={KEY: ("http://a/Page", "http://a/the-key")}))
    keys = {scheduler.next_request().meta[LEASE] for _ in range(2)}  # type: ignore[union-attr]
    assert keys == {"http://a/the-key", "http://a/other"}


def test_plain_spider_priority_is_the_score() -> None:
    scheduler, _ = make_scheduler()
    scheduler.enqueue_request(Request("http://a/low", priority=-5))
    scheduler.enqueue_request(Request("http://a/high", priority=10))
    assert scheduler.next_request().url == "http://a/high"  # type: ignore[union-attr]


def test_non_plain_requests_round_trip_through_to_dict() -> None:
    scheduler, _ = make_scheduler()
    scheduler.enqueue_request(
        Request("http://a/form", method="POST", body=b"q=1", headers={"X-Test": "yes"})
    )
    request = scheduler.next_request()
    assert request is not None
    assert (request.method, request.body, request.headers.get("X-Test")) == ("POST", b"q=1", b"yes")


def test_seeds_with_infinite_score_pop_first() -> None:
    scheduler, _ = make_scheduler()
    scheduler.enqueue_request(Request("http://a/link", meta={SCORE_KEY: 0.99}))
    scheduler.enqueue_request(Request("http://a/seed", meta={SCORE_KEY: math.inf}))
    assert scheduler.next_request().url == "http://a/seed"  # type: ignore[union-attr]


def test_siblings_share_one_payload() -> None:
    scheduler, spider = make_scheduler()
    meta = {"focus_parent": "http://p/", "depth": 1}
    for i in range(50):
        scheduler.enqueue_request(Request(f"http://h/{i}", callback=spider.parse, meta={**meta, SCORE_KEY: i / 50}))
    payloads = {id(entry.payload) for entry in scheduler.frontier.entries()}  # type: ignore[attr-defined]
    assert len(payloads) == 1


def test_a_finished_request_settles_its_lease(tmp_path: Path) -> None:
    settings = {"JOBDIR": str(tmp_path / "job")}
    scheduler, spider = make_scheduler(settings)
    for i in range(3):
        scheduler.enqueue_request(Request(f"http://h/{i}", callback=spider.parse, meta={SCORE_KEY: i}))
    refused = scheduler.next_request()  # e.g. robots.txt refuses it before any download
    assert refused is not None
    scheduler.request_finished(refused)
    in_flight = scheduler.next_request()
    assert in_flight is not None
    stop_scheduler(scheduler)
    assert scheduler.stats.get_value("scheduler/leases_returned") == 1
    resumed, _ = make_scheduler(settings)
    assert len(resumed) == 2  # the in-flight one came back; the finished one did not
    assert not resumed.enqueue_request(Request(refused.url, meta={SCORE_KEY: 9.0}))
    assert resumed.next_request().url == in_flight.url  # type: ignore[union-attr]


def test_a_retry_and_a_same_page_redirect_hold_the_lease_until_the_last_finishes() -> None:
    scheduler, spider = make_scheduler()
    scheduler.enqueue_request(Request("http://h/dir/", callback=spider.parse))
    original = scheduler.next_request()
    assert original is not None
    redirected = original.replace(url="http://h/dir/index.html")
    redirected.meta["redirect_urls"] = [original.url]
    assert scheduler.enqueue_request(redirected)  # same key: the same fetch goes on
    scheduler.request_finished(original)
    assert scheduler.frontier.leased() == 1
    continued = scheduler.next_request()
    assert continued is not None and continued.url == "http://h/dir/index.html"
    scheduler.request_finished(continued)
    assert scheduler.frontier.leased() == 0
    assert not scheduler.enqueue_request(Request("http://h/dir/index.html"))  # fetched, once


def test_a_redirect_to_a_page_already_fetched_is_dropped() -> None:
    scheduler, spider = make_scheduler()
    for url in ("http://h/a", "http://h/b"):
        scheduler.enqueue_request(Request(url, callback=spider.parse, meta={SCORE_KEY: 1.0}))
    first, second = scheduler.next_request(), scheduler.next_request()
    assert first is not None and second is not None
    scheduler.request_finished(first)
    moved = second.replace(url=first.url)
    moved.meta["redirect_urls"] = [second.url]
    assert not scheduler.enqueue_request(moved)
    scheduler.counts.flush()
    assert scheduler.stats.get_value("scheduler/redirect_already_seen") == 1


def test_a_redirect_to_a_queued_page_takes_it_out_of_the_queue() -> None:
    scheduler, spider = make_scheduler()
    scheduler.enqueue_request(Request("http://h/a", callback=spider.parse, meta={SCORE_KEY: 1.0}))
    scheduler.enqueue_request(Request("http://h/b", callback=spider.parse, meta={SCORE_KEY: 0.1}))
    first = scheduler.next_request()
    assert first is not None
    moved = first.replace(url="http://h/b")
    moved.meta["redirect_urls"] = [first.url]
    assert scheduler.enqueue_request(moved)
    assert scheduler.next_request().url == "http://h/b"  # type: ignore[union-attr]
    assert scheduler.next_request() is None  # not fetched twice


def test_links_from_a_page_carrying_its_meta_are_new_urls_not_continuations() -> None:
    scheduler, spider = make_scheduler()
    scheduler.enqueue_request(Request("http://h/page", callback=spider.parse))
    scheduler.enqueue_request(Request("http://h/better", callback=spider.parse, meta={SCORE_KEY: 0.5}))
    page = scheduler.next_request()
    assert page is not None and page.url == "http://h/better"
    from scrapy.http import HtmlResponse

    scheduler._response_received(HtmlResponse(page.url, request=page), page, spider)  # noqa: SLF001
    link = Request("http://h/child", meta=dict(page.meta, **{SCORE_KEY: -1.0}))
    assert scheduler.enqueue_request(link)
    assert scheduler.next_request().url == "http://h/page"  # type: ignore[union-attr]  # best first still


def test_jobdir_state_survives_close_and_reopen(tmp_path: Path) -> None:
    settings = {"JOBDIR": str(tmp_path / "job")}
    scheduler, spider = make_scheduler(settings)
    for i in range(20):
        scheduler.enqueue_request(Request(f"http://h{i % 3}/{i}", callback=spider.parse, meta={SCORE_KEY: i / 20}))
    fetched = []
    for _ in range(5):
        request = scheduler.next_request()
        assert request is not None
        scheduler.request_finished(request)
        fetched.append(request.url)
    in_flight = scheduler.next_request()  # popped, never downloaded
    assert in_flight is not None
    stop_scheduler(scheduler)

    resumed, resumed_spider = make_scheduler(settings)
    assert len(resumed) == 15  # 14 queued + the in-flight one given back
    again = resumed.next_request()
    assert again is not None and again.url == in_flight.url and again.callback == resumed_spider.parse
    for url in fetched:
        assert not resumed.enqueue_request(Request(url, meta={SCORE_KEY: 1.0}))


def test_best_n_first_releases_batches_and_waits_for_them() -> None:
    scheduler, _ = make_scheduler({"FOCUS_BATCH_SIZE": 4})
    for i in range(10):
        scheduler.enqueue_request(Request(f"http://h{i}/", meta={SCORE_KEY: i / 10}))
    batch = [scheduler.next_request() for _ in range(4)]
    assert [r.url for r in batch] == ["http://h9/", "http://h8/", "http://h7/", "http://h6/"]  # type: ignore[union-attr]
    assert scheduler.next_request() is None  # the batch is not processed yet
    assert scheduler.has_pending_requests()
    # a better URL found while the batch is out waits for the next batch
    scheduler.enqueue_request(Request("http://best/", meta={SCORE_KEY: 5.0}))
    for request in batch[:3]:
        scheduler.request_finished(request)  # type: ignore[arg-type]
    assert scheduler.next_request() is None
    scheduler.request_finished(batch[3])  # type: ignore[arg-type]
    assert scheduler.next_request().url == "http://best/"  # type: ignore[union-attr]
    assert scheduler.batches is not None and scheduler.batches.batches == 2


def test_best_n_first_keeps_retries_in_the_batch_and_lets_redirects_go() -> None:
    scheduler, _ = make_scheduler({"FOCUS_BATCH_SIZE": 2})
    for i in range(4):
        scheduler.enqueue_request(Request(f"http://h{i}/", meta={SCORE_KEY: i / 10}))
    first, second = scheduler.next_request(), scheduler.next_request()
    assert first is not None and second is not None
    # a retry of the first page is served before the batch can end
    retry = first.replace(dont_filter=True)
    assert scheduler.enqueue_request(retry)
    scheduler.request_finished(first)
    assert scheduler.next_request() is retry
    # the second page redirects elsewhere: the target is fetched, the page is done
    moved = second.replace(url="http://elsewhere/")
    moved.meta["redirect_urls"] = [second.url]
    assert scheduler.enqueue_request(moved)
    scheduler.request_finished(second)
    assert scheduler.next_request() is moved
    scheduler.request_finished(moved)
    assert scheduler.next_request() is None  # the retry is still out
    scheduler.request_finished(retry)
    assert scheduler.next_request() is not None  # the next batch


def test_a_full_fifo_frontier_still_takes_retries_and_redirects() -> None:
    scheduler, spider = make_scheduler({"FOCUS_FRONTIER_ORDER": "fifo", "FOCUS_FRONTIER_MAX": 2})
    for name in "ab":
        scheduler.enqueue_request(Request(f"http://h/{name}", callback=spider.parse))
    first = scheduler.next_request()
    assert first is not None and first.url == "http://h/a"
    assert scheduler.enqueue_request(Request("http://h/c", callback=spider.parse))  # full again
    retry = first.replace(dont_filter=True)
    retry.meta["retry_times"] = 1
    assert scheduler.enqueue_request(retry)
    second = scheduler.next_request()
    assert second is not None and second.url == "http://h/a"
    redirected = second.replace(url="http://h/a-moved")
    redirected.meta["redirect_urls"] = ["http://h/a"]
    assert scheduler.enqueue_request(redirected)
    assert scheduler.next_request().url == "http://h/a-moved"  # type: ignore[union-attr]


def test_callbacks_that_are_not_spider_methods_are_scheduled() -> None:
    from functools import partial

    from scrapy.http.request import NO_CALLBACK

    scheduler, _ = make_scheduler()

    def handle(response: object, extra: int = 0) -> None:
        return None

    requests = [
        Request("http://h/lambda", callback=lambda response: None, meta={SCORE_KEY: 0.9}),
        Request("http://h/partial", callback=partial(handle, extra=1), meta={SCORE_KEY: 0.8}),
        Request("http://h/none", callback=NO_CALLBACK, meta={SCORE_KEY: 0.7}),
    ]
    for request in requests:
        assert scheduler.enqueue_request(request)
    popped = [scheduler.next_request() for _ in requests]
    assert [r.callback for r in popped] == [r.callback for r in requests]  # type: ignore[union-attr]


def test_unpersistable_callbacks_stay_in_memory_with_one_warning(tmp_path: Path, caplog: object) -> None:
    import logging

    scheduler, spider = make_scheduler({"JOBDIR": str(tmp_path / "job")})
    with caplog.at_level(logging.WARNING):  # type: ignore[attr-defined]
        for i in range(3):
            assert scheduler.enqueue_request(Request(f"http://h/{i}", callback=lambda r: None))
        scheduler.enqueue_request(Request("http://h/kept", callback=spider.parse))
        stop_scheduler(scheduler)
    warnings = [r for r in caplog.records if "Unable to serialize request" in r.getMessage()]  # type: ignore[attr-defined]
    assert len(warnings) == 1
    assert scheduler.stats.get_value("scheduler/unserializable") == 3
    resumed, _ = make_scheduler({"JOBDIR": str(tmp_path / "job")})
    assert len(resumed) == 1 and resumed.next_request().url == "http://h/kept"  # type: ignore[union-attr]


class RecordingFrontier:
    """A frontier backend from outside the project, chosen by a setting."""

    @classmethod
    def from_crawler(cls, crawler: object) -> object:
        from crawlproject.frontier.memory import MemoryFrontier

        frontier = MemoryFrontier.from_crawler(crawler)  # type: ignore[arg-type]
        frontier.chosen_by_setting = True  # type: ignore[attr-defined]
        return frontier


def test_the_frontier_backend_is_a_setting() -> None:
    scheduler, _ = make_scheduler({"FOCUS_FRONTIER_BACKEND": f"{__name__}.RecordingFrontier"})
    assert getattr(scheduler.frontier, "chosen_by_setting", False)


def _busy_by_reading_every_slot(slots: dict[str, Any], handed_out: dict[str, int], now: float) -> set[str]:
    """The rule of scrapy_private.SlotWatch, read over every slot of the downloader."""
    busy = set()
    for key, slot in slots.items():
        outstanding = len(slot.active) + handed_out.get(key, 0)
        if outstanding >= slot.concurrency or (slot.delay and (outstanding or now - slot.lastseen < slot.delay)):
            busy.add(key)
    return busy


def test_the_slot_watch_reads_only_slots_a_request_reached_and_agrees_with_reading_all() -> None:
    """The downloader keeps a slot per host met in the last minute; reading
    each for every request handed out made the cost grow with the hosts."""
    import random
    import time
    from types import SimpleNamespace

    from scrapy.core.downloader import Slot
    from scrapy.settings import Settings

    from crawlproject.scrapy_private import SlotWatch

    rng = random.Random(7)
    slots: dict[str, Any] = {}
    crawler = SimpleNamespace(engine=SimpleNamespace(downloader=SimpleNamespace(slots=slots)), settings=Settings())
    watch = SlotWatch(crawler)  # type: ignore[arg-type]
    for step in range(3000):
        key = f"h{rng.randrange(400)}"
        slot = slots.get(key)
        if slot is None:  # the downloader makes a slot for the first request of a host
            slot = slots[key] = Slot(concurrency=rng.choice([1, 2]), delay=rng.choice([0.0, 0.0, 60.0]), jitter=0.0)
        move = rng.random()
        if move < 0.45:
            request = Request(f"http://{key}/{step}", meta={"download_slot": key})
            slot.active.add(request)
            slot.lastseen = time.monotonic() - rng.choice([0.0, 120.0])  # a download starts (or started long ago)
            watch.reached(request)
        elif move < 0.9 and slot.active:
            slot.active.pop()  # a download ends
        elif slot.active:  # AutoThrottle sets the delay of a slot as its response arrives
            slot.delay = rng.choice([0.0, 60.0])
        handed_out = {f"h{rng.randrange(400)}": 1 for _ in range(rng.randrange(3))}
        assert watch.busy(handed_out) == _busy_by_reading_every_slot(slots, handed_out, time.monotonic()), step
    assert len(watch.watched) < len(slots)
    for slot in slots.values():  # every download ends, every delay is over
        slot.active.clear()
        slot.lastseen -= 120.0
    assert watch.busy({}) == set()
    assert watch.watched == set()  # idle slots are read no more
