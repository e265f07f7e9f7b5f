"""robots.txt, Crawl-delay, bad input and resume, in real crawls."""

from __future__ import annotations

import json
import re
from pathlib import Path

from protego import Protego

from crawlproject.replay.process import ReplayProcess
from tests.conftest import (
    UNIVERSITY_HOMES,
    WEBKB_WARC,
    gaps_as_sent,
    html,
    run_crawl,
    served,
    write_warc,
)

CORNELL = "http://www.cs.cornell.edu/"


def test_robots_rules_are_never_violated(tmp_path: Path) -> None:
    rules = {
        "www.cs.cornell.edu": "User-agent: *\nDisallow: /Info/People/\n\n"
        "User-agent: crawlproject\nDisallow: /Info/Courses/\nDisallow: /Info/People/\n",
        "*": "User-agent: *\nDisallow: /~\n",
    }
    rules_file = tmp_path / "robots.json"
    rules_file.write_text(json.dumps(rules))
    log = tmp_path / "access.log"
    with ReplayProcess(str(WEBKB_WARC), robots=str(rules_file), access_log=str(log)) as replay:
        result = run_crawl(
            "breadthfirst", tmp_path / "out",
            [CORNELL, "http://www.cs.wisc.edu/"], replay.proxy_url,
            settings={"CLOSESPIDER_ITEMCOUNT": 400},
        )
    assert result.returncode == 0, result.log[-3000:]
    parsers = {host: Protego.parse(text) for host, text in rules.items()}
    fetched = [url for _, url, _ in served(log) if not url.endswith("/robots.txt")]
    assert len(fetched) >= 300
    for url in fetched:
        host = url.split("/")[2]
        assert parsers.get(host, parsers["*"]).can_fetch(url, "crawlproject"), url
    stats_forbidden = result.log.count("robotstxt/forbidden")
    assert stats_forbidden >= 1  # disallowed links existed and were counted
    # robots.txt is fetched once per host, before its first page.
    robots = [url for _, url, _ in served(log) if url.endswith("/robots.txt")]
    assert len(robots) == len(set(robots))


def test_crawl_delay_is_honoured(tmp_path: Path) -> None:
    rules = tmp_path / "robots.txt"
    rules.write_text("User-agent: *\nCrawl-delay: 0.4\nDisallow:\n")
    log = tmp_path / "access.log"
    with ReplayProcess(str(WEBKB_WARC), robots=str(rules), access_log=str(log)) as replay:
        result = run_crawl(
            "breadthfirst", tmp_path / "out", [CORNELL], replay.proxy_url,
            # kept to the host: a page budget may spend its pages on other hosts while Cornell's waits its delay
            settings={"CLOSESPIDER_ITEMCOUNT": 8, "LOG_LEVEL": "DEBUG"}, extra_args=["-a", "scope=host"],
        )
    assert result.returncode == 0, result.log[-3000:]
    gaps = gaps_as_sent(result.log, served(log), CORNELL)
    assert len(gaps) >= 5
    assert min(gaps) >= 0.4 - 0.01, gaps


def test_unparsable_robots_txt_does_not_stop_the_crawl(tmp_path: Path) -> None:
    rules = tmp_path / "robots.txt"
    rules.write_bytes(b"\x00\xff\xfeUser-agent \x80\x81 Disallow:: ::\n<html>not robots</html>\n" * 20)
    with ReplayProcess(str(WEBKB_WARC), robots=str(rules)) as replay:
        result = run_crawl(
            "breadthfirst", tmp_path / "out", [CORNELL], replay.proxy_url,
            settings={"CLOSESPIDER_ITEMCOUNT": 20},
        )
    assert result.returncode == 0 and len(result.history) >= 20


def _bad_input_warc(tmp_path: Path) -> Path:
    html_type = [("Content-Type", "text/html")]
    huge_links = "".join(f'<a href="/huge{i}.html">link {i}</a>' for i in range(20))
    huge = html(huge_links + "<p>" + "filler " * 60_000 + '<a href="/beyond-the-cut.html">x</a>')
    trap = [
        (f"http://t.test/{'x/' * n}", 200, html_type, html('<a href="x/">deeper</a>'))
        for n in range(0, 200)
    ]
    return write_warc(
        tmp_path / "bad.warc.gz",
        [
            ("http://t.test/start", 200, html_type, html(
                '<a href="/malformed">m</a><a href="/charset">c</a><a href="/huge">h</a>'
                '<a href="/picture">i</a><a href="/x/">trap</a><a href="/empty">e</a>'
                '<a href="mailto:a@b">mail</a><a href="javascript:go()">js</a>'
                '<a href="http://[broken">bad</a>'
            )),
            ("http://t.test/malformed", 200, html_type,
             b"<html><body><p>unclosed <b>tags <a href='/ok1'>one<a href=/ok2>two<table><tr><td>"),
            ("http://t.test/charset", 200, [("Content-Type", "text/html; charset=utf-8")],
             "<html><body>caf\xe9 na\xefve <a href='/ok3'>x</a></body></html>".encode("latin-1")),
            ("http://t.test/huge", 200, html_type, huge),
            ("http://t.test/picture", 200, [("Content-Type", "image/gif")], b"GIF89a" + b"\x00" * 5000),
            ("http://t.test/empty", 200, html_type, b""),
            *trap,
        ],
    )


