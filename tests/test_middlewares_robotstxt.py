"""robots.txt as RFC 9309 says, built on Scrapy's RobotsTxtMiddleware."""

from __future__ import annotations

from pathlib import Path

from crawlproject.middlewares.robotstxt import RobotsPolicies, robots_key
from crawlproject.replay.process import ReplayProcess
from tests.conftest import gaps_as_sent, html, run_crawl, served, write_warc

HTML = [("Content-Type", "text/html")]


def _pages(tmp_path: Path, count: int = 8) -> Path:
    links = "".join(f'<a href="/p{i}">p{i}</a> ' for i in range(count))
    return write_warc(
        tmp_path / "site.warc.gz",
        [
            ("http://r.test/", 200, HTML, html(links + '<a href="/private/secret">s</a>')),
            ("http://r.test/private/secret", 200, HTML, html("secret")),
            *[(f"http://r.test/p{i}", 200, HTML, html(f"page {i}")) for i in range(count)],
        ],
    )


def _crawl(tmp_path: Path, robots_text: str, **settings: object) -> tuple[list[tuple[float, str, str]], str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    robots = tmp_path / "robots.txt"
    robots.write_text(robots_text)
    log = tmp_path / "access.log"
    with ReplayProcess(str(_pages(tmp_path)), robots=str(robots), access_log=str(log)) as replay:
        result = run_crawl("breadthfirst", tmp_path / "out", ["http://r.test/"], replay.proxy_url,
                           settings=settings)
    assert result.returncode == 0, result.log[-3000:]
    return served(log), result.log


def test_a_robots_txt_is_read_to_500_kib(tmp_path: Path) -> None:
    padding = "".join(f"# comment line {i:06d} padding padding padding\n" for i in range(4000))
    assert 150_000 < len(padding) < 500 * 1024
    requests, _ = _crawl(tmp_path, "User-agent: *\n" + padding + "Disallow: /private/\n")
    urls = [url for _, url, _ in requests]
    assert "http://r.test/private/secret" not in urls
    assert "http://r.test/p7" in urls


def test_robotstxt_obey_is_the_one_switch_and_robots_is_fetched_once(tmp_path: Path) -> None:
    requests, _ = _crawl(tmp_path / "on", "User-agent: *\nDisallow: /private/\n", ROBOTSTXT_OBEY=True)
    urls = [url for _, url, _ in requests]
    assert urls.count("http://r.test/robots.txt") == 1
    assert "http://r.test/private/secret" not in urls
    requests, _ = _crawl(tmp_path / "off", "User-agent: *\nDisallow: /private/\n", ROBOTSTXT_OBEY=False)
    urls = [url for _, url, _ in requests]
    assert "http://r.test/robots.txt" not in urls
    assert "http://r.test/private/secret" in urls


def test_crawl_delay_is_not_undercut_by_autothrottle(tmp_path: Path) -> None:
    requests, log = _crawl(
        tmp_path, "User-agent: *\nCrawl-delay: 0.3\nDisallow:\n",
        AUTOTHROTTLE_ENABLED=True, AUTOTHROTTLE_START_DELAY=0.05, AUTOTHROTTLE_MAX_DELAY=1,
        CONCURRENT_REQUESTS_PER_DOMAIN=8, LOG_LEVEL="DEBUG",
    )
    gaps = gaps_as_sent(log, requests)
    assert len(gaps) >= 7
    assert min(gaps) >= 0.3 - 0.01, gaps


def test_request_rate_is_honoured(tmp_path: Path) -> None:
    requests, log = _crawl(tmp_path, "User-agent: *\nRequest-rate: 2/1\nDisallow:\n",
                           DOWNLOAD_DELAY=0.1, DOWNLOAD_DELAY_JITTER=0.5, LOG_LEVEL="DEBUG")
    gaps = gaps_as_sent(log, requests)
    assert len(gaps) >= 7
    assert min(gaps) >= 0.5 - 0.01, gaps


def test_policies_are_keyed_by_scheme_host_and_port() -> None:
    assert robots_key("http://Example.COM:80/a") == robots_key("http://example.com/b")
    assert robots_key("http://example.com/") != robots_key("https://example.com/")
    assert robots_key("http://example.com:8080/") != robots_key("http://example.com/")
    assert robots_key("https://example.com:443/x") == "https://example.com:443"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_unreachable_robots_disallows_for_a_while_then_is_retried() -> None:
    clock = Clock()
    policies = RobotsPolicies(expiry=86400, retry_after=300, clock=clock)
    key = "http://h.test:80"
    assert policies.lookup(key) is None  # never fetched: fetch it
    policies.store_unreachable(key)
    policy = policies.lookup(key)
    assert policy is not None and not policy.allows("http://h.test/page", "bot")
    clock.now += 299
    assert policies.lookup(key) is policy
    clock.now += 2
    assert policies.lookup(key) is None  # retried after minutes, not after a day


def test_a_cached_copy_outlives_a_server_error() -> None:
    clock = Clock()
    policies = RobotsPolicies(expiry=100, retry_after=10, clock=clock)
    key = "http://h.test:80"
    policies.store_text(key, b"User-agent: *\nDisallow: /no/\n")
    good = policies.lookup(key)
    assert good is not None and good.allows("http://h.test/yes", "bot")
    clock.now += 101
    assert policies.lookup(key) is None  # expired: fetch again
    policies.store_unreachable(key)  # the server fails now
    stale = policies.lookup(key)
    assert stale is not None and stale.allows("http://h.test/yes", "bot")
    assert not stale.allows("http://h.test/no/x", "bot")
    clock.now += 11
    assert policies.lookup(key) is None


def test_4xx_allows_everything() -> None:
    policies = RobotsPolicies(expiry=100, retry_after=10, clock=Clock())
    policies.store_status("http://h.test:80", 404)
    policy = policies.lookup("http://h.test:80")
    assert policy is not None and policy.allows("http://h.test/anything", "bot")
