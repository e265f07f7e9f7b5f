"""Frictions a new user of the add-on met, each as it was met:
a misspelled setting asked for, a dashboard port taken, a moved import
path, one harvest figure, the demo's plot and table counting alike."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from crawlproject.dashboard.attach import merge
from crawlproject.dashboard.watch import CrawlWatch
from tests.conftest import ROOT, UNIVERSITY_HOMES, run_crawl


def test_a_misspelled_setting_asked_for_gets_a_did_you_mean() -> None:
    asked = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "scrapy", "settings", "--get", "FOCUS_DASHBORD_PORT"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert asked.returncode == 2
    assert "unknown setting FOCUS_DASHBORD_PORT; did you mean FOCUS_DASHBOARD_PORT?" in asked.stderr
    known = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "scrapy", "settings", "--get", "FOCUS_DASHBOARD_PORT"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert known.returncode == 0 and known.stdout.strip() == "0"


def test_a_dashboard_port_in_use_stops_the_crawl_in_one_line(webkb_replay: object, tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        result = run_crawl("bestfirst", tmp_path / "crawl", UNIVERSITY_HOMES[:1], webkb_replay.proxy_url,  # type: ignore[attr-defined]
                           query="course", settings={"FOCUS_DASHBOARD_PORT": port, "CLOSESPIDER_PAGECOUNT": 5})
    finally:
        taken.close()
    assert result.returncode == 2, result.log[-2000:]
    assert f"FOCUS_DASHBOARD_PORT={port}: cannot listen on 127.0.0.1:{port}" in result.log
    assert "Traceback" not in result.log


def test_the_redis_frontier_s_old_path_works_with_a_deprecation_warning() -> None:
    from scrapy.exceptions import ScrapyDeprecationWarning

    from crawlproject.distributed.frontier import RedisFrontier

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from crawlproject.frontier.redis import RedisFrontier as old  # noqa: N813
    assert old is RedisFrontier
    assert any(
        issubclass(w.category, ScrapyDeprecationWarning) and "crawlproject.distributed.frontier" in str(w.message)
        for w in caught
    )
    import crawlproject.frontier.redis as moved

    with pytest.raises(AttributeError):
        moved.Nothing  # noqa: B018


def test_the_dashboard_leads_with_the_harvest_the_progress_line_shows() -> None:
    """With FOCUS_LABELS, one harvest everywhere: the labels' (the judge's
    verdicts are shown beside it, named as such)."""
    relevant = {"http://a/1", "http://a/2"}
    watch = CrawlWatch("w", relevant_label=relevant.__contains__)
    for i in range(1, 7):  # every page judged relevant, two of six truly relevant
        watch.page({"canonical_url": f"http://a/{i}", "status": 200, "relevance": 0.9})
    pages = watch.snapshot({}, [], {})["pages"]
    assert (pages["harvest"], pages["harvest_by"], pages["judged_harvest"]) == (round(2 / 6, 4), "labels", 1.0)
    merged = merge([watch.snapshot({}, [], {}), watch.snapshot({}, [], {})])["pages"]
    assert (merged["harvest"], merged["harvest_by"]) == (round(2 / 6, 4), "labels")
    judged_only = CrawlWatch("w")
    judged_only.page({"canonical_url": "http://a/1", "status": 200, "relevance": 0.9})
    assert judged_only.snapshot({}, [], {})["pages"]["harvest_by"] == "judge"


def test_the_demo_plot_counts_the_pages_its_table_counts(tmp_path: Path) -> None:
    """A near-copy of a course page fetched before is not a course page found
    (the summary's count, the table's): the plot's curve agrees."""
    import json

    from scripts.demo import relevant_curve

    rows = [
        {"canonical_url": "http://u/c1", "status": 200},
        {"canonical_url": "http://u/c1-mirror", "status": 200, "near_duplicate_of": "http://u/c1"},
        {"canonical_url": "http://u/dead", "status": 404},
        {"canonical_url": "http://u/c2", "status": 200},
    ]
    (tmp_path / "history.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    labels = {"http://u/c1": "course", "http://u/c1-mirror": "course", "http://u/c2": "course/cs101"}
    assert relevant_curve(tmp_path, labels) == [1, 1, 1, 2]


def test_train_from_examples_says_the_replay_is_missing_not_the_examples(tmp_path: Path) -> None:
    trained = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "scrapy", "train", "--examples", "http://www.cs.cornell.edu/", "-o",
         str(tmp_path / "model.npz"), "-s", f"FOCUS_REPLAY_WARC={tmp_path / 'no-such.warc.gz'}"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert trained.returncode == 2
    assert "FOCUS_REPLAY_WARC: no such file" in trained.stderr
    assert "no relevant example page" not in trained.stderr


def test_a_plain_spiders_start_url_on_loopback_is_a_warning_and_a_failed_crawl(tmp_path: Path) -> None:
    """Under the add-on a plain spider whose start URL is on
    127.0.0.1 fetched nothing, said so in one INFO line, and exited 0 —
    where stock Scrapy fetches it. Now a WARNING names the setting that
    opens the range, and the crawl that fetched nothing for it exits 1."""
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = plainproject.settings\n")
    package = tmp_path / "plainproject"
    (package / "spiders").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "settings.py").write_text(
        'SPIDER_MODULES = ["plainproject.spiders"]\nADDONS = {"crawlproject.addon.FocusedCrawlAddon": 0}\n')
    (package / "spiders" / "__init__.py").write_text("")
    (package / "spiders" / "plain.py").write_text(
        "import scrapy\n\n\nclass Plain(scrapy.Spider):\n    name = 'plain'\n"
        "    start_urls = ['http://127.0.0.1:9/']\n\n    def parse(self, response):\n        yield "
        "{'url': response.url}\n"
    )
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "scrapy", "crawl", "plain"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}:{ROOT}"},
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert "WARNING: Refused URL (loopback address): http://127.0.0.1:9/" in done.stderr
    assert "FOCUS_ALLOWED_NETWORKS=127.0.0.0/8" in done.stderr
    assert "scrapy crawl: error: no page was fetched: 1 URL refused (loopback address)" in done.stderr
    assert "Traceback" not in done.stderr