def test_bad_input_is_recorded_or_counted_never_a_crash(tmp_path: Path) -> None:
    warc = _bad_input_warc(tmp_path)
    with ReplayProcess(str(warc)) as replay:
        result = run_crawl(
            "breadthfirst", tmp_path / "out", ["http://t.test/start"], replay.proxy_url,
            # the growing-path rule off: this trap is for the URL length limit
            settings={"CLOSESPIDER_ITEMCOUNT": 400, "FOCUS_MAX_SEGMENT_REPEATS": 0},
        )
    assert result.returncode == 0, result.log[-3000:]
    assert "Traceback" not in result.log
    by_url = {r["url"]: r for r in result.history}
    # malformed HTML: parsed, links found
    assert by_url["http://t.test/malformed"]["outlink_count"] == 2
    assert "http://t.test/ok2" in by_url
    # a wrong charset: decoded, links found
    assert by_url["http://t.test/charset"]["outlink_count"] == 1
    # a huge page: cut at 100 KB, still parsed; links past the cut are not seen
    huge = by_url["http://t.test/huge"]
    assert huge["truncated"] and huge["size"] == 100 * 1024 and huge["outlink_count"] == 20
    assert "http://t.test/beyond-the-cut.html" not in by_url
    # non-HTML: recorded without its body
    image = by_url["http://t.test/picture"]
    assert image["content_type"] == "image/gif" and image["size"] == 0
    assert by_url["http://t.test/empty"]["size"] == 0
    # the trap stops at the URL length limit, and refusals are counted
    deepest = max(len(url) for url in by_url)
    assert deepest <= 256
    assert "urllength/request_ignored_count" in result.log
    assert all(url.startswith("http://t.test/") for url in by_url)  # no mailto:, javascript:


def test_dead_host_is_recorded_as_a_failed_fetch(tmp_path: Path) -> None:
    dead = "http://127.0.0.1:9/nothing-listens-here"
    result = run_crawl(
        "breadthfirst", tmp_path / "out", [dead], None,
        settings={"ROBOTSTXT_OBEY": False, "RETRY_TIMES": 0, "FOCUS_ALLOWED_NETWORKS": "127.0.0.0/8"},
    )
    # its only seed dead: the crawl fetched nothing, and says so (exit 1)
    assert result.returncode == 1, result.log[-3000:]
    assert "no page was fetched" in result.log
    [record] = result.history
    assert record["status"] is None and "Connection" in record["error"]
    # with robots.txt on, an unreachable host is not fetched at all (RFC 9309)
    result = run_crawl(
        "breadthfirst",
        tmp_path / "out2",
        [dead],
        None,
        settings={"RETRY_TIMES": 0, "FOCUS_ALLOWED_NETWORKS": "127.0.0.0/8"},
    )
    assert result.returncode == 1 and result.history == []
    assert "robotstxt/unreachable" in result.log


def test_bad_setting_stops_the_crawl_with_a_clear_message(tmp_path: Path) -> None:
    result = run_crawl(
        "bestfirst", tmp_path, [CORNELL], None, "course",
        settings={"FOCUS_FRONTIER_MAX": "lots"},
    )
    assert result.returncode != 0
    assert "FOCUS_FRONTIER_MAX must be a whole number ≥ 1, got 'lots'" in result.log
    result = run_crawl("bestfirst", tmp_path / "q", [CORNELL], None, "the of and")
    assert result.returncode != 0 and "needs a topic: a query with at least one non-stopword term" in result.log


