"""Safe nights (crawlproject.search.symbiosis): whatever the network does, a
night ends in bounded time, never swaps in an empty or collapsed collection
(it keeps the current one, says why in one line, exits 1), keeps the last
good collection for --rollback, holds MAX_INDEX, and serves the queries the
users typed into `scrapy serve`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from crawlproject.replay.process import ReplayProcess
from crawlproject.search.collection import IndexedCollection
from crawlproject.search.engine import IndexHome
from tests.conftest import ROOT, WEBKB_WARC
from tests.test_symbiosis import copy_index, night_report

#: a night must end within this, whatever the network does
BOUND = 240
FAST = ["--max-iter", "1", "--n-hits", "3", "--max-index", "40", "-s", "DOWNLOAD_DELAY=0",
        "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8", "-s", "RETRY_TIMES=1"]


def night(index: Path, proxy: str, *options: str, queries: str = "computer science course\nresearch projects\n",
          tmp_path: Path) -> subprocess.CompletedProcess[str]:
    (tmp_path / "queries.txt").write_text(queries)
    return subprocess.run(  # noqa: S603
        [sys.executable, "-m", "scrapy", "symbiosis", "--index", str(index), "--queries", str(tmp_path / "queries.txt"),
         *FAST, "-s", f"FOCUS_REPLAY_PROXY={proxy}", *options],
        cwd=ROOT, capture_output=True, text=True, timeout=BOUND)


def kept(index: Path, before: Path, done: subprocess.CompletedProcess[str], why: str) -> None:
    """The night ended non-zero with one line (the night's own verdict, or a
    proxy that stopped answering said as a start-up error), the current
    collection unchanged, no staging collection left."""
    assert done.returncode in (1, 2), done.stderr[-2000:]
    [line] = [line for line in done.stderr.splitlines() if "scrapy symbiosis: error:" in line]
    assert why in line, line
    assert IndexHome(index).current() == before
    assert not [c for c in (index / "collections").iterdir() if c.name.endswith("staging")]


def test_a_night_of_503s_keeps_the_collection_and_two_keep_the_last_good_one(built_index: Path, tmp_path: Path) -> None:
    index = copy_index(built_index, tmp_path / "index")
    before = IndexHome(index).current()
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps({"rules": [{"url": "*", "fault": "status", "status": 503, "times": 1_000_000}]}))
    with ReplayProcess(str(WEBKB_WARC), faults=str(faults)) as replay:
        for _ in range(2):
            kept(index, before, night(index, replay.proxy_url, tmp_path=tmp_path),
                 f"the night kept the current collection ({IndexedCollection(before).page_count()} pages): ")
    assert IndexedCollection(before).page_count() > 0


def test_a_dead_proxy_ends_the_night_at_once(built_index: Path, tmp_path: Path) -> None:
    index = copy_index(built_index, tmp_path / "index")
    before = IndexHome(index).current()
    kept(index, before, night(index, "http://127.0.0.1:9", tmp_path=tmp_path), "")


def test_a_replay_killed_mid_night(built_index: Path, tmp_path: Path) -> None:
    index = copy_index(built_index, tmp_path / "index")
    before = IndexHome(index).current()
    replay = ReplayProcess(str(WEBKB_WARC))
    (tmp_path / "queries.txt").write_text("computer science course\nresearch projects\n")
    process = subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "scrapy", "symbiosis", "--index", str(index), "--queries", str(tmp_path / "queries.txt"),
         *FAST, "-s", f"FOCUS_REPLAY_PROXY={replay.proxy_url}", "-s", "DOWNLOAD_DELAY=0.2",
         "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + BOUND
    while not list(index.glob("nights/*/crawls/*/crawl/history.jsonl")):  # the first crawl is fetching
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    replay.stop()
    out, err = process.communicate(timeout=BOUND)
    kept(index, before, subprocess.CompletedProcess(process.args, process.returncode, out, err), "")


def test_queries_with_no_hit_still_steer_and_the_night_ends(built_index: Path, webkb_replay: Any,
                                                            tmp_path: Path) -> None:
    index = copy_index(built_index, tmp_path / "index")
    done = night(index, webkb_replay.proxy_url, "--floor", "0", queries="zyzzyva quuxlet\n", tmp_path=tmp_path)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    report, _ = night_report(index)
    [run] = report["queries"]
    assert run["seeded_from"] in ("votes", "hubs") and run["iterations"]


def test_max_index_holds_and_rollback_restores_the_last_collection(built_index: Path, webkb_replay: Any,
                                                                   tmp_path: Path) -> None:
    index = copy_index(built_index, tmp_path / "index")
    before = IndexHome(index).current()
    done = night(index, webkb_replay.proxy_url, "--max-index", "25", "--floor", "0", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    after = IndexHome(index).current()
    assert after != before and IndexedCollection(after).page_count() <= 25
    back = subprocess.run([sys.executable, "-m", "scrapy", "symbiosis", "--index", str(index), "--rollback"],  # noqa: S603
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert back.returncode == 0, back.stderr
    assert IndexHome(index).current() == before and after.exists()


def test_queries_typed_into_serve_are_the_next_nights(built_index: Path, webkb_replay: Any, tmp_path: Path) -> None:
    index = copy_index(built_index, tmp_path / "index")
    server = subprocess.Popen([sys.executable, "-m", "scrapy", "serve", "--index", str(index), "--port", "0"],  # noqa: S603
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert server.stdout is not None
        address = server.stdout.readline().split()[2].rstrip("/")
        for query in ("course syllabus", "research projects", "course syllabus", "zyzzyva"):
            with urllib.request.urlopen(f"{address}/api/search?{urllib.parse.urlencode({'q': query})}",  # noqa: S310
                                        timeout=30) as answer:
                assert answer.status == 200
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=30)
    logged = (index / "queries.log").read_text().splitlines()
    assert [line.split("\t")[1] for line in logged] == ["course syllabus", "research projects", "course syllabus",
                                                       "zyzzyva"]
    assert logged[-1].endswith("\t0")  # no hit: logged all the same
    (tmp_path / "unused.txt").write_text("")
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "scrapy", "symbiosis", "--index", str(index), "--from-log", "--per-night", "10",
         *FAST, "--floor", "0", "-s", f"FOCUS_REPLAY_PROXY={webkb_replay.proxy_url}"],
        cwd=ROOT, capture_output=True, text=True, timeout=BOUND, env={**os.environ})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "3 of the 4 queries asked in the last 24 hours" in done.stdout
    report, _ = night_report(index)
    assert sorted(run["query"] for run in report["queries"]) == ["course syllabus", "research projects", "zyzzyva"]
