"""Run one crawl of one topic, for real (`scrapy crawl` in a child process)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from crawlproject.evaluation.topics import Topic

ROOT = Path(__file__).resolve().parents[2]

#: strategy name (as reports show it) → spider name
SPIDERS = {
    "breadth-first": "breadthfirst",
    "best-first": "bestfirst",
    "random": "random",
    "oracle": "oracle",
    "path-oracle": "pathoracle",
}


@dataclass(frozen=True)
class CrawlJob:
    strategy: str
    topic: Topic
    task: int
    budget: int
    folder: Path


def run_crawl_job(
    job: CrawlJob, proxy: str, warc: Path, labels: Path, extra_settings: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    folder = job.folder
    folder.mkdir(parents=True, exist_ok=True)
    seeds = folder / "seeds.txt"
    seeds.write_text("\n".join(job.topic.start(job.task)) + "\n", encoding="utf-8")
    settings = {
        "FOCUS_REPLAY_PROXY": proxy,
        "CLOSESPIDER_ITEMCOUNT": str(job.budget),
        "FOCUS_LABELS": str(labels),
        "FOCUS_RELEVANT": job.topic.category,
        "FOCUS_ORACLE_WARC": str(warc),
        "FOCUS_CACHE_DIR": str(ROOT / ".cache"),
        "FOCUS_OUTPUT_DIR": str(folder),
        "FOCUS_STORE_PAGES": "false",
        "FOCUS_PROGRESS_INTERVAL": "0",
        "LOG_LEVEL": "WARNING",
        "LOG_FILE": str(folder / "crawl.log"),
        **(extra_settings or {}),
    }
    command = [
        sys.executable, "-m", "scrapy", "crawl", SPIDERS[job.strategy],
        "-a", f"seeds={seeds}", "-a", f"query={job.topic.query}",
        "-a", f"topic_id={job.topic.id}", "-a", f"task={job.task}",
    ]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)  # noqa: S603
