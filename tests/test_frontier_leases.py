"""Leases settle for every spider and every way a request can leave Scrapy:
a crawl that finished has nothing to give back, so the same
JOBDIR resumed fetches nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from crawlproject.replay.process import ReplayProcess
from tests.conftest import FAST_REPLAY_SETTINGS, ROOT, html, served, write_warc

HTML = [("Content-Type", "text/html")]


def _site(tmp_path: Path) -> Path:
    links = "".join(
        f'<a href="{href}">{href}</a> '
        for href in ["/private/x", "http://other.test/", "/missing", "/big", "/loop1", "/ok", "/moved"]
    )
    return write_warc(
        tmp_path / "lease.warc.gz",
        [
            ("http://lease.test/", 200, HTML, html(links)),
            ("http://lease.test/private/x", 200, HTML, html("robots says no")),
            ("http://other.test/", 200, HTML, html("offsite")),
            ("http://lease.test/big", 200, HTML, html("x" * 200_000)),
            ("http://lease.test/loop1", 302, [("Location", "http://lease.test/loop2")], b""),
            ("http://lease.test/loop2", 302, [("Location", "http://lease.test/loop1")], b""),
            ("http://lease.test/ok", 200, HTML, html("fine")),
            ("http://lease.test/moved", 301, [("Location", "http://lease.test/ok2")], b""),
            ("http://lease.test/ok2", 200, HTML, html("moved here")),
        ],
    )


def _runspider(tmp_path: Path, proxy: str, jobdir: Path, name: str, **settings: object) -> str:
    merged = {
        **FAST_REPLAY_SETTINGS,
        "FOCUS_REPLAY_PROXY": proxy,
        "JOBDIR": str(jobdir),
        "DOWNLOAD_MAXSIZE": 50_000,
        "REDIRECT_MAX_TIMES": 3,
        "RETRY_TIMES": 0,
        "FOCUS_OUTPUT_DIR": str(tmp_path / name),
        **settings,
    }
    command = [sys.executable, "-m", "scrapy", "runspider", str(ROOT / "tests/spiders/plain.py")]
    for key, value in merged.items():
        command += ["-s", f"{key}={value}"]
    completed = subprocess.run(  # noqa: S603
        command, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stderr


def test_every_lease_settles_for_a_plain_spider(tmp_path: Path) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_text("User-agent: *\nDisallow: /private/\n")
    log = tmp_path / "access.log"
    cache = {"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path / "cache")}
    with ReplayProcess(str(_site(tmp_path)), robots=str(robots), access_log=str(log)) as replay:
        first = _runspider(tmp_path, replay.proxy_url, tmp_path / "job", "first", **cache)
        assert "Error processing" not in first and "spider_exceptions" not in first
        fetched = {url for _, url, _ in served(log)}
        assert {"http://lease.test/ok", "http://lease.test/ok2", "http://lease.test/big"} <= fetched
        assert "http://lease.test/private/x" not in fetched
        # A finished crawl has nothing in flight: nothing is given back, and
        # resuming it finds nothing queued (start_urls are re-requested, as
        # Scrapy's are: they are dont_filter requests).
        assert "scheduler/leases_returned" not in first
        again = _runspider(tmp_path, replay.proxy_url, tmp_path / "job", "again", **cache)
        assert "Resuming crawl from" in again and ": 0 URLs queued" in again
        # A new crawl served from the HTTP cache: its leases settle too.
        cached = _runspider(tmp_path, replay.proxy_url, tmp_path / "job2", "cached", **cache)
        assert "Error processing" not in cached and "httpcache/hit" in cached
        assert "scheduler/leases_returned" not in cached
        resumed = _runspider(tmp_path, replay.proxy_url, tmp_path / "job2", "cached-again", **cache)
    assert "Resuming crawl from" in resumed and ": 0 URLs queued" in resumed