def test_resume_from_jobdir_continues_the_same_order(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    common = {"CONCURRENT_REQUESTS": 1, "FOCUS_STORE_PAGES": False}
    seeds = ["http://www.cs.washington.edu/"]
    whole = run_crawl("bestfirst", tmp_path / "whole", seeds, webkb_replay.proxy_url, "course",
                      {**common, "CLOSESPIDER_ITEMCOUNT": 60})
    jobdir = tmp_path / "job"
    first = run_crawl("bestfirst", tmp_path / "first", seeds, webkb_replay.proxy_url, "course",
                      {**common, "CLOSESPIDER_ITEMCOUNT": 30, "JOBDIR": jobdir})
    # A budget is the crawl's: the resumed run is given 60 for the whole crawl.
    second = run_crawl("bestfirst", tmp_path / "second", seeds, webkb_replay.proxy_url, "course",
                       {**common, "CLOSESPIDER_ITEMCOUNT": 60, "JOBDIR": jobdir})
    assert whole.returncode == first.returncode == second.returncode == 0
    # The resumed crawl writes on in the first one's folder.
    assert not (tmp_path / "second" / "history.jsonl").exists()
    history = [json.loads(line) for line in (tmp_path / "first" / "history.jsonl").read_text().splitlines()]
    resumed = [record["url"] for record in history]
    assert len(resumed) == len(set(resumed)), "a URL was fetched twice"
    assert [record["order"] for record in history] == list(range(1, len(history) + 1))
    assert "Resuming crawl" in second.log
    assert resumed[:55] == whole.urls[:55]


def test_best_n_first_survives_redirects_and_retries(tmp_path: Path) -> None:
    html_type = [("Content-Type", "text/html")]
    links = "".join(f'<a href="/p{i}">p{i}</a>' for i in range(6))
    warc = write_warc(
        tmp_path / "redirects.warc.gz",
        [
            ("http://r.test/", 200, html_type, html(links + '<a href="/moved">m</a><a href="/loop">l</a>')),
            ("http://r.test/moved", 301, [("Location", "http://r.test/new-home")], b""),
            ("http://r.test/loop", 302, [("Location", "http://r.test/")], b""),
            ("http://r.test/new-home", 200, html_type, html('<a href="/p0">again</a>')),
            ("http://r.test/flaky", 503, html_type, html("try later")),
            *[(f"http://r.test/p{i}", 200, html_type, html('<a href="/flaky">f</a>')) for i in range(6)],
        ],
    )
    with ReplayProcess(str(warc)) as replay:
        result = run_crawl(
            "bestfirst", tmp_path / "out", ["http://r.test/"], replay.proxy_url, "page",
            settings={"FOCUS_BATCH_SIZE": 4, "RETRY_TIMES": 2, "CLOSESPIDER_TIMEOUT": 60},
        )
    assert result.returncode == 0, result.log[-3000:]
    assert result.summary["finish_reason"] == "finished"
    fetched = {r["url"] for r in result.history}
    assert {"http://r.test/new-home", "http://r.test/flaky"} <= fetched
    assert {f"http://r.test/p{i}" for i in range(6)} <= fetched
    assert "frontier/batch_pages_lost" not in result.log


def test_page_budget_counts_pages_not_robots_txt_fetches(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    # One request at a time, so nothing in flight adds pages past the budget.
    result = run_crawl(
        "breadthfirst", tmp_path, UNIVERSITY_HOMES, webkb_replay.proxy_url,
        settings={"CLOSESPIDER_PAGECOUNT": 40, "CONCURRENT_REQUESTS": 1, "FOCUS_STORE_PAGES": "false"},
    )
    assert result.returncode == 0, result.log[-3000:]
    assert result.summary["finish_reason"] == "closespider_pagecount"
    robots_fetches = int(re.search(r"'robotstxt/request_count': (\d+)", result.log)[1])  # type: ignore[index]
    assert robots_fetches >= 4  # one per university host at least
    assert len(result.history) == 40


def test_crawl_delay_holds_for_every_request_redirects_and_retries_included(tmp_path: Path) -> None:
    """DOWNLOAD_DELAY=0 and 8 requests per host: robots.txt's Crawl-delay is
    still the least gap between any two requests to the host — the first
    pages, redirects and retries included (64 ms once in 330)."""
    html_type = [("Content-Type", "text/html")]
    pages: list[tuple[str, int, list[tuple[str, str]], bytes]] = [
        ("http://slow.test/", 200, html_type, html(" ".join(f'<a href="/p{i}/">p{i}</a>' for i in range(60))))
    ]
    for i in range(60):
        if i % 3 == 0:  # a directory whose index redirects, as /gallery/ did
            pages.append((f"http://slow.test/p{i}/", 301, [("Location", f"http://slow.test/p{i}/index.html")], b""))
            pages.append((f"http://slow.test/p{i}/index.html", 200, html_type, html(f"page {i}")))
        elif i % 3 == 1:  # answered 503: retried once
            pages.append((f"http://slow.test/p{i}/", 503, html_type, html("busy")))
        else:
            pages.append((f"http://slow.test/p{i}/", 200, html_type, html(f"page {i}")))
    warc = write_warc(tmp_path / "slow.warc.gz", pages)
    rules = tmp_path / "robots.txt"
    rules.write_text("User-agent: *\nCrawl-delay: 0.2\n")
    log = tmp_path / "access.log"
    with ReplayProcess(str(warc), robots=str(rules), access_log=str(log)) as replay:
        result = run_crawl(
            "breadthfirst", tmp_path / "out", ["http://slow.test/"], replay.proxy_url,
            settings={"LOG_LEVEL": "DEBUG", "DOWNLOAD_DELAY": 0, "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
                      "RETRY_TIMES": 1, "RETRY_HTTP_CODES": "503"},
        )
    assert result.returncode == 0, result.log[-3000:]
    gaps = gaps_as_sent(result.log, served(log), "http://slow.test/")
    assert len(gaps) >= 60 + 20 + 20  # every page, the redirects' targets and the retries
    assert min(gaps) >= 0.2 - 0.01, sorted(gaps)[:5]
