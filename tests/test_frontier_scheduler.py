"""The scheduler's Scrapy contract, request round trips and JOBDIR state."""

from __future__ import annotations

import math
from pathlib import Path

from scrapy import Request, signals

from crawlproject.frontier.scheduler import SCORE_KEY, FrontierScheduler
from crawlproject.spiders.bestfirst import BestFirstSpider
from tests.conftest import open_scheduler


def make_scheduler(settings: dict[str, object] | None = None) -> tuple[FrontierScheduler, BestFirstSpider]:
    _, scheduler, spider = open_scheduler(BestFirstSpider, settings, query="course", seeds="http://h/")
    assert isinstance(spider, BestFirstSpider)
    return scheduler, spider


def test_pops_best_score_first_and_rebuilds_the_request() -> None:
    scheduler, spider = make_scheduler()
    for url, score in [("http://a/1", 0.1), ("http://b/2", 0.9), ("http://c/3", 0.5)]:
        scheduler.enqueue_request(
            Request(url, callback=spider.parse, errback=spider.on_error, meta={SCORE_KEY: score})
        )
    popped = [scheduler.next_request() for _ in range(3)]
    assert [r.url for r in popped] == ["http://b/2", "http://c/3", "http://a/1"]  # type: ignore[union-attr]
    first = popped[0]
    assert first is not None
    assert first.callback == spider.parse and first.errback == spider.on_error
    assert first.meta[SCORE_KEY] == 0.9
    assert scheduler.next_request() is None
    assert not scheduler.has_pending_requests()


def test_duplicates_are_refused_and_counted() -> None:
    scheduler, _ = make_scheduler()
    assert scheduler.enqueue_request(Request("http://a/1", meta={SCORE_KEY: 0.5}))
    assert not scheduler.enqueue_request(Request("http://a/1", meta={SCORE_KEY: 0.1}))
    assert scheduler.enqueue_request(Request("http://a/1", meta={SCORE_KEY: 0.7}))  # raised
    scheduler.next_request()
    assert not scheduler.enqueue_request(Request("http://a/1", meta={SCORE_KEY: 0.9}))
    stats = scheduler.stats.get_stats()
    assert (stats["frontier/duplicate"], stats["frontier/raised"], stats["frontier/already_fetched"]) == (1, 1, 1)


def test_non_canonical_urls_from_elsewhere_are_canonicalized() -> None:
    scheduler, _ = make_scheduler()
    scheduler.enqueue_request(Request("HTTP://A:80/x/index.html#frag"))
    assert not scheduler.enqueue_request(Request("http://a/x/"))


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


def test_a_page_processed_without_a_download_gives_up_its_lease(tmp_path: Path) -> None:
    from crawlproject import signals as focus_signals
    from crawlproject.frontier.scheduler import POPPED_KEY

    settings = {"JOBDIR": str(tmp_path / "job")}
    scheduler, spider = make_scheduler(settings)
    for i in range(3):
        scheduler.enqueue_request(Request(f"http://h/{i}", callback=spider.parse, meta={SCORE_KEY: i}))
    refused = scheduler.next_request()  # e.g. robots.txt refuses it before any download
    assert refused is not None
    scheduler.crawler.signals.send_catch_log(focus_signals.page_processed, url=refused.meta[POPPED_KEY])
    scheduler.close("shutdown")
    resumed, _ = make_scheduler(settings)
    assert len(resumed) == 2  # not given back: it was dealt with
    assert not resumed.enqueue_request(Request(refused.url, meta={SCORE_KEY: 9.0}))


