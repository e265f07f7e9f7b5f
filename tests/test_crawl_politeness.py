"""A focused crawl under politeness: one request per host, a delay.

Host A holds the good links; host B, linked once from A's home page, offers
only poor ones. A crawl whose budget is pages (the focused spiders' default)
spends it on A, one page per delay, while B's slot stays free; a crawl whose
budget is time fills B's slot too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import redis

from bench.servers import RedisServer
from crawlproject.distributed.frontier import RedisFrontier
from crawlproject.replay.process import ReplayProcess
from tests.conftest import ROOT, html, log_stat, run_crawl, served, write_warc

QUERY = "gnuplot terminal driver output device"
GOOD = 60
BUDGET = 30  # past the first requests handed out while A's links stream in (Scrapy hands them as queued)
DELAY = 0.2
POLITE = {
    "DOWNLOAD_DELAY": DELAY, "CONCURRENT_REQUESTS_PER_DOMAIN": 1, "RANDOMIZE_DOWNLOAD_DELAY": False,
    "ROBOTSTXT_OBEY": False, "FOCUS_STORE_PAGES": False,
}


def two_hosts(tmp_path: Path) -> Path:
    html_type = [("Content-Type", "text/html")]
    good_links = "".join(f'<a href="/terminal-{i}.html">gnuplot terminal driver {i}</a> ' for i in range(GOOD))
    pages = [
        ("http://a.test/", 200, html_type, html(
            f"<p>gnuplot terminal drivers: each output device has a terminal.</p>{good_links}"
            '<a href="http://b.test/">other things</a>', "gnuplot terminals")),
        *((f"http://a.test/terminal-{i}.html", 200, html_type, html(
            f"<p>The gnuplot terminal driver {i} writes plots to an output device.</p>", f"terminal {i}"))
          for i in range(GOOD)),
        ("http://b.test/", 200, html_type, html(
            "<p>recipes, gardening, a terminal at the airport</p>"
            + "".join(f'<a href="/recipe-{i}.html">recipe {i}</a> ' for i in range(GOOD)), "recipes")),
        *((f"http://b.test/recipe-{i}.html", 200, html_type, html(f"<p>bake bread number {i}</p>", "bread"))
          for i in range(GOOD)),
    ]
    return write_warc(tmp_path / "two-hosts.warc.gz", pages)


def b_fetched(urls: list[str]) -> int:
    return sum(url.startswith("http://b.test/") for url in urls)


def test_a_page_budget_waits_for_the_good_host_instead_of_filling_a_free_one(tmp_path: Path) -> None:
    budget = BUDGET
    log = tmp_path / "access.log"
    with ReplayProcess(str(two_hosts(tmp_path)), access_log=str(log)) as replay:
        result = run_crawl("bestfirst", tmp_path / "pages", ["http://a.test/"], replay.proxy_url, QUERY,
                           settings={**POLITE, "CLOSESPIDER_PAGECOUNT": budget})
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.history) == budget
    # B's links rank below the window of A's waiting (60 - 29 > 16): never fetched.
    assert b_fetched(result.urls) == 0, result.urls
    # A's slot was ready again after each delay and took the next at once:
    # no 5 s heartbeat between two pages (the engine was not left asleep).
    times = [t for t, url, _ in served(log) if url.startswith("http://a.test/")]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert len(gaps) == budget - 1 and max(gaps) < 2.5, gaps
    # Held back when the free slot (B's) had nothing worth a page — once per
    # engine call at most, not in a loop polling for A's slot.
    held = log_stat(result.log, "scheduler/held")
    assert held is not None and 1 <= held <= 3 * budget, held


def test_a_time_budget_fills_the_free_host(tmp_path: Path) -> None:
    with ReplayProcess(str(two_hosts(tmp_path))) as replay:
        result = run_crawl("bestfirst", tmp_path / "time", ["http://a.test/"], replay.proxy_url, QUERY,
                           settings={**POLITE, "CLOSESPIDER_PAGECOUNT": BUDGET, "FOCUS_OBJECTIVE": "time"})
    assert result.returncode == 0, result.log[-3000:]
    assert b_fetched(result.urls) >= 4, result.urls  # B's slot was free: its poor URLs went


def test_a_time_budget_wakes_the_engine_when_the_only_slot_is_ready(tmp_path: Path) -> None:
    """One polite host, kept to it: every request but the first meets its
    slot in its delay, is held (it would hold a place in flight), and the
    engine is woken when the delay ends — not at its 5 s heartbeat."""
    log = tmp_path / "access.log"
    with ReplayProcess(str(two_hosts(tmp_path)), access_log=str(log)) as replay:
        result = run_crawl("bestfirst", tmp_path / "time", ["http://a.test/"], replay.proxy_url, QUERY,
                           settings={**POLITE, "CLOSESPIDER_PAGECOUNT": 12, "FOCUS_OBJECTIVE": "time"},
                           extra_args=["-a", "scope=host"])
    assert result.returncode == 0, result.log[-3000:]
    times = [t for t, _, _ in served(log)]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert len(gaps) == 11 and max(gaps) < 2.5, gaps
    held = log_stat(result.log, "scheduler/held")
    assert held is not None and 1 <= held <= 3 * 12, held


def worker(proxy: str, redis_url: str, key: str, folder: Path, **settings: Any) -> subprocess.Popen[bytes]:
    merged = {
        **POLITE, "FOCUS_REPLAY_PROXY": proxy, "REDIS_URL": redis_url, "FOCUS_REDIS_KEY": key,
        "FOCUS_FRONTIER_BACKEND": "crawlproject.distributed.frontier.RedisFrontier", "FOCUS_SHARED_POLITENESS": True,
        "CLOSESPIDER_PAGECOUNT": 8, "FOCUS_OUTPUT_DIR": str(folder),
        "LOG_FILE": str(folder.with_suffix(".log")), **settings,
    }
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        "bestfirst",
        "-a",
        "seeds=http://a.test/",
        "-a",
        f"query={QUERY}",
    ]
    for name, value in merged.items():
        command += ["-s", f"{name}={value}"]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603


def test_two_workers_on_the_redis_frontier_keep_the_page_budget_on_the_good_host(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    key = "polite:frontier"
    log = tmp_path / "access.log"
    with ReplayProcess(str(two_hosts(tmp_path)), access_log=str(log)) as replay:
        workers = [worker(replay.proxy_url, redis_server.url, key, tmp_path / f"w{i}") for i in range(2)]
        for process in workers:
            assert process.wait(timeout=120) == 0
    RedisFrontier(redis.Redis.from_url(redis_server.url), key, 1).clear()
    answered = [url for _, url, _ in served(log)]
    assert len(answered) == len(set(answered)) >= 12  # each page once, the two budgets spent
    assert b_fetched(answered) == 0, answered
    # Each worker held a request back rather than commit a poorer one, or
    # queue A's in its slot ahead of time.
    held = [log_stat((tmp_path / f"w{i}.log").read_text(), "scheduler/held") for i in range(2)]
    assert all(count is not None and count >= 1 for count in held), held


def relevant_hosts(tmp_path: Path, dead: bool = False, d_holds: int = 0, b_on_topic: bool = True) -> Path:
    """A's home links to 40 good pages of A, then to 20 nearly as
    good of B (fewer of the query's words in their anchors; with
    *b_on_topic* False, pages on bread behind them) — and, with *dead*, as
    many of D, a host whose pages the web does not hold (404) but its first
    *d_holds*."""
    html_type = [("Content-Type", "text/html")]
    def links(host: str, words: str, count: int) -> str:
        return "".join(f'<li><a href="http://{host}/t-{i}.html">{words} {i}</a></li>' for i in range(count))
    others = links("b.test", "gnuplot terminal driver", 20)
    if dead:  # B's and D's alternate: neither ranks above the other
        others = "".join(
            f"{b}{d}"
            for b, d in zip(
                others.split("</li>")[:-1],
                links("d.test", "gnuplot terminal driver", 20).split("</li>")[:-1],
                strict=True,
            )
        )
    pages = [("http://a.test/", 200, html_type, html(
        "<p>gnuplot terminal drivers: each output device has a terminal.</p><ul>"
        + links("a.test", "gnuplot terminal driver output device", 40) + others + "</ul>", "gnuplot terminals"))]
    for host, count in (("a.test", 40), ("b.test", 20), ("d.test", d_holds)):
        on_topic = b_on_topic or host != "b.test"
        pages += [(f"http://{host}/t-{i}.html", 200, html_type, html(
            f"<p>The gnuplot terminal driver {i} of {host} writes plots to an output device.</p>" if on_topic
            else f"<p>Bake bread number {i}: flour, water, salt and a warm oven.</p>", f"terminal {i}"))
            for i in range(count)]
    return write_warc(tmp_path / "relevant-hosts.warc.gz", pages)


def fetch_order(log: Path) -> list[str]:
    return [url for _, url, _ in served(log) if not url.endswith("/robots.txt")]


def crawl_with_a_wait(tmp_path: Path, budget: int, settings: dict[str, Any] | None = None, **web: Any) -> list[str]:
    """The URLs a polite best-first crawl of relevant_hosts(**web) with a wait of one delay requested, in order."""
    log = tmp_path / "access.log"
    with ReplayProcess(str(relevant_hosts(tmp_path, **web)), access_log=str(log)) as replay:
        result = run_crawl(
            "bestfirst",
            tmp_path / "crawl",
            ["http://a.test/"],
            replay.proxy_url,
            QUERY,
            settings={**POLITE, "CLOSESPIDER_PAGECOUNT": budget, "FOCUS_PAGES_WAIT": 1, **(settings or {})},
        )
    assert result.returncode == 0, result.log[-3000:]
    return fetch_order(log)


def test_a_second_relevant_host_is_used_while_the_first_is_busy(tmp_path: Path) -> None:
    """The window of the 16 best sits on A; B's links rank just below it.
    With a wait, B's slot takes its best while A works through its own —
    where the window alone leaves B waiting until A's run out."""
    orders = {}
    for wait in (0, 1):
        log = tmp_path / f"access-{wait}.log"
        with ReplayProcess(str(relevant_hosts(tmp_path)), access_log=str(log)) as replay:
            result = run_crawl("bestfirst", tmp_path / f"wait-{wait}", ["http://a.test/"], replay.proxy_url, QUERY,
                               settings={**POLITE, "CLOSESPIDER_PAGECOUNT": 36, "FOCUS_PAGES_WAIT": wait})
        assert result.returncode == 0, result.log[-3000:]
        orders[wait] = fetch_order(log)
    def first_b(order: list[str]) -> int:  # how many of A's pages were fetched before B's first
        return next(i for i, url in enumerate(order) if url.startswith("http://b.test/")) - 1
    assert b_fetched(orders[0]) <= 12 and first_b(orders[0]) >= 20, orders[0]  # B waited for A's window to drain
    assert b_fetched(orders[1]) >= 12 and first_b(orders[1]) <= 12, orders[1]  # B fetched beside A


