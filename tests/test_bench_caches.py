"""The benchmarks' caches measure the code a run is at: topic models and
link examples an earlier run made are reused only when the code that made
them is unchanged."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench import link_prior, topic_models
from tests.conftest import ROOT

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_models_trained_by_other_code_are_trained_anew(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "models"
    topic_models.models_folder(folder)
    (folder / "course-cornell.npz").write_bytes(b"a model")
    # The same code: the earlier run's models are kept (each train_* function reuses a file).
    assert (topic_models.models_folder(folder) / "course-cornell.npz").exists()
    # A change to the code that trains them: the folder is emptied.
    monkeypatch.setattr(topic_models, "code_stamp", lambda *modules: "another code")
    topic_models.models_folder(folder)
    assert not (folder / "course-cornell.npz").exists() and folder.is_dir()


def test_models_of_a_run_that_kept_no_stamp_are_trained_anew(tmp_path: Path) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "link-value-course-cornell.npz").write_bytes(b"a model of an older bench")
    (folder / "notes.txt").write_text("a person's")
    topic_models.models_folder(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt", "trained-by.txt"]  # only models go


def test_the_link_examples_cache_follows_the_code_that_makes_them(monkeypatch: pytest.MonkeyPatch) -> None:
    before = link_prior.examples_version()
    monkeypatch.setattr(link_prior, "code_stamp", lambda *modules: "0000beef")
    assert link_prior.examples_version() != before


def test_a_crawl_stopped_by_a_signal_is_crawled_anew_when_crawls_are_reused(tmp_path: Path) -> None:
    """SIGTERM stops a crawl gracefully, and it writes its summary: reason
    ``shutdown``. ``--reuse-crawls`` must not take it for a finished crawl."""
    import json

    from bench.runner import CrawlJob, Variant, crawls_to_run
    from crawlproject.evaluation.topics import Topic

    topic = Topic("t", "course", ["course"], ["http://a.test/"], [], [], 1)
    jobs = []
    for name, reason in (("done", "closespider_itemcount"), ("stopped", "shutdown"), ("none", None)):
        folder = tmp_path / name
        folder.mkdir()
        if reason is not None:
            (folder / "summary.json").write_text(json.dumps({"finish_reason": reason}))
        jobs.append(CrawlJob(Variant.parse("best-first"), topic, 1, 100, folder))
    assert [job.folder.name for job in crawls_to_run(jobs, reuse=True)] == ["stopped", "none"]
    assert not (tmp_path / "stopped").exists()  # cleared for the new crawl


def test_a_benchmark_stopped_with_sigterm_stops_the_crawls_it_runs(tmp_path: Path) -> None:
    """A benchmark killed with SIGTERM left its crawls running: they wrote
    into folders the next run had cleared (20 crawls of quality-docsweb
    failed so). Its children now stop with it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import psutil

    script = (
        "import sys, threading, time\n"
        "from bench.common import run_child, stop_children_on_exit\n"
        "stop_children_on_exit()\n"
        "threading.Thread(target=run_child, args=([sys.executable, '-c', 'import time; time.sleep(300)'], 600),"
        " daemon=True).start()\n"
        "time.sleep(300)\n"
    )
    bench = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)  # noqa: S603
    try:
        deadline = time.monotonic() + 60
        while not psutil.Process(bench.pid).children():  # the crawl has started
            assert bench.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        children = psutil.Process(bench.pid).children()
        os.kill(bench.pid, signal.SIGTERM)
        assert bench.wait(timeout=30) == 128 + signal.SIGTERM
        _, alive = psutil.wait_procs(children, timeout=30)
        assert alive == []
    finally:
        bench.kill()


#: a benchmark that runs three crawls one at a time: each child marks that it started, then waits
_QUEUED_CRAWLS = """
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from bench.common import run_child, stop_children_on_exit

stop_children_on_exit()
child = "import pathlib, sys, time; pathlib.Path(sys.argv[1]).touch(); time.sleep(60)"
with ThreadPoolExecutor(1) as pool:  # as bench.quality: the main thread waits for each crawl in turn
    futures = [pool.submit(run_child, [sys.executable, "-c", child, f"{sys.argv[1]}/started-{i}"], 120)
               for i in range(3)]
    for future in as_completed(futures):
        future.result()
"""


def test_a_benchmark_stopped_starts_none_of_its_queued_crawls(tmp_path: Path) -> None:
    # A bench.quality run killed with crawls queued went on starting them one by one, into
    # the folders the next run had cleared (two crawls writing one folder).
    import signal
    import subprocess
    import sys
    import time

    bench = subprocess.Popen([sys.executable, "-c", _QUEUED_CRAWLS, str(tmp_path)], cwd=ROOT)  # noqa: S603
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started-0").exists():
            assert time.monotonic() < deadline and bench.poll() is None, "the first crawl never started"
            time.sleep(0.05)
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(timeout=30) != 0
    finally:
        bench.kill()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["started-0"]
