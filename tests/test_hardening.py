"""Hardening: no private network, no other schemes, and the
worst of the web — faults and traps injected by the real replay — each a
counted event the crawl survives."""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from crawlproject.replay.process import ReplayProcess
from tests.conftest import html, log_stat, run_crawl, served, write_warc

HTML = [("Content-Type", "text/html")]

PRIVATE_SPELLINGS = {
    "http://127.0.0.1/": "loopback",
    "http://127.1/": "loopback",
    "http://2130706433/": "loopback",
    "http://0x7f000001/": "loopback",
    "http://0177.0.0.1/": "loopback",
    "http://[::1]/": "loopback",
    "http://localhost/admin": "loopback",
    "http://api.localhost/": "loopback",
    "http://10.1.2.3/": "private",
    "http://172.16.0.9/": "private",
    "http://192.168.1.1/": "private",
    "http://[fd12:3456::1]/": "private",
    "http://169.254.169.254/latest/meta-data/": "link_local",
    "http://[::ffff:169.254.169.254]/": "link_local",
    "http://[fe80::1]/": "link_local",
    "http://224.0.0.1/": "multicast",
    "http://0.0.0.0/": "unspecified",
    "http://240.0.0.1/": "reserved",
    "http://100.64.0.1/": "not_global",
    "http://user:secret@site.test/private": "userinfo",
    "ftp://site.test/file": "bad_scheme",
}


def stat(log: str, name: str) -> int:
    return log_stat(log, name) or 0


def test_no_request_leaves_for_a_private_address_in_any_spelling(tmp_path: Path) -> None:
    links = "".join(f'<a href="{url}">x</a> ' for url in PRIVATE_SPELLINGS)
    warc = write_warc(tmp_path / "site.warc.gz", [
        ("http://site.test/", 200, HTML, html(links + '<a href="/jump">jump</a> <a href="/fine">fine</a>')),
        ("http://site.test/fine", 200, HTML, html("fine")),
    ])
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps({"rules": [
        {"url": "http://site.test/jump", "fault": "redirect", "location": "http://10.9.9.9/inside"},
    ]}))
    log = tmp_path / "access.log"
    with ReplayProcess(str(warc), access_log=str(log), faults=str(faults)) as replay:
        result = run_crawl("breadthfirst", tmp_path / "out", ["http://site.test/"], replay.proxy_url)
    assert result.returncode == 0, result.log[-3000:]
    requested = {url for _, url, _ in served(log)}
    assert requested == {"http://site.test/robots.txt", "http://site.test/", "http://site.test/jump", "http://site.test/fine"}
    expected: dict[str, int] = {}
    for reason in PRIVATE_SPELLINGS.values():
        expected[reason] = expected.get(reason, 0) + 1
    refused = {reason: stat(result.log, f"focus/url_refused/{reason}") for reason in expected}
    assert refused == expected
    assert stat(result.log, "focus/refused/private") == 1  # the redirect into 10.9.9.9


def test_a_seed_in_a_private_network_is_a_clear_error(tmp_path: Path) -> None:
    result = run_crawl("breadthfirst", tmp_path, ["http://192.168.0.10/"], None)
    assert result.returncode == 2
    assert ("scrapy crawl: error: seed 'http://192.168.0.10/' is refused (private address): a crawl reaches "
            "no private network unless FOCUS_ALLOWED_NETWORKS opens its range") in result.log