def test_an_off_topic_host_is_not_fed_from_below_the_window(tmp_path: Path) -> None:
    """B's links look as good as before but its pages are on bread: its
    first page, the probe, is judged not relevant, and no other URL of B is
    handed out from below the window (liveness alone fed B page after page)."""
    requested = crawl_with_a_wait(tmp_path, 24, b_on_topic=False)
    assert len(requested) >= 20 and b_fetched(requested) == 1, requested


def test_a_topic_bound_to_its_home_feeds_no_host_away_from_it_below_the_window(tmp_path: Path) -> None:
    """B's pages are as relevant as before, but the topic names its home
    (FOCUS_HOME: A): a page of B is worth nothing to it, so B's slot takes
    nothing from below the window — B is crawled only in the global order,
    after A's window drained, as without a wait."""
    requested = crawl_with_a_wait(tmp_path, 36, {"FOCUS_HOME": "http://a.test/"})
    first_b = next((i for i, url in enumerate(requested) if url.startswith("http://b.test/")), len(requested))
    assert len(requested) >= 30 and first_b >= 20 and b_fetched(requested) <= 12, requested


def test_a_host_is_fed_from_below_the_window_only_while_its_last_answer_was_a_2xx(tmp_path: Path) -> None:
    """D holds its first page and none of the rest (a host with a page or two
    in the crawl's reach and many links to pages it does not hold): its first
    2xx proves it live, its first 404 makes it dead again — it is not fed
    404 after 404 from below the window while B's pages keep going."""
    requested = crawl_with_a_wait(tmp_path, 30, dead=True, d_holds=1)
    d_requests = [url for url in requested if url.startswith("http://d.test/")]
    assert d_requests[:1] == ["http://d.test/t-0.html"] and len(d_requests) <= 3, requested
    assert b_fetched(requested) >= 6, requested


