"""A crawl killed with SIGKILL and restarted with the same JOBDIR loses
nothing: every URL queued before the kill is fetched or still queued, and
the only pages fetched twice are those in flight at the kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from crawlproject.frontier.inspect import FrontierState
from crawlproject.replay.process import ReplayProcess
from tests.conftest import FAST_REPLAY_SETTINGS, ROOT, UNIVERSITY_HOMES

CONCURRENCY = 4


def crawl_command(proxy: str, folder: Path, jobdir: Path, budget: int) -> list[str]:
    settings = {
        **FAST_REPLAY_SETTINGS, "FOCUS_REPLAY_PROXY": proxy, "JOBDIR": str(jobdir),
        "FOCUS_OUTPUT_DIR": str(folder), "CLOSESPIDER_ITEMCOUNT": budget,
        "CONCURRENT_REQUESTS": CONCURRENCY, "LOG_FILE": str(folder.parent / f"{folder.name}-{time.monotonic_ns()}.log"),
        "FOCUS_WARC_OUTPUT": True,
    }
    command = [sys.executable, "-m", "scrapy", "crawl", "bestfirst", "-a", f"seeds={','.join(UNIVERSITY_HOMES)}",
               "-a", "query=course syllabus lecture homework"]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    return command


def history_lines(folder: Path) -> int:
    path = folder / "history.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


def kill_after(command: list[str], folder: Path, pages: int) -> None:
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603
    deadline = time.monotonic() + 120
    while history_lines(folder) < pages:  # wait for the condition, not for a time
        assert process.poll() is None, "the crawl ended before it could be killed"
        assert time.monotonic() < deadline, "the crawl did not get that far"
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()


def test_sigkill_then_resume_loses_nothing(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    folder, jobdir = tmp_path / "out", tmp_path / "job"
    command = crawl_command(webkb_replay.proxy_url, folder, jobdir, 10_000)
    kill_after(command, folder, 120)
    before = FrontierState(jobdir)
    fetched_before = {
        json.loads(line)["canonical_url"]
        for line in (folder / "history.jsonl").read_text().splitlines()
        if line.endswith("}")
    }
    assert len(before.queued) > 100
    # Resume: the same command, to 150 more pages.
    completed = subprocess.run(crawl_command(webkb_replay.proxy_url, tmp_path / "elsewhere", jobdir, 150),  # noqa: S603
                               cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    after = FrontierState(jobdir)
    history = [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()]
    fetched = [record["canonical_url"] for record in history]
    # Nothing queued before the kill is lost.
    lost = [key for key in before.queued if key not in fetched and key not in after.queued and not after.fetched(key)]
    assert lost == []
    # Pages fetched twice: only those in flight at the kill (leased, not acknowledged).
    twice = {key for key in fetched if fetched.count(key) > 1}
    assert twice <= before.queued
    assert len(twice) <= CONCURRENCY + 2
    assert not twice & {key for key in fetched_before if before.fetched(key)}
    # The outputs go on: one history, numbered on, a WARC that reads whole.
    assert [record["order"] for record in history] == list(range(1, len(history) + 1))
    assert not (tmp_path / "elsewhere").exists()
    from warcio.archiveiterator import ArchiveIterator

    with (folder / "crawl.warc.gz").open("rb") as f:  # reads whole: a torn record was cut
        archived = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f) if r.rec_type == "response"]
    recorded = [record["url"] for record in history if record["status"] is not None]
    # A kill between a page's history line and its WARC record leaves one without the other.
    assert len(set(recorded) - set(archived)) <= CONCURRENCY


def test_killed_and_resumed_crawl_keeps_its_budget_history_and_no_orphan_spill(
    webkb_replay: ReplayProcess, tmp_path: Path
) -> None:
    """A page budget is the crawl's, across resumes; the history
    records every page once though pages in flight at a kill are fetched
    again; the spill stores killed runs leave are removed on resume."""
    folder, jobdir, budget = tmp_path / "out", tmp_path / "job", 150

    def command() -> list[str]:
        return [*crawl_command(webkb_replay.proxy_url, folder, jobdir, 0),
                "-s", f"CLOSESPIDER_PAGECOUNT={budget}", "-s", "CONCURRENT_REQUESTS=16",
                "-s", "FOCUS_FRONTIER_MAX=40"]  # past 40 queued URLs the rest spill into the JOBDIR

    orphans = 0
    for pages in (40, 90):
        kill_after(command(), folder, pages)
        orphans += len(list(jobdir.glob("frontier-spill-*")))
    assert orphans >= 1  # the kills left spill stores behind
    completed = subprocess.run(command(), cwd=ROOT, capture_output=True, text=True, timeout=300)  # noqa: S603
    assert completed.returncode == 0, completed.stderr[-3000:]
    history = [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()]
    pages = [record["canonical_url"] for record in history]
    assert len(pages) == len(set(pages)), "a page recorded twice"
    assert [record["order"] for record in history] == list(range(1, len(history) + 1))
    # The budget counts pages answered over the three runs, to the page.
    assert sum(record["status"] is not None for record in history) == budget
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["crawl_pages_fetched"] == len(history) and summary["pages_fetched"] < len(history)
    assert list(jobdir.glob("frontier-spill-*")) == []
