"""Run one crawl of one topic, for real (`scrapy crawl` in a child process)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.common import ROOT, run_child
from bench.topic_models import home_of_topic
from crawlproject.evaluation.topics import Topic
from crawlproject.replay import LOOPBACK_SPEED

#: strategy name (as reports show it) → spider name
SPIDERS = {
    "breadth-first": "breadthfirst",
    "best-first": "bestfirst",
    "shark-search": "sharksearch",
    "fish-search": "fishsearch",
    "random": "random",
    "oracle": "oracle",
    "path-oracle": "pathoracle",
    "focused": "focused",
    "context-graph": "contextgraph",
    "link-value": "linkvalue",
    "link-learner": "linklearner",
    # judged by a model trained from the topic's example URLs (bench.quality --examples N)
    "focused-examples": "focused",
    "link-learner-examples": "linklearner",
    "best-first-examples": "bestfirst",
    "shark-search-examples": "sharksearch",
    "infospiders": "infospiders",
}
#: strategies that need a trained taxonomy model (bench.topic_models)
NEEDS_MODEL = frozenset({"focused", "context-graph", "link-value"})
#: strategies that crawl with a model trained from the topic's example URLs
NEEDS_EXAMPLES = frozenset(
    {"focused-examples", "link-learner-examples", "best-first-examples", "shark-search-examples"}
)


@dataclass(frozen=True)
class Variant:
    """A strategy with settings of its own, under a label for reports:
    ``bfs16=best-first:FOCUS_BATCH_SIZE=16;FOCUS_FRONTIER_MAX=256``."""

    label: str
    strategy: str
    settings: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, text: str) -> Variant:
        label, _, spec = text.partition("=") if "=" in text.split(":")[0] else ("", "", text)
        strategy, _, settings = spec.partition(":")
        if strategy not in SPIDERS:
            raise ValueError(f"unknown strategy {strategy!r} in {text!r}; known: {', '.join(SPIDERS)}")
        pairs = tuple(
            tuple(pair.split("=", 1)) for pair in settings.split(";") if pair.strip()
        )
        if any(len(pair) != 2 for pair in pairs):
            raise ValueError(f"settings of {text!r} must be NAME=VALUE;NAME=VALUE")
        return cls(label or strategy, strategy, pairs)  # type: ignore[arg-type]


@dataclass(frozen=True)
class CrawlJob:
    variant: Variant
    topic: Topic
    task: int
    budget: int
    folder: Path
    model: Path | None = None  # the topic's model (taxonomy, context graph, link value)
    good: str = ""  # the good category to crawl with (default: the topic's)
    #: what the budget counts: pages answered with status 200 ("ok"), or every fetch
    axis: str = "ok"
    #: which sites the crawl may go to (crawlproject.policy.scope): any, domain or host of the seeds
    scope: str = "any"

    @property
    def strategy(self) -> str:
        return self.variant.label


def crawls_to_run(jobs: list[CrawlJob], reuse: bool) -> list[CrawlJob]:
    """The jobs to crawl: all, or (*reuse*) those without a finished crawl.
    A folder a job to run already has (an earlier run's crawl, or one cut
    short) is cleared first: a crawl refuses a folder holding another."""
    todo = [job for job in jobs if not (reuse and finished(job.folder))]
    if len(todo) < len(jobs):
        print(f"  reusing {len(jobs) - len(todo)} finished crawls", flush=True)
    stale = [job.folder for job in todo if job.folder.exists()]
    if stale:
        print(f"  replacing {len(stale)} crawl folders of an earlier run", flush=True)
        for folder in stale:
            shutil.rmtree(folder)
    return todo


def finished(folder: Path) -> bool:
    """Whether *folder* holds a crawl that ran to its end: a crawl stopped by a
    signal (SIGTERM, Ctrl-C) writes its summary too, with reason ``shutdown``."""
    try:
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return summary.get("finish_reason") not in (None, "shutdown")


def run_crawl_job(
    job: CrawlJob, proxy: str, warc: Path, labels: Path, extra_settings: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    folder = job.folder
    folder.mkdir(parents=True, exist_ok=True)
    seeds = folder / "seeds.txt"
    seeds.write_text("\n".join(job.topic.start(job.task)) + "\n", encoding="utf-8")
    relevant = job.topic.category
    if job.topic.members:  # a topic spread over sites: its pages, named one by one
        labels = folder / "topic-labels.tsv"
        labels.write_text("".join(f"{url}\trelevant\n" for url in job.topic.members), encoding="utf-8")
        relevant = "relevant"
    settings = {
        **LOOPBACK_SPEED,
        "FOCUS_REPLAY_PROXY": proxy,
        **({"FOCUS_OK_PAGECOUNT": str(job.budget)} if job.axis == "ok" else {"CLOSESPIDER_ITEMCOUNT": str(job.budget)}),
        "FOCUS_LABELS": str(labels),
        "FOCUS_RELEVANT": relevant,
        "FOCUS_SCOPE": job.scope,
        "FOCUS_HOME": ",".join(home_of_topic(job.topic)),
        "FOCUS_ORACLE_WARC": str(warc),
        "FOCUS_CACHE_DIR": str(ROOT / ".cache"),
        "FOCUS_OUTPUT_DIR": str(folder),
        "FOCUS_STORE_PAGES": "false",
        "LOGSTATS_INTERVAL": "0",
        "LOG_LEVEL": "WARNING",
        "LOG_FILE": str(folder / "crawl.log"),
        # near-duplicates off, as when the earlier figures were measured (a variant may ask for them)
        "FOCUS_NEAR_DUPLICATES": "0",
        **dict(job.variant.settings),
        **(extra_settings or {}),
    }
    command = [
        sys.executable, "-m", "scrapy", "crawl", SPIDERS[job.variant.strategy],
        "-a", f"seeds={seeds}", "-a", f"query={job.topic.query}",
        "-a", f"topic_id={job.topic.id}", "-a", f"task={job.task}",
        "-a", f"strategy_label={job.variant.label}",
    ]
    if job.model is not None:
        command += ["-a", f"model={job.model}"]
        if job.variant.strategy == "focused":
            command += ["-a", f"good={job.good or job.topic.category}"]
        # an examples model names its own good category ("relevant")
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    return run_child(command, timeout=1800)
