"""One writer per durable store (crawlproject.store_lock): a crawl, a refresh,
an index or a model started a second time on the same store refuses in one
line and exit code 2, naming the holder, and changes no byte of the first's
files; a holder killed leaves nothing that stops the next start."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import redis

from crawlproject.models.modelfile import load_model, save_model
from crawlproject.replay.process import ReplayProcess
from crawlproject.store_lock import StoreInUse, lock_dir, lock_file
from tests.conftest import FAST_REPLAY_SETTINGS, ROOT, UNIVERSITY_HOMES

BUDGET = 120


def crawl(proxy: str, tmp_path: Path, jobdir: bool = True, seeds: list[str] = UNIVERSITY_HOMES,
          extra: dict[str, Any] | None = None) -> list[str]:
    """A polite enough crawl to be caught running (a few pages a second)."""
    settings = {**FAST_REPLAY_SETTINGS, "FOCUS_REPLAY_PROXY": proxy, "FOCUS_OUTPUT_DIR": tmp_path / "out",
                "CLOSESPIDER_PAGECOUNT": BUDGET, "DOWNLOAD_DELAY": 0.05, "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
                **({"JOBDIR": tmp_path / "job"} if jobdir else {}), **(extra or {})}
    command = [sys.executable, "-m", "scrapy", "crawl", "bestfirst", "-a", f"seeds={','.join(seeds)}",
               "-a", "query=course syllabus lecture homework"]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    return command


def started(command: list[str], folder: Path, pages: int) -> subprocess.Popen[bytes]:
    """The crawl, once its history holds *pages* pages (waited for as a condition)."""
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603
    history, deadline = folder / "history.jsonl", time.monotonic() + 120
    while not history.exists() or history.read_bytes().count(b"\n") < pages:
        assert process.poll() is None, "the crawl ended before it got that far"
        assert time.monotonic() < deadline, "the crawl did not get that far"
        time.sleep(0.02)
    return process


def fingerprints(*folders: Path) -> dict[str, str]:
    """Every file under *folders*, by its bytes."""
    return {str(path): hashlib.sha256(path.read_bytes()).hexdigest()
            for folder in folders for path in sorted(folder.rglob("*")) if path.is_file()}


def test_a_second_crawl_on_the_same_jobdir_refuses_and_touches_nothing(webkb_replay: ReplayProcess,
                                                                      tmp_path: Path) -> None:
    command = crawl(webkb_replay.proxy_url, tmp_path)
    first = started(command, tmp_path / "out", 10)
    os.kill(first.pid, signal.SIGSTOP)  # held still: any byte changed now is the second start's
    try:
        before = fingerprints(tmp_path / "out", tmp_path / "job")
        second = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)  # noqa: S603
        after = fingerprints(tmp_path / "out", tmp_path / "job")
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert second.returncode == 2, second.stderr[-2000:]
    [line] = [line for line in second.stderr.splitlines() if "error:" in line]
    assert f"JOBDIR '{tmp_path / 'job'}' is in use by PID {first.pid}" in line, line
    assert "(scrapy crawl bestfirst)" in line, line  # the holder's command, as the user typed it
    assert after == before
    assert first.wait(timeout=120) == 0
    history = [json.loads(row) for row in (tmp_path / "out" / "history.jsonl").read_text().splitlines()]
    assert len(history) == BUDGET and len({row["canonical_url"] for row in history}) == BUDGET


def test_a_second_crawl_into_the_same_folder_refuses(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    command = crawl(webkb_replay.proxy_url, tmp_path, jobdir=False)
    first = started(command, tmp_path / "out", 5)
    second = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)  # noqa: S603
    assert second.returncode == 2
    assert f"FOCUS_OUTPUT_DIR '{tmp_path / 'out'}' is in use by PID {first.pid}" in second.stderr
    assert first.wait(timeout=120) == 0


def test_after_a_sigkill_the_next_start_resumes_and_says_so(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    command = crawl(webkb_replay.proxy_url, tmp_path)
    first = started(command, tmp_path / "out", 20)
    first.send_signal(signal.SIGKILL)
    first.wait()
    resumed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240)  # noqa: S603
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    log = resumed.stderr + "".join(path.read_text() for path in (tmp_path / "out").glob("*.log"))
    assert f"was left by PID {first.pid}" in log and "going on" in log
    history = [json.loads(row) for row in (tmp_path / "out" / "history.jsonl").read_text().splitlines()]
    urls = [row["canonical_url"] for row in history]
    assert len(set(urls)) == BUDGET  # the budget to the page, the earlier run's pages counted once


def test_the_lock_names_its_holder_and_a_dead_holder_is_noticed(tmp_path: Path) -> None:
    lock = lock_dir(tmp_path / "store", "the store")
    with pytest.raises(StoreInUse, match=rf"the store is in use by PID {os.getpid()}, started .*: a second writer"):
        lock_dir(tmp_path / "store", "the store")
    lock.release()
    again = lock_dir(tmp_path / "store", "the store")  # released in order: nothing to say
    again.release()
    # a holder that ended without letting go (killed): its record is still in the file, its flock is not
    record = {"pid": 999999, "started": "2026-12-01T00:00:00+00:00", "command": "scrapy crawl x"}
    (tmp_path / "store" / ".crawlproject.lock").write_text(json.dumps(record) + "\n")
    lock_dir(tmp_path / "store", "the store").release()


def test_a_refresh_a_night_and_an_index_refuse_a_store_in_use(tmp_path: Path, webkb_replay: ReplayProcess) -> None:
    """The refresh's repository, the index of `scrapy index` and `scrapy
    symbiosis`, and `scrapy train -o`: held by this process, each command
    started on it says so in one line and exits 2, writing nothing."""
    repository, index = tmp_path / "repository", tmp_path / "index"
    commands = {
        "repository": [sys.executable, "-m", "scrapy", "crawl", "refresh", "-a", f"repository={repository}",
                       "-s", f"FOCUS_OUTPUT_DIR={tmp_path / 'refresh-out'}"],
        "index": [sys.executable, "-m", "scrapy", "index", str(repository), "--index", str(index)],
        "night": [sys.executable, "-m", "scrapy", "symbiosis", "--index", str(index), "--queries", str(tmp_path / "q")],
        "model": [sys.executable, "-m", "scrapy", "train", "--examples", str(tmp_path / "examples.txt"),
                  "-o", str(tmp_path / "model.npz"), "-s", f"FOCUS_REPLAY_PROXY={webkb_replay.proxy_url}"],
    }
    (tmp_path / "q").write_text("course\n")
    (tmp_path / "examples.txt").write_text("\n".join(UNIVERSITY_HOMES) + "\n")
    (index / "collections").mkdir(parents=True)
    (index / "current").write_text("collections/none\n")
    locks = [lock_dir(repository, "the repository"), lock_dir(index, "the index"),
             lock_file(tmp_path / "model.npz", "the model")]
    try:
        before = fingerprints(tmp_path)
        for name, command in commands.items():
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)  # noqa: S603
            assert done.returncode == 2, (name, done.stderr[-2000:])
            assert f"in use by PID {os.getpid()}" in done.stderr, (name, done.stderr[-2000:])
        assert fingerprints(tmp_path) == before
    finally:
        for lock in locks:
            lock.release()


def test_a_model_is_never_read_half_written(tmp_path: Path) -> None:
    """A reader loading the model while it is written again and again sees
    a whole model every time (written aside, renamed over it)."""
    path, arrays = tmp_path / "topic.npz", {"weights": np.arange(200_000, dtype=float)}
    save_model(path, "test", {"round": 0}, arrays)
    seen, failures = [], []

    def read() -> None:
        while len(seen) < 200:
            try:
                meta, loaded = load_model(path, "test", "train")
                seen.append(meta["round"])
                assert loaded["weights"].shape == (200_000,)
            except Exception as exc:  # noqa: BLE001 (what the reader met is the finding)
                failures.append(exc)
                return

    reader = threading.Thread(target=read)
    reader.start()
    for round_ in range(1, 40):
        save_model(path, "test", {"round": round_}, arrays)
    reader.join(timeout=60)
    assert not failures and len(seen) == 200
    assert not list(tmp_path.glob(".*tmp"))  # nothing left aside


def test_two_crawls_that_name_one_redis_frontier_refuse_the_second(redis_server: Any, webkb_replay: ReplayProcess,
                                                                   tmp_path: Path) -> None:
    """Workers of one crawl share a frontier on purpose; another crawl (other
    seeds) naming the same key stops before it touches it; a worker of the
    first crawl, or one that brings no seeds of its own, joins."""
    shared = {"FOCUS_FRONTIER_BACKEND": "crawlproject.distributed.frontier.RedisFrontier",
              "REDIS_URL": redis_server.url, "FOCUS_REDIS_KEY": "one-writer:frontier", "SCHEDULER_PERSIST": True,
              "DOWNLOAD_DELAY": 0, "CLOSESPIDER_PAGECOUNT": 20}
    redis.Redis.from_url(redis_server.url).delete("one-writer:frontier:signature", "one-writer:frontier:crawl")
    first = subprocess.run(crawl(webkb_replay.proxy_url, tmp_path / "a", jobdir=False, seeds=UNIVERSITY_HOMES[:2],
                                 extra=shared), cwd=ROOT, capture_output=True, text=True, timeout=240)  # noqa: S603
    assert first.returncode == 0, first.stderr[-2000:]
    other = subprocess.run(crawl(webkb_replay.proxy_url, tmp_path / "b", jobdir=False, seeds=UNIVERSITY_HOMES[2:],
                                 extra=shared), cwd=ROOT, capture_output=True, text=True, timeout=240)  # noqa: S603
    assert other.returncode == 2
    assert "the shared frontier one-writer:frontier holds another crawl" in other.stderr and "seeds" in other.stderr
    assert not (tmp_path / "b" / "out" / "history.jsonl").exists()
    again = subprocess.run(crawl(webkb_replay.proxy_url, tmp_path / "c", jobdir=False, seeds=UNIVERSITY_HOMES[:2],
                                 extra=shared), cwd=ROOT, capture_output=True, text=True, timeout=240)  # noqa: S603
    assert again.returncode == 0, again.stderr[-2000:]
