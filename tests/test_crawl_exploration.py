"""Exploration by rule (crawlproject.frontier.exploration): a topic spread over
two sites whose second holds most of it behind a less relevant-looking index.

The web, written here: site A's index is full of the topic's words and links
to forty pages that keep a few of them (its children outrank every link of
B's index, and so do theirs); site B's index barely names the topic, and its
first link leads to a reference page whose fifty children are the topic.
Without exploration the crawl commits to A on the strength of the two index
pages and fetches B only when A runs dry; which site a crawl takes then
depends on which index answers first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crawlproject.replay.process import ReplayProcess
from tests.conftest import FAST_REPLAY_SETTINGS, ROOT, html, write_warc

A, B = "http://www.alpha.test/", "http://docs.beta.test/"
TOPIC = "sql command reference syntax statement clause"
FILLER = "engine release download community mailing list license history news archive mirror"
QUERY = "sql command reference syntax"
BUDGET = 100


def links(urls: list[str]) -> str:
    return " ".join(f'<a href="{url}">{url.rsplit("/", 1)[-1]}</a>' for url in urls)


def two_site_web(path: Path) -> tuple[Path, set[str]]:
    """The WARC and the topic's pages (B's fifty, A's eight)."""
    pages: list[tuple[str, bytes]] = []
    a_pages = [f"{A}a/p{i}.html" for i in range(40)]
    a_deeper = [f"{A}a/d{i}.html" for i in range(80)]
    a_topic = [f"{A}lang/l{i}.html" for i in range(8)]
    pages.append((A, html(f"SQL engine: sql command reference, sql syntax. {TOPIC} {links(a_pages + a_topic)}",
                          "Alpha SQL engine")))
    for i, url in enumerate(a_pages):
        body = f"sql engine notes {i}: {FILLER} sql reference {links(a_deeper[2 * i:2 * i + 2])}"
        pages.append((url, html(body, f"alpha {i}")))
    for i, url in enumerate(a_deeper):
        pages.append((url, html(f"sql engine detail {i}: {FILLER} {FILLER}", f"alpha detail {i}")))
    for i, url in enumerate(a_topic):
        pages.append((url, html(f"{TOPIC} {TOPIC} lang {i}", f"lang {i}")))
    b_topic = [f"{B}sql-{i}.html" for i in range(50)]
    b_other = [f"{B}{name}.html" for name in ("download", "news", "community", "faq", "license", "history")]
    pages.append((B, html(f"Welcome to Beta, a database server. {FILLER} {links([f'{B}manual.html', *b_other])}",
                          "Beta")))
    pages.append((f"{B}manual.html", html(f"Part VI. Reference: SQL commands. {TOPIC} {links(b_topic)}",
                                          "Beta reference")))
    for url in b_other:
        pages.append((url, html(f"beta {FILLER}", "beta")))
    for i, url in enumerate(b_topic):
        pages.append((url, html(f"{TOPIC} {TOPIC} command {i} {links(b_topic[i + 1:i + 3])}", f"sql {i}")))
    warc = write_warc(path, [(url, 200, [("Content-Type", "text/html")], body) for url, body in pages])
    return warc, {*b_topic, f"{B}manual.html", *a_topic}


@pytest.fixture(scope="module")
def two_sites(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("two-sites")
    warc, topic = two_site_web(folder / "two-sites.warc.gz")
    slow_a = folder / "slow-a.json"  # A's index answers 1.5 s late: B's links are queued first
    slow_a.write_text(json.dumps({"rules": [{"url": A, "fault": "slow", "seconds": 1.5}]}), encoding="utf-8")
    with ReplayProcess(str(warc)) as replay, ReplayProcess(str(warc), faults=str(slow_a)) as late_a:
        yield replay, late_a, topic


def crawls(folders: list[Path], proxy: str, strategy: str = "best-first") -> list[list[dict[str, Any]]]:
    """Crawls of the two sites at loopback speed, run side by side; each one's history."""
    settings = {**FAST_REPLAY_SETTINGS, "FOCUS_REPLAY_PROXY": proxy, "CLOSESPIDER_PAGECOUNT": BUDGET,
                "FOCUS_NEAR_DUPLICATES": 0}
    processes = []
    for folder in folders:
        folder.mkdir(parents=True)
        command = [sys.executable, "-m", "scrapy", "crawl", "focus", "-a", f"strategy={strategy}",
                   "-a", f"seeds={A},{B}", "-a", f"query={QUERY}",
                   *(arg for name, value in {**settings, "FOCUS_OUTPUT_DIR": folder,
                                             "LOG_FILE": folder / "crawl.log"}.items()
                     for arg in ("-s", f"{name}={value}"))]
        processes.append(subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))  # noqa: S603
    histories = []
    for folder, process in zip(folders, processes, strict=True):
        _, error = process.communicate(timeout=240)
        assert process.returncode == 0, error.decode()[-2000:]
        lines = (folder / "history.jsonl").read_text(encoding="utf-8").splitlines()
        histories.append([json.loads(line) for line in lines])
    return histories


def test_the_second_site_is_fetched_before_a_tenth_of_the_budget_in_every_run(two_sites: Any, tmp_path: Path) -> None:
    replay, _, _ = two_sites
    for history in crawls([tmp_path / f"run{run}" for run in range(5)], replay.proxy_url):
        first = [record["canonical_url"] for record in history[:BUDGET // 10]]
        assert any(url.startswith(B) and url != B for url in first), first


def test_the_order_the_first_answers_arrive_in_does_not_decide_the_harvest(two_sites: Any, tmp_path: Path) -> None:
    """The same crawl with A's index answering first (as usual) and last (B's
    links queued before A's are known): the pages of the topic found stay
    within a band a user would not notice (the worst ≥ 0.8 × the best)."""
    replay, late_a, topic = two_sites
    found = []
    for proxy, name in ((replay.proxy_url, "a-first"), (late_a.proxy_url, "b-first")):
        for history in crawls([tmp_path / name], proxy):
            found.append(len({record["canonical_url"] for record in history} & topic))
    assert min(found) >= 0.8 * max(found), found