def test_a_worker_on_the_redis_frontier_uses_the_second_relevant_host_while_the_first_is_busy(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """The same web, crawled by a worker of the Redis frontier with a wait
    of one delay: B's pages are fetched beside A's, not after A's window
    drained (with a wait of 0 B's first page came 25th). A worker sees as
    deep as it prefetched: 64 here, past A's 40. Workers sharing the hosts'
    turns lease only the URLs of hosts whose turn it is, so their prefetch
    spreads over the hosts without a wait."""
    key = "polite:wait"
    log = tmp_path / "access.log"
    with ReplayProcess(str(relevant_hosts(tmp_path)), access_log=str(log)) as replay:
        process = worker(replay.proxy_url, redis_server.url, key, tmp_path / "w", CLOSESPIDER_PAGECOUNT=36,
                         FOCUS_SHARED_POLITENESS=False, FOCUS_PAGES_WAIT=1, FOCUS_REDIS_PREFETCH=64)
        assert process.wait(timeout=120) == 0
    RedisFrontier(redis.Redis.from_url(redis_server.url), key, 1).clear()
    order = fetch_order(log)
    assert len(order) == len(set(order)) >= 30, order  # each page once, the budget spent
    first_b = next((i for i, url in enumerate(order) if url.startswith("http://b.test/")), len(order))
    assert b_fetched(order) >= 12 and first_b <= 12, order


def test_a_dead_host_is_never_fed_from_the_budget_below_the_window(tmp_path: Path) -> None:
    """D's links rank as B's, beyond the window; D holds none of its pages
    (404: links out of the web). Its first fetch finds it dead and no other
    URL of D is handed out from below the window, while B's keep going."""
    requested = crawl_with_a_wait(tmp_path, 24, dead=True)
    assert len([url for url in requested if url.startswith("http://d.test/")]) == 1, requested
    assert b_fetched(requested) >= 4, requested  # below the window: the live host