def test_jobdir_state_survives_close_and_reopen(tmp_path: Path) -> None:
    settings = {"JOBDIR": str(tmp_path / "job")}
    scheduler, spider = make_scheduler(settings)
    for i in range(20):
        scheduler.enqueue_request(Request(f"http://h{i % 3}/{i}", callback=spider.parse, meta={SCORE_KEY: i / 20}))
    fetched = []
    for _ in range(5):
        request = scheduler.next_request()
        assert request is not None
        scheduler.crawler.signals.send_catch_log(
            signals.request_left_downloader, request=request, spider=spider
        )
        fetched.append(request.url)
    in_flight = scheduler.next_request()  # popped, never downloaded
    assert in_flight is not None
    scheduler.close("shutdown")

    resumed, _ = make_scheduler(settings)
    assert len(resumed) == 15  # 14 queued + the in-flight one given back
    assert resumed.next_request().url == in_flight.url  # type: ignore[union-attr]
    for url in fetched:
        assert not resumed.enqueue_request(Request(url, meta={SCORE_KEY: 1.0}))


def test_best_n_first_releases_batches_and_waits_for_them(tmp_path: Path) -> None:
    from crawlproject import signals as focus_signals
    from crawlproject.frontier.scheduler import POPPED_KEY

    scheduler, _ = make_scheduler({"FOCUS_BATCH_SIZE": 4})
    busy_engine(scheduler)
    for i in range(10):
        scheduler.enqueue_request(Request(f"http://h{i}/", meta={SCORE_KEY: i / 10}))
    batch = [scheduler.next_request() for _ in range(4)]
    assert [r.url for r in batch] == ["http://h9/", "http://h8/", "http://h7/", "http://h6/"]  # type: ignore[union-attr]
    assert scheduler.next_request() is None  # the batch is not processed yet
    assert scheduler.has_pending_requests()
    # a better URL found while the batch is out waits for the next batch
    scheduler.enqueue_request(Request("http://best/", meta={SCORE_KEY: 5.0}))
    for request in batch[:3]:
        scheduler.crawler.signals.send_catch_log(focus_signals.page_processed, url=request.meta[POPPED_KEY])  # type: ignore[union-attr]
    assert scheduler.next_request() is None
    scheduler.crawler.signals.send_catch_log(focus_signals.page_processed, url=batch[3].meta[POPPED_KEY])  # type: ignore[union-attr]
    assert scheduler.next_request().url == "http://best/"  # type: ignore[union-attr]
    assert scheduler.stats.get_value("frontier/batches") == 2


def busy_engine(scheduler: FrontierScheduler, busy: bool = True) -> None:
    """A stand-in for the engine's two idleness facts (downloads, parsing)."""
    from types import SimpleNamespace

    scheduler.crawler.engine = SimpleNamespace(  # type: ignore[assignment]
        downloader=SimpleNamespace(active={"a request"} if busy else set()),
        scraper=SimpleNamespace(slot=None),
    )


def test_best_n_first_keeps_retries_in_the_batch_and_lets_redirects_go() -> None:
    from crawlproject.frontier.scheduler import POPPED_KEY

    scheduler, _ = make_scheduler({"FOCUS_BATCH_SIZE": 2})
    busy_engine(scheduler)
    for i in range(4):
        scheduler.enqueue_request(Request(f"http://h{i}/", meta={SCORE_KEY: i / 10}))
    first, second = scheduler.next_request(), scheduler.next_request()
    assert first is not None and second is not None
    # a retry of the first page is served before the batch can end
    assert scheduler.enqueue_request(first.replace(dont_filter=True))
    assert scheduler.next_request().url == first.url  # type: ignore[union-attr]
    # the second page redirects: the target is queued, the page counts as done
    assert scheduler.enqueue_request(second.replace(url="http://elsewhere/"))
    assert scheduler._batch_outstanding == {first.meta[POPPED_KEY]}  # noqa: SLF001


def test_best_n_first_does_not_wait_forever_for_lost_pages() -> None:
    scheduler, _ = make_scheduler({"FOCUS_BATCH_SIZE": 2})
    busy_engine(scheduler, busy=False)
    for i in range(4):
        scheduler.enqueue_request(Request(f"http://h{i}/", meta={SCORE_KEY: i / 10}))
    scheduler.next_request()
    scheduler.next_request()
    # never reported back, and nothing is in flight: the next batch starts
    assert scheduler.next_request() is not None
    assert scheduler.stats.get_value("frontier/batch_pages_lost") == 2
