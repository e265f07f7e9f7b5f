"""The scheduler keeps Scrapy's contract for a spider that asks for no focus:
real ``scrapy runspider`` crawls of a plain spider in the
project (the add-on on) against a real replay, each fetch read from the
replay's access log. Scrapy's own scheduler tests run against it too
(scripts.scrapy_contract, in ``make test``)."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crawlproject.replay.process import ReplayProcess
from tests.conftest import FAST_REPLAY_SETTINGS, ROOT, html, log_stat, write_warc
from tests.spiders.contract import SITE, SLOT_HOSTS

HTML = [("Content-Type", "text/html")]
_RUNS = itertools.count()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("contract")
    pages = [(f"{SITE}/x", 200, HTML, html("x")), (f"{SITE}/form", 200, HTML, html("form")),
             (f"{SITE}/hub", 200, HTML, html("hub"))]
    pages += [(f"{SITE}/page?a={i}", 200, HTML, html(f"page {i}")) for i in range(3)]
    pages += [(f"http://{host}/p{i}", 200, HTML, html(f"{host} {i}")) for host in SLOT_HOSTS for i in range(4)]
    pages += [(f"{SITE}/many/{i}", 200, HTML, html(f"many {i}")) for i in range(1500)]
    return write_warc(folder / "contract.warc.gz", pages)


def crawl(
    site: Path, tmp_path: Path, case: str, count: int = 3, latency_ms: float = 0, **settings: Any
) -> tuple[list[tuple[str, str]], str]:
    """Run the contract spider; return ``(method, url)`` of every page the
    replay answered, in order of arrival (robots.txt left out), and the log."""
    access_log = tmp_path / f"{case}-{next(_RUNS)}.access.log"
    with ReplayProcess(str(site), access_log=str(access_log), latency_ms=latency_ms) as replay:
        merged = {**FAST_REPLAY_SETTINGS, "FOCUS_REPLAY_PROXY": replay.proxy_url, "RETRY_TIMES": 0, **settings}
        command = [sys.executable, "-m", "scrapy", "runspider", str(ROOT / "tests/spiders/contract.py"),
                   "-a", f"case={case}", "-a", f"count={count}"]
        for name, value in merged.items():
            command += ["-s", f"{name}={value}"]
        completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240)  # noqa: S603
    assert completed.returncode == 0, completed.stderr[-3000:]
    rows = [line.split("\t") for line in access_log.read_text().splitlines()]
    fetched = [(method, url) for _, method, url, _ in sorted(rows, key=lambda row: float(row[0]))]
    return [row for row in fetched if not row[1].endswith("/robots.txt")], completed.stderr


def test_dont_filter_requests_are_all_fetched(site: Path, tmp_path: Path) -> None:
    fetched, _ = crawl(site, tmp_path, "dont_filter")
    assert fetched == [("GET", f"{SITE}/x")] * 3


def test_posts_with_different_bodies_are_different_requests(site: Path, tmp_path: Path) -> None:
    fetched, _ = crawl(site, tmp_path, "post")
    assert fetched == [("POST", f"{SITE}/form")] * 3


def test_a_repeat_is_filtered_and_counted_by_default(site: Path, tmp_path: Path) -> None:
    fetched, log = crawl(site, tmp_path, "repeat")
    assert fetched == [("GET", f"{SITE}/x")]
    assert log_stat(log, "dupefilter/filtered") == 2


def test_the_project_s_dupefilter_decides(site: Path, tmp_path: Path) -> None:
    fetched, _ = crawl(site, tmp_path, "repeat", DUPEFILTER_CLASS="scrapy.dupefilters.BaseDupeFilter")
    assert fetched == [("GET", f"{SITE}/x")] * 3


def test_the_project_s_fingerprinter_decides(site: Path, tmp_path: Path) -> None:
    fetched, _ = crawl(site, tmp_path, "query")
    assert len(fetched) == 3  # the add-on's fingerprinter: three URLs, three requests
    fetched, log = crawl(
        site, tmp_path, "query", REQUEST_FINGERPRINTER_CLASS="tests.spiders.contract.QueryBlindFingerprinter"
    )
    assert fetched == [("GET", f"{SITE}/page?a=0")]
    assert log_stat(log, "dupefilter/filtered") == 2


def test_requests_of_equal_priority_interleave_over_download_slots(site: Path, tmp_path: Path) -> None:
    """Host a's requests were queued first; with one request per host at a
    time the scheduler hands out b's and c's while a's slot is busy."""
    fetched, _ = crawl(
        site, tmp_path, "slots", count=4, latency_ms=100, CONCURRENT_REQUESTS=3, CONCURRENT_REQUESTS_PER_DOMAIN=1
    )
    assert fetched[0] == ("GET", f"{SITE}/hub")
    hosts = [url.split("/")[2] for _, url in fetched[1:]]
    assert len(hosts) == 12
    assert sorted(hosts[:3]) == list(SLOT_HOSTS), hosts
    # which slot frees first is the replay's timing; every host keeps its turn coming
    for start in range(12 - 5):
        assert set(hosts[start : start + 6]) == set(SLOT_HOSTS), hosts


def test_requests_past_the_bound_spill_to_disk_and_all_come_out(site: Path, tmp_path: Path) -> None:
    fetched, log = crawl(site, tmp_path, "many", count=1500, FOCUS_FRONTIER_MAX=1000)
    assert sorted(url for _, url in fetched[1:]) == sorted(f"{SITE}/many/{i}" for i in range(1500))
    assert (log_stat(log, "frontier/spilled") or 0) > 0  # the bound was passed: a page's 1,500 links at once
    assert log_stat(log, "frontier/dropped") is None


def test_dropping_past_the_bound_warns_once_and_counts_every_drop(site: Path, tmp_path: Path) -> None:
    """(Exactly 500 of 1,500 pushed at once: test_frontier_memory; here a few
    are fetched while the page's links are still being queued.)"""
    fetched, log = crawl(site, tmp_path, "many", count=1500, FOCUS_FRONTIER_MAX=1000, FOCUS_FRONTIER_OVERFLOW="drop")
    dropped = log_stat(log, "frontier/dropped") or 0
    assert dropped > 0 and len(fetched[1:]) + dropped == 1500
    assert log.count("FOCUS_FRONTIER_OVERFLOW=drop") == 1


def test_a_page_budget_is_never_overshot(site: Path, tmp_path: Path) -> None:
    """16 requests in flight, 50 pages allowed: the scheduler stops handing
    out requests once pages fetched + in flight reach the budget."""
    fetched, log = crawl(
        site, tmp_path, "many", count=300, latency_ms=50,
        CLOSESPIDER_PAGECOUNT=50, CONCURRENT_REQUESTS=16, CONCURRENT_REQUESTS_PER_DOMAIN=16,
    )
    assert 45 <= len(fetched) <= 50
    assert "closespider_pagecount" in log