class _Listener:
    """A TCP server that counts connections (and answers a tiny page)."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("0.0.0.0", 0))  # noqa: S104 (loopback test: reachable by the machine's name)
        self.socket.listen()
        self.port = self.socket.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.connections += 1
            connection.recv(4096)
            connection.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html>inside</html>")
            connection.close()

    def close(self) -> None:
        self.socket.close()


def test_a_name_that_resolves_to_a_private_address_is_refused_before_connecting(tmp_path: Path) -> None:
    name = socket.gethostname()
    address = socket.gethostbyname(name)
    assert not ipaddress.ip_address(address).is_global  # the machine's own name: a local address
    listener = _Listener()
    try:
        url = f"http://{name}:{listener.port}/"
        refused = run_crawl("breadthfirst", tmp_path / "refused", [url], None,
                            settings={"ROBOTSTXT_OBEY": False, "RETRY_TIMES": 0})
        allowed = run_crawl("breadthfirst", tmp_path / "allowed", [url], None,
                            settings={"ROBOTSTXT_OBEY": False, "RETRY_TIMES": 0,
                                      "FOCUS_ALLOWED_NETWORKS": f"{address}/32"})
    finally:
        listener.close()
    # its only seed refused: nothing fetched, and the crawl says so
    assert refused.returncode == 1, refused.log[-3000:]
    assert "no page was fetched: none of the 1 requests sent was answered" in refused.log
    [record] = refused.history
    assert record["status"] is None and "DNS lookup failed" in record["error"]
    assert f"{name} resolves to {address} (loopback): refused; FOCUS_ALLOWED_NETWORKS opens" in refused.log
    # Opened for this crawl, the same name is fetched: it was the policy, not the network.
    assert allowed.returncode == 0 and allowed.history[0]["status"] == 200
    assert listener.connections == 1


# -- faults ------------------------------------------------------------------------------

FAULTS: list[dict[str, Any]] = [
    {"url": "http://f.test/slow", "fault": "slow", "seconds": 4},
    {"url": "http://f.test/reset", "fault": "reset", "after_bytes": 2000},
    {"url": "http://f.test/endless", "fault": "endless"},
    {"url": "http://f.test/huge", "fault": "huge", "bytes": 10_000_000},
    {"url": "http://f.test/binary", "fault": "binary", "bytes": 60_000},
    {"url": "http://f.test/latin1", "fault": "charset", "declared": "utf-8", "encoding": "latin-1"},
    {"url": "http://f.test/nocharset", "fault": "charset", "declared": "", "encoding": "cp1252"},
    {"url": "http://f.test/mixed", "fault": "charset", "declared": "utf-8", "meta": "iso-8859-1", "encoding": "cp1252"},
    {"url": "http://f.test/links", "fault": "many_links", "count": 50_000},
    {"url": "http://f.test/broken", "fault": "broken_html", "frames": 60},
    {"url": "http://f.test/loop*", "fault": "redirect_loop"},
    {"url": "http://f.test/chain*", "fault": "redirect_chain", "hops": 30},
    {"url": "http://f.test/flaky", "fault": "status", "status": 503, "times": 1},
    {"url": "http://f.test/gone", "fault": "status", "status": 500, "times": 100},
]
FAULT_PAGES = [rule["url"].rstrip("*") for rule in FAULTS]


def test_every_fault_is_a_counted_event_the_crawl_survives(tmp_path: Path) -> None:
    start = html("".join(f'<a href="{url}">{url}</a> ' for url in FAULT_PAGES))
    warc = write_warc(tmp_path / "f.warc.gz", [
        ("http://f.test/", 200, HTML, start),
        ("http://f.test/flaky", 200, HTML, html("back again")),
    ])
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps({"rules": FAULTS}))
    with ReplayProcess(str(warc), faults=str(faults)) as replay:
        result = run_crawl(
            "breadthfirst", tmp_path / "out", ["http://f.test/"], replay.proxy_url,
            settings={"DOWNLOAD_TIMEOUT": 2, "RETRY_TIMES": 1, "FOCUS_MAX_LINKS_PER_PAGE": 1000,
                      "CLOSESPIDER_TIMEOUT": 120},
        )
    assert result.returncode == 0, result.log[-3000:]
    assert result.summary["finish_reason"] == "finished"
    assert stat(result.log, "spider_exceptions/count") == 0
    by_url = {record["url"]: record for record in result.history}
    assert "TimeoutError" in by_url["http://f.test/slow"]["error"]
    assert by_url["http://f.test/reset"]["status"] is None  # the body was cut short: a failed fetch
    assert by_url["http://f.test/endless"]["truncated"] and by_url["http://f.test/endless"]["size"] == 102400
    assert by_url["http://f.test/huge"]["truncated"] and by_url["http://f.test/huge"]["outlink_count"] == 20
    assert by_url["http://f.test/binary"]["status"] == 200
    for page in ("latin1", "nocharset", "mixed"):
        assert by_url[f"http://f.test/{page}"]["outlink_count"] == 1, page
    assert by_url["http://f.test/links"]["outlink_count"] == 1000
    assert stat(result.log, "focus/page/links_cut_pages") == 1
    assert by_url["http://f.test/broken"]["outlink_count"] >= 2
    assert by_url["http://f.test/flaky"]["status"] == 200  # retried after the 503
    assert by_url["http://f.test/gone"]["status"] == 500  # recorded after its retry
    assert stat(result.log, "retry/count") >= 3
    assert stat(result.log, "focus/page/truncated") >= 2
    # 30 hops: given up after REDIRECT_MAX_TIMES, recorded as a failed fetch
    [given_up] = [r for r in result.history if r["url"].startswith("http://f.test/chain")]
    assert given_up["status"] is None and "max redirections reached" in given_up["error"]
    # a loop: the redirect back to a page being fetched is dropped, and counted
    assert stat(result.log, "scheduler/redirect_already_seen") >= 1


ROBOTS_FAULTS: dict[str, dict[str, Any]] = {
    "huge": {"fault": "body", "content_type": "text/plain",
             "body": "User-agent: *\n" + "# padding\n" * 60_000 + "Disallow: /secret\n"},
    "garbage": {"fault": "binary", "bytes": 5000},
    "error": {"fault": "status", "status": 503, "times": 1000},
    "missing": {"fault": "status", "status": 404, "times": 1000},
    "moved": {"fault": "redirect", "location": "http://moved-rules.test/robots.txt"},
    "slow": {"fault": "slow", "seconds": 5},
    "nodelay": {"fault": "body", "content_type": "text/plain", "body": "User-agent: *\nCrawl-delay: 0\n"},
    "fractional": {"fault": "body", "content_type": "text/plain", "body": "User-agent: *\nCrawl-delay: 0.25\n"},
    "forever": {"fault": "body", "content_type": "text/plain", "body": "User-agent: *\nCrawl-delay: 86400\n"},
}


def test_robots_txt_faults_end_in_the_rfc_9309_answer(tmp_path: Path) -> None:
    hosts = [f"http://{name}.test/" for name in ROBOTS_FAULTS]
    pages = [
        (f"{host}{path}", 200, HTML, html(f"{path} of {host}")) for host in hosts for path in ("", "secret", "page")
    ]
    seeds_page = html("".join(f'<a href="{host}secret">s</a> <a href="{host}page">p</a> ' for host in hosts))
    warc = write_warc(
        tmp_path / "r.warc.gz",
        [
            ("http://start.test/", 200, HTML, seeds_page),
            *pages,
            (
                "http://moved-rules.test/robots.txt",
                200,
                [("Content-Type", "text/plain")],
                b"User-agent: *\nDisallow: /secret\n",
            ),
        ],
    )
    rules = [{"url": f"http://{name}.test/robots.txt", **rule} for name, rule in ROBOTS_FAULTS.items()]
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps({"rules": rules}))
    log = tmp_path / "access.log"
    with ReplayProcess(str(warc), faults=str(faults), access_log=str(log)) as replay:
        result = run_crawl("breadthfirst", tmp_path / "out", ["http://start.test/"], replay.proxy_url,
                           settings={"DOWNLOAD_TIMEOUT": 2, "RETRY_TIMES": 0})
    assert result.returncode == 0, result.log[-3000:]
    fetched = {url for _, url, _ in served(log) if not url.endswith("robots.txt")}

    def got(host: str) -> set[str]:
        return {path for path in ("secret", "page") if f"http://{host}.test/{path}" in fetched}

    assert got("huge") == {"secret", "page"}  # its Disallow lies past 500 KiB: not read (RFC 9309 allows it)
    assert got("garbage") == {"secret", "page"}  # nothing parsable: nothing disallowed
    assert got("error") == set() and got("slow") == set()  # unreachable: disallow all, for now
    assert got("missing") == {"secret", "page"}  # 4xx: no rules
    assert got("moved") == {"page"}  # the redirect is followed to the rules
    assert got("nodelay") == {"secret", "page"} and got("fractional") == {"secret", "page"}
    assert got("forever") == set()  # asks more than FOCUS_ROBOTSTXT_MAX_CRAWL_DELAY: skipped
    assert stat(result.log, "robotstxt/crawl_delay_too_long") >= 1
    assert stat(result.log, "robotstxt/unreachable") == 2


# -- traps -------------------------------------------------------------------------------

def test_traps_are_bounded_and_say_what_was_cut(tmp_path: Path) -> None:
    warc = write_warc(tmp_path / "t.warc.gz", [
        ("http://trap.test/", 200, HTML, html(
            '<a href="/cal/2026/01/">calendar</a> <a href="/s/page">session</a> '
            '<a href="/a/">growing</a> <a href="/q?x=1&y=2">query</a>'
        )),
    ])
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps({"rules": [
        {"url": "http://trap.test/cal/*", "fault": "calendar"},
        {"url": "http://trap.test/s/*", "fault": "session_ids"},
        {"url": "http://trap.test/a/*", "fault": "growing_path"},
        {"url": "http://trap.test/q*", "fault": "query_permutations"},
    ]}))
    with ReplayProcess(str(warc), faults=str(faults)) as replay:
        result = run_crawl(
            "breadthfirst", tmp_path / "out", ["http://trap.test/"], replay.proxy_url,
            settings={"FOCUS_MAX_PAGES_PER_HOST": 60, "FOCUS_MAX_SEGMENT_REPEATS": 3, "CLOSESPIDER_TIMEOUT": 120},
        )
    assert result.returncode == 0, result.log[-3000:]
    assert result.summary["finish_reason"] == "finished"  # it ended by itself: every trap closed
    keys = [record["canonical_url"] for record in result.history]
    assert len(keys) == len(set(keys)) <= 60
    assert stat(result.log, "frontier/host_cap") + stat(result.log, "frontier/host_cap_dropped") > 0
    # session ids: one page, however many ids it is linked under
    assert [k for k in keys if k.startswith("http://trap.test/s/page")] == ["http://trap.test/s/page"]
    # the growing path stops at the repeated-segment rule
    growing = [k for k in keys if k.startswith("http://trap.test/a/")]
    assert max(k.count("/a") for k in growing) == 3
    assert stat(result.log, "focus/url_refused/repeated_segments") >= 1
    # permutations of one query are one page
    assert "http://trap.test/q?x=1&y=2" in keys and "http://trap.test/q?y=2&x=1" not in keys


@pytest.mark.parametrize("setting", ["10.0.0.0/33", "not-a-network"])
def test_a_bad_allowed_network_is_a_clear_error(tmp_path: Path, setting: str) -> None:
    result = run_crawl("breadthfirst", tmp_path, ["http://site.test/"], None,
                       settings={"FOCUS_ALLOWED_NETWORKS": setting})
    assert result.returncode == 2
    assert (f"scrapy crawl: error: FOCUS_ALLOWED_NETWORKS: {setting!r} is not a network; give CIDR ranges, "
            "e.g. 10.0.0.0/8,192.168.1.0/24") in result.log


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"JOBDIR": "{file}"}, "JOBDIR '{file}' is a file: name a folder"),
        ({"JOBDIR": "{file}/job"}, "JOBDIR '{file}/job' lies under '{file}', a file: name a folder"),
        ({"FOCUS_OUTPUT_DIR": "{file}"}, "FOCUS_OUTPUT_DIR '{file}' is a file: name a folder"),
        (
            {"FOCUS_OUTPUT_DIR": "{file}/out"},
            "FOCUS_OUTPUT_DIR '{file}/out' lies under '{file}', a file: name a folder",
        ),
        (
            {"REDIS_URL": "notaurl", "FOCUS_FRONTIER_BACKEND": "crawlproject.distributed.frontier.RedisFrontier"},
            "REDIS_URL 'notaurl' is not a Redis URL",
        ),
        (
            {
                "REDIS_URL": "redis://127.0.0.1:1/0",
                "FOCUS_FRONTIER_BACKEND": "crawlproject.distributed.frontier.RedisFrontier",
            },
            "the shared frontier's Redis at redis://127.0.0.1:1/0 does not answer",
        ),
    ],
)
def test_a_bad_folder_or_redis_is_one_line_and_exit_2(tmp_path: Path, settings: dict[str, str], said: str) -> None:
    """These ended in tracebacks (FileExistsError, NotADirectoryError, 'Scraper close failure')."""
    file = tmp_path / "a-file"
    file.write_text("not a folder")
    folder = tmp_path / "crawl"
    filled = {name: value.format(file=file) for name, value in settings.items()}
    result = run_crawl("bestfirst", folder, ["http://site.test/"], None, query="course",
                       settings={"LOG_FILE": "", **filled})
    assert result.returncode == 2, result.log[-2000:]
    assert f"scrapy crawl: error: {said.format(file=file)}" in result.log
    assert "Traceback" not in result.log


def test_a_seed_without_its_scheme_says_so(tmp_path: Path) -> None:
    result = run_crawl("bestfirst", tmp_path, "www.example.org", None, query="course", settings={"LOG_FILE": ""})
    assert result.returncode == 2
    assert ("scrapy crawl: error: seeds='www.example.org': a seed needs its scheme, e.g. "
            "-a seeds=http://www.example.org") in result.log  # was: "neither a file nor … (no such file)"


def test_train_names_the_argument_whose_file_is_missing(tmp_path: Path) -> None:
    """Before, `train --examples missing.txt` talked about seeds."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    assert not (ROOT / "no-such-folder/examples.txt").exists()
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "scrapy",
            "train",
            "--examples",
            "no-such-folder/examples.txt",  # noqa: S603
            "-o",
            str(tmp_path / "topic.npz"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines()[-1] == (
        "scrapy train: error: --examples 'no-such-folder/examples.txt' is neither a file nor a comma-separated "
        "list of URLs (no such file)")


def test_a_seeds_file_names_its_bad_line(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://site.test/\n# a comment\nwww.site.test\nftp://site.test/\nhttps://site.test/b\n")
    result = run_crawl("bestfirst", tmp_path / "out", str(seeds), None, query="course", settings={"LOG_FILE": ""})
    assert result.returncode == 2
    assert (f"scrapy crawl: error: seeds file {seeds}, line 3 (and 1 more line): seed 'www.site.test' cannot be "
            "crawled") in result.log


def test_counter_traps_end_with_the_default_settings(tmp_path: Path) -> None:
    # With no per-host cap (the default) a calendar or a counter
    # (?d=N links to ?d=N+1) was followed for as long as the crawl ran.
    warc = write_warc(tmp_path / "t.warc.gz", [
        ("http://trap.test/", 200, HTML, html(
            '<a href="/cal/2026/01/">calendar</a> <a href="/count?d=1">counter</a> '
            + " ".join(f'<a href="/course/cs{n}/">course {n}</a>' for n in range(100, 160))
        )),
        *[(f"http://trap.test/course/cs{n}/", 200, HTML, html(f'course {n} <a href="/course/cs{n + 1}/">next</a>'))
          for n in range(100, 160)],
    ])
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps({"rules": [
        {"url": "http://trap.test/cal/*", "fault": "calendar"},
        {"url": "http://trap.test/count*", "fault": "counter"},
    ]}))
    with ReplayProcess(str(warc), faults=str(faults)) as replay:
        result = run_crawl(
            "breadthfirst", tmp_path / "out", ["http://trap.test/"], replay.proxy_url,
            settings={"CLOSESPIDER_PAGECOUNT": 1000, "CLOSESPIDER_TIMEOUT": 120},
        )
    assert result.returncode == 0, result.log[-3000:]
    assert result.summary["finish_reason"] == "finished"  # it ended by itself, far below its budget
    urls = [record["url"] for record in result.history]
    calendar = [url for url in urls if "/cal/" in url]
    counter = [url for url in urls if "/count" in url]
    # 20 hops each way from the calendar's entry, 20 on from the counter's
    assert len(calendar) == 1 + 2 * 20 and len(counter) == 1 + 20
    assert "http://trap.test/count?d=21" in urls and "http://trap.test/count?d=22" not in urls
    # the calendar's last month each way links on and back, the counter's on
    assert stat(result.log, "focus/url_refused/counter_trap") == 2 + 2 + 1
    # pages of one shape linked from one index are no chain: every course page is fetched
    assert {f"http://trap.test/course/cs{n}/" for n in range(100, 160)} <= set(urls)
