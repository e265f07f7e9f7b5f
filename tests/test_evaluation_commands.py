"""`scrapy topics` and `scrapy evaluate` on real crawls of the replayed WebKB."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

from bench.runner import CrawlJob, Variant, run_crawl_job
from crawlproject.evaluation.topics import read_topics
from crawlproject.replay.process import ReplayProcess
from tests.conftest import ROOT, WEBKB_LABELS, WEBKB_WARC


def scrapy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603
        [sys.executable, "-m", "scrapy", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_topics_then_crawls_then_evaluate(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    topics_file = tmp_path / "topics.jsonl"
    done = scrapy("topics", "--warc", str(WEBKB_WARC), "--labels", str(WEBKB_LABELS), "-o", str(topics_file))
    assert done.returncode == 0, done.stderr[-2000:]
    topics = {t.id: t for t in read_topics(topics_file)}
    assert len(topics) >= 20 and "course" in topics and "course-cornell" in topics
    chosen = [topics["course-washington"], topics["faculty-texas"]]
    folders = []
    for topic in chosen:
        for strategy in ("breadth-first", "best-first", "path-oracle"):
            job = CrawlJob(Variant.parse(strategy), topic, 1, 120, tmp_path / topic.id / strategy)
            completed = run_crawl_job(job, webkb_replay.proxy_url, WEBKB_WARC, WEBKB_LABELS)
            assert completed.returncode == 0, completed.stderr[-2000:]
            folders.append(str(job.folder))
    report = tmp_path / "report" / "report.md"
    done = scrapy(
        "evaluate", "--warc", str(WEBKB_WARC), "--labels", str(WEBKB_LABELS), "--topics", str(topics_file),
        "--budgets", "60,120", "-o", str(tmp_path / "eval.json"), "--report", str(report), *folders,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((tmp_path / "eval.json").read_text())
    assert len(result["crawls"]) == 6
    rows = result["summary"]["task1"]["120"]
    assert rows["path-oracle"]["harvest_rate"]["mean"] > rows["breadth-first"]["harvest_rate"]["mean"]
    assert rows["best-first"]["gap_closed"]["n"] == 2
    lengths = [c["at"]["120"]["pages"] for c in result["crawls"] if c["strategy"] == "best-first"]
    assert rows["best-first"]["pages_median"] == statistics.median(lengths) > 60
    assert result["summary"]["task1"]["60"]["best-first"]["pages_median"] == 60
    text = report.read_text()
    assert (
        f"| best-first | 2 | {rows['best-first']['pages_median']:.0f} |" in text
        and (report.parent / "report-task1-harvest.png").stat().st_size > 1000
    )


def test_evaluate_refuses_a_folder_that_is_not_a_topic_crawl(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text("{}")
    (tmp_path / "t.jsonl").write_text("")
    done = scrapy("evaluate", "--warc", str(WEBKB_WARC), "--labels", str(WEBKB_LABELS), "--topics",
                  str(tmp_path / "t.jsonl"), "-o", str(tmp_path / "e.json"), str(tmp_path))
    assert done.returncode != 0 and "topic_id" in done.stderr


def test_variants_name_a_strategy_with_settings() -> None:
    variant = Variant.parse("bfs16=best-first:FOCUS_BATCH_SIZE=16;FOCUS_FRONTIER_MAX=256")
    assert variant == Variant("bfs16", "best-first", (("FOCUS_BATCH_SIZE", "16"), ("FOCUS_FRONTIER_MAX", "256")))
    assert Variant.parse("shark-search") == Variant("shark-search", "shark-search", ())
    import pytest

    with pytest.raises(ValueError, match="unknown strategy"):
        Variant.parse("x=nope")
