"""Shared fixtures: the real corpus, a real replay server, real crawls."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.utils.test import get_crawler
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from bench.corpora import WEBKB_DEPARTMENT_HOMES
from crawlproject.frontier.scheduler import FrontierScheduler
from crawlproject.replay import LOOPBACK_SPEED
from crawlproject.replay.process import ReplayProcess

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CORPUS = Path(os.environ.get("CRAWLPROJECT_CORPUS", ROOT.parent / "shared" / "corpora" / "webkb"))
WEBKB_WARC = CORPUS / "webkb.warc.gz"
WEBKB_LABELS = CORPUS / "labels.tsv"
UNIVERSITY_HOMES = list(WEBKB_DEPARTMENT_HOMES)
CRAWL_TIMEOUT = 240
#: The project's defaults are polite to real sites (one request at a time per
#: host, a delay); a replay on loopback is no one's site, so tests override them.
#: The HTML report (matplotlib: a second and a half of a crawl process's CPU)
#: is left to the tests that read it (FOCUS_REPORT=True), and the near-duplicate
#: check (datasketch imports scipy.integrate: half a second) to the tests of it
#: (FOCUS_NEAR_DUPLICATES=0.8, the default).
FAST_REPLAY_SETTINGS: dict[str, Any] = {**LOOPBACK_SPEED, "LOG_LEVEL": "INFO", "FOCUS_REPORT": False,
                                        "FOCUS_NEAR_DUPLICATES": 0}


#: Seconds each test file took in a whole run: the test processes are handed
#: the longest files first, so that a run does not end waiting on one slow
#: file (xdist's own order puts files of few tests — the crawls — last).
#: Rewritten by a run with CRAWLPROJECT_RECORD_DURATIONS=1; a file it does
#: not name counts as the median.
DURATIONS = Path(__file__).with_name("durations.json")


def pytest_configure(config: pytest.Config) -> None:
    # The WARC indexes the replays cache (crawlproject.disk_cache) go to a
    # folder of this run, shared by its test processes, not the user's cache:
    # the tests' own small WARCs would pile up there.
    if not hasattr(config, "workerinput") and "CRAWLPROJECT_CACHE_DIR" not in os.environ:
        os.environ["CRAWLPROJECT_CACHE_DIR"] = tempfile.mkdtemp(prefix="crawlproject-tests-cache-")
        config.add_cleanup(lambda: shutil.rmtree(os.environ.pop("CRAWLPROJECT_CACHE_DIR"), ignore_errors=True))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    durations: dict[str, float] = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
    known = sorted(durations.values())
    default = known[len(known) // 2] if known else 0.0
    # Stable: a file's tests keep their order, and stay together.
    items.sort(key=lambda item: -durations.get(item.nodeid.split("::", 1)[0], default))


_file_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get("CRAWLPROJECT_RECORD_DURATIONS"):  # on the controller too: every worker's reports
        path = report.nodeid.split("::", 1)[0]
        _file_seconds[path] = _file_seconds.get(path, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    if os.environ.get("CRAWLPROJECT_RECORD_DURATIONS") and _file_seconds and not hasattr(session.config, "workerinput"):
        ordered = dict(sorted(((path, round(seconds, 1)) for path, seconds in _file_seconds.items()),
                              key=lambda item: -item[1]))
        DURATIONS.write_text(json.dumps(ordered, indent=1) + "\n", encoding="utf-8")


@pytest.fixture(autouse=True)
def _no_scrapy_project_in_the_environment() -> None:
    """Scrapy's get_project_settings() leaves SCRAPY_SETTINGS_MODULE in
    os.environ, and a test that later runs `scrapy` in a project of its own
    with os.environ would get this project's spiders (which test ran first in
    the worker decided it). Each test starts without it; those in this
    project find it again through scrapy.cfg."""
    os.environ.pop("SCRAPY_SETTINGS_MODULE", None)


@pytest.fixture(scope="session")
def paragraphs() -> Path:
    """The paragraph pool the synthetic webs of the tests recombine (WebKB's)."""
    from crawlproject.corpus.paragraphs import paragraph_file

    return paragraph_file([CORPUS], ROOT / ".cache")


@pytest.fixture(scope="session")
def webkb_replay(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One replay server of the WebKB WARC for the whole session."""
    if not WEBKB_WARC.is_file():
        pytest.fail(f"the WebKB corpus is missing at {WEBKB_WARC}; put ../shared beside the repo")
    with ReplayProcess(str(WEBKB_WARC)) as replay:
        yield replay


@pytest.fixture(scope="session")
def redis_server() -> Any:
    """A real redis-server (Debian's, installed by `make setup`) for the session."""
    from bench.servers import RedisServer

    with RedisServer() as server:
        yield server


@dataclass
class CrawlResult:
    returncode: int
    log: str
    folder: Path
    history: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def urls(self) -> list[str]:
        return [record["url"] for record in self.history]

    def links(self) -> list[list[str]]:
        path = self.folder / "links.tsv"
        return [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]


def run_crawl(
    spider: str,
    folder: Path,
    seeds: str | list[str],
    proxy: str | None,
    query: str | None = None,
    settings: dict[str, Any] | None = None,
    extra_args: list[str] | None = None,
) -> CrawlResult:
    """Run ``scrapy crawl`` for real, in a child process, and read its output."""
    folder.mkdir(parents=True, exist_ok=True)
    seeds_arg = ",".join(seeds) if isinstance(seeds, list) else seeds
    command = [sys.executable, "-m", "scrapy", "crawl", spider, "-a", f"seeds={seeds_arg}"]
    if query is not None:
        command += ["-a", f"query={query}"]
    merged = {**FAST_REPLAY_SETTINGS, "FOCUS_OUTPUT_DIR": str(folder), "LOG_FILE": str(folder / "crawl.log")}
    if proxy:
        merged["FOCUS_REPLAY_PROXY"] = proxy
    merged.update(settings or {})
    for name, value in merged.items():
        command += ["-s", f"{name}={value}"]
    command += extra_args or []
    completed = subprocess.run(  # noqa: S603
        command, cwd=ROOT, capture_output=True, text=True, timeout=CRAWL_TIMEOUT
    )
    log_path = folder / "crawl.log"
    log = completed.stderr + (log_path.read_text(encoding="utf-8") if log_path.exists() else "")
    result = CrawlResult(completed.returncode, log, folder)
    history = folder / "history.jsonl"
    if history.exists():
        result.history = [json.loads(line) for line in history.read_text().splitlines()]
    summary = folder / "summary.json"
    if summary.exists():
        result.summary = json.loads(summary.read_text())
    return result


def log_stat(log: str, name: str) -> int | None:
    """An integer stat from a crawl's log (Scrapy dumps its stats at the
    end), or None when the crawl never set it."""
    found = re.search(rf"'{re.escape(name)}': (\d+)", log)
    return int(found[1]) if found else None


def gaps_as_sent(log: str, answered: list[tuple[float, str, str]], prefix: str = "") -> list[float]:
    """Seconds between the page requests (robots.txt left out) to URLs
    starting with *prefix*, as they left the crawl process (the download
    handler's DEBUG line) — the gaps a crawl kept, which a replay short of
    CPU blurs in its own arrival times. Every request the replay *answered*
    (:func:`served`) must be found there first."""
    left = sorted((float(t), url) for url, t in re.findall(r"Request leaves: (\S+) at ([0-9.]+)", log))
    left = [(t, url) for t, url in left if url.startswith(prefix)]
    assert sorted(url for _, url in left) == sorted(url for _, url, _ in answered if url.startswith(prefix))
    times = [t for t, url in left if not url.endswith("/robots.txt")]
    return [b - a for a, b in zip(times, times[1:])]


def write_warc(path: Path, pages: list[tuple[str, int, list[tuple[str, str]], bytes]]) -> Path:
    """A WARC of hand-made responses: (url, status, headers, body)."""
    with path.open("wb") as f:
        writer = WARCWriter(f, gzip=True)
        for url, status, headers, body in pages:
            http_headers = StatusAndHeaders(
                f"{status} X", [*headers, ("Content-Length", str(len(body)))], protocol="HTTP/1.0"
            )
            record = writer.create_warc_record(
                url, "response", payload=BytesIO(body), length=len(body), http_headers=http_headers
            )
            writer.write_record(record)
    return path


#: our spiders settle their output folder when built: not in the checkout's crawls/
_SCHEDULER_OUTPUTS = tempfile.TemporaryDirectory(prefix="open-scheduler-")


def open_scheduler(
    spider_cls: type[Spider], settings: dict[str, object] | None = None, **spider_kwargs: Any
) -> tuple[Crawler, FrontierScheduler, Spider]:
    """A FrontierScheduler opened for a spider, as Crawler.crawl would build it
    in a project with the add-on (``ADDONS={}`` in *settings*: without it)."""
    crawler = get_crawler(spider_cls, {"ADDONS": {"crawlproject.addon.FocusedCrawlAddon": 0},
                                       "FOCUS_OUTPUT_DIR": f"{_SCHEDULER_OUTPUTS.name}/%(name)s-%(job)s",
                                       **(settings or {})})
    crawler._apply_settings()  # noqa: SLF001 (builds stats, as Crawler.crawl does)
    spider = spider_cls.from_crawler(crawler, **spider_kwargs)
    crawler.spider = spider
    scheduler = FrontierScheduler.from_crawler(crawler)
    scheduler.open(spider)
    _OPEN_CRAWLERS.append(crawler)
    return crawler, scheduler, spider


#: crawlers open_scheduler opened, whose engine a test may never stop
_OPEN_CRAWLERS: list[Crawler] = []


def built_spider(spider_cls: type[Spider], settings: dict[str, object], **spider_kwargs: Any) -> Spider:
    """A spider built as Crawler.crawl builds it, in a project with the add-on;
    its crawl's folder is let go after the test (it is never run)."""
    crawler = get_crawler(spider_cls, {"ADDONS": {"crawlproject.addon.FocusedCrawlAddon": 0}, **settings})
    _OPEN_CRAWLERS.append(crawler)
    return spider_cls.from_crawler(crawler, **spider_kwargs)


@pytest.fixture(autouse=True)
def _stop_opened_crawls() -> Iterator[None]:
    """After each test, stop the engines of the crawls open_scheduler opened
    and the test left open: their folders' locks are let go, not collected."""
    yield
    while _OPEN_CRAWLERS:
        _OPEN_CRAWLERS.pop().signals.send_catch_log(signal=signals.engine_stopped)


def stop_scheduler(scheduler: FrontierScheduler, reason: str = "shutdown") -> None:
    """Close *scheduler* and stop its crawl's engine, as Crawler.stop would:
    the crawl lets its JOBDIR and its folder go (a later start resumes them)."""
    scheduler.close(reason)
    scheduler.crawler.signals.send_catch_log(signal=signals.engine_stopped)


def examples_crawl_script(budget: int, printed: str, call: str = "", settings: str = "") -> str:
    """A script that calls ``crawlproject.crawl(examples=…)`` on docsweb's
    gnuplot terminal pages and prints json of *printed* (an expression of
    the collection ``c``); *call* and *settings* add keyword arguments."""
    docsweb = SHARED / "corpora" / "docsweb" / "docsweb.warc.gz"
    examples = [f"http://www.gnuplot.info/docs_5.4/node{n}.html" for n in (540, 590, 627)]
    return (
        "import json\n"
        "import crawlproject\n"
        f"c = crawlproject.crawl(seeds='http://www.gnuplot.info/docs_5.4/index.html', examples={examples!r}, "
        f"budget={budget}, strategy='best-first', output_dir='out'{call}, settings={{'FOCUS_REPLAY_WARC': "
        f"{str(docsweb)!r}, 'DOWNLOAD_DELAY': 0, 'CONCURRENT_REQUESTS_PER_DOMAIN': 8{settings}}})\n"
        f"print(json.dumps({printed}))\n"
    )


def html(body: str, title: str = "page") -> bytes:
    return f"<html><head><title>{title}</title></head><body>{body}</body></html>".encode()


def served(access_log: Path) -> list[tuple[float, str, str]]:
    """(arrival time, URL, status) of every request the replay answered, in
    order of arrival (a line is written when the answer goes out)."""
    rows = [line.split("\t") for line in access_log.read_text().splitlines()]
    return sorted(((float(t), url, status) for t, _, url, status in rows), key=lambda row: row[0])


class SlowTcpProxy:
    """A TCP proxy on loopback that holds every chunk *delay* seconds before
    passing it on, both ways: a server far away (a slow Redis)."""

    def __init__(self, target_port: int, delay: float):
        import socket
        import threading

        self.target_port, self.delay = target_port, delay
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket
        import threading

        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source: Any, sink: Any) -> None:
        try:
            while chunk := source.recv(65536):
                time.sleep(self.delay)
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.close()

    def close(self) -> None:
        self._closed = True
        self.listener.close()


def chromium(window: str = "1400,2200") -> Any:
    """Debian's chromium, headless, driven by selenium through Debian's
    chromedriver (both installed by `make setup`); the caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--no-first-run", f"--window-size={window}"):
        options.add_argument(argument)
    os.environ["SE_OFFLINE"] = "true"  # selenium looks for no driver online
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def judge_and_learn(strategy: Any, page: Any, judge: Any = None) -> float | None:
    """A fetched *page* as a crawl takes it: judged (by *judge*, else the
    strategy's model's own judge, else the topic query's TF cosine — what
    FOCUS_JUDGE=auto builds), and learnt by the strategy's hook (through a
    Focus with the strategy's home, when it has one: see :func:`bound_to`)."""
    from crawlproject.judges.query import TfQueryJudge
    from crawlproject.strategies.factory import Focus

    if judge is None:
        judge = strategy.own_judge() or TfQueryJudge(strategy.analyzer.vector(strategy.topic.query), strategy.analyzer)
    return Focus(judge, strategy, strategy.home if strategy.home.bound else None).on_page(page)


def bound_to(strategy: Any, home: Any) -> Any:
    """A Focus of *strategy* bound to *home* (crawlproject.policy.scope.HomeSites),
    as the factory composes a site-bound crawl's; its judge is the strategy's own."""
    from crawlproject.strategies.factory import Focus

    return Focus(strategy.own_judge(), strategy, home)


@pytest.fixture(scope="session")
def built_index(webkb_replay: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of a 150-page best-first crawl of two WebKB departments (copy it to change it)."""
    folder = tmp_path_factory.mktemp("built")
    crawl = run_crawl("bestfirst", folder / "crawl", UNIVERSITY_HOMES[:2], webkb_replay.proxy_url, query="course",
                      settings={"FOCUS_INDEX_DIR": str(folder / "index"), "CLOSESPIDER_ITEMCOUNT": 150})
    assert crawl.returncode == 0, crawl.log[-2000:]
    return folder / "index"
