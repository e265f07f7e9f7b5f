"""A quality run's figures split by kind of topic: *site-bound* topics (the
seeds all lie on one registered domain, as "the course pages of this
university") against topics whose seeds span sites (see
bench.topic_models.value_scope_of — the same rule decides how the
benchmark's link-value models count targets).

Reads a finished ``bench.quality`` run's data (its eval.json and
topics.jsonl in .cache/bench/SECTION, and its crawls' history when they are
still there; run the section's command again to make them) and prints, per task,
strategy and group: mean target recall and harvest rate at two budgets, and
the median share of the crawl's status-200 pages that lie off every
target's host. Then, per topic, each strategy's search length to half the
targets in both tasks beside the targets its host-disjoint training graph
held (from the run's link-value models, when they are still there), and how
many topics each strategy reaches half of in at most a third of
breadth-first's pages. Writes nothing but to standard output unless --write
names a BENCHMARKS.md section.

    .venv/bin/python -m bench.topic_groups --section lookahead-webkb-per-site
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from bench.common import write_section
from bench.quality import data_folder
from bench.topic_models import value_scope_of
from crawlproject.evaluation.evaluate import read_crawl
from crawlproject.evaluation.topics import Topic, read_topics
from crawlproject.models.link_value_model import LinkValueModel
from crawlproject.models.taxonomy_classifier import ModelError
from crawlproject.web.urls import host_of

GROUPS = {"domain": "site-bound", "any": "spanning sites"}
BASELINE = "breadth-first"


def off_target_hosts(folder: Path, topic: Topic, budget: int) -> float | None:
    """Share of the crawl's first *budget* status-200 pages on no target's
    host, in the evaluator's fetch order; None when the crawl is gone."""
    if not (folder / "history.jsonl").is_file():
        return None
    hosts = {host_of(url) for url in [*topic.seeds, *topic.targets]}
    pages = [fetch.url for fetch in read_crawl(folder).fetches if fetch.ok][:budget]
    if not pages:
        return None
    return sum(host_of(url) not in hosts for url in pages) / len(pages)


def table(results: Path, budgets: tuple[int, int]) -> str:
    evaluation = json.loads((results / "eval.json").read_text(encoding="utf-8"))
    topics = {t.id: t for t in read_topics(results / "topics.jsonl")}
    group_of = {tid: GROUPS[value_scope_of(t)] for tid, t in topics.items()}
    cells: dict[tuple[int, str, str], list[dict[str, Any]]] = {}
    for crawl in evaluation["crawls"]:
        key = (crawl["task"], crawl["strategy"], group_of[crawl["topic_id"]])
        cells.setdefault(key, []).append(crawl)
    small, large = budgets
    lines = [
        f"Topics: {sum(g == GROUPS['domain'] for g in group_of.values())} site-bound "
        f"(seeds on one registered domain), {sum(g == GROUPS['any'] for g in group_of.values())} spanning sites. "
        f"Mean over the group's topics, %; off-target hosts: median share of the first {large} status-200 pages "
        "on no target's host.",
        "",
        f"| task | group | strategy | topics | harvest @{small} | target recall @{small} | harvest @{large} "
        f"| target recall @{large} | off-target hosts @{large} |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    strategies = list(dict.fromkeys(crawl["strategy"] for crawl in evaluation["crawls"]))
    for task in sorted({crawl["task"] for crawl in evaluation["crawls"]}):
        for group in GROUPS.values():
            for strategy in strategies:
                crawls = cells.get((task, strategy, group), [])
                if not crawls:
                    continue

                def mean(budget: int, metric: str, crawls: list[dict[str, Any]] = crawls) -> str:
                    values = [c["at"][str(budget)][metric] for c in crawls if c["at"].get(str(budget))]
                    return f"{100 * statistics.fmean(values):.1f}" if values else "–"

                shares = [
                    share for c in crawls
                    if (share := off_target_hosts(Path(c["folder"]), topics[c["topic_id"]], large)) is not None
                ]
                off = f"{100 * statistics.median(shares):.0f}" if shares else "–"
                lines.append(
                    f"| {task} | {group} | {strategy} | {len(crawls)} | {mean(small, 'harvest_rate')} "
                    f"| {mean(small, 'target_recall')} | {mean(large, 'harvest_rate')} | "
                    f"{mean(large, 'target_recall')} "
                    f"| {off} |"
                )
    return "\n".join(lines)


def training_targets(results: Path, topic_id: str) -> str:
    """Targets in the topic's host-disjoint training graph, as its link-value
    model's report counts them ("–" when the run kept no such model)."""
    try:
        report = LinkValueModel.load(results / "models" / f"link-value-{topic_id}.npz").report
    except (ModelError, OSError):
        return "–"
    return str(report.get("targets", "–"))


def per_topic_table(results: Path, budget: int) -> str:
    """Search length to half the targets per topic, Task 1 / Task 2."""
    evaluation = json.loads((results / "eval.json").read_text(encoding="utf-8"))
    topics = {t.id: t for t in read_topics(results / "topics.jsonl")}
    length: dict[tuple[str, int, str], int | None] = {}
    for crawl in evaluation["crawls"]:
        at = crawl["at"].get(str(budget)) or {}
        length[crawl["topic_id"], crawl["task"], crawl["strategy"]] = at.get("search_length_50pct")
    strategies = list(dict.fromkeys(crawl["strategy"] for crawl in evaluation["crawls"]))
    tasks = sorted({crawl["task"] for crawl in evaluation["crawls"]})

    def shown(value: int | None) -> str:
        return "never" if value is None else str(value)

    lines = [
        f"Status-200 pages to half the topic's targets within {budget}, Task {' / Task '.join(map(str, tasks))} "
        "(never: not within the budget); training targets: the targets of the topic's host-disjoint training "
        "graph, the seeds among them (from the run's link-value models). Last row: topics where the strategy "
        f"reaches half in at most ⅓ of {BASELINE}'s pages (of those {BASELINE} reaches half of).",
        "",
        f"| topic | group | training targets | {' | '.join(strategies)} |",
        f"|---|---|---:|{'---:|' * len(strategies)}",
    ]
    for topic_id in sorted(topics, key=lambda t: (value_scope_of(topics[t]) == "any", t)):
        cells = [" / ".join(shown(length.get((topic_id, task, s))) for task in tasks) for s in strategies]
        lines.append(
            f"| {topic_id} | {GROUPS[value_scope_of(topics[topic_id])]} | {training_targets(results, topic_id)} "
            f"| {' | '.join(cells)} |"
        )
    counts = []
    for strategy in strategies:
        per_task = []
        for task in tasks:
            reached = fast = 0
            for topic_id in topics:
                base = length.get((topic_id, task, BASELINE))
                if base is None:
                    continue
                reached += 1
                value = length.get((topic_id, task, strategy))
                fast += value is not None and 3 * value <= base
            per_task.append(f"{fast}/{reached}")
        counts.append(" / ".join(per_task))
    lines.append(f"| ≤ ⅓ of {BASELINE}'s pages | | | {' | '.join(counts)} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--section", required=True, help="a bench.quality section (its data: .cache/bench/SECTION)")
    parser.add_argument("--budgets", default="500,1000", help="two budgets (status-200 pages) of the run")
    parser.add_argument("--write", default="", help="BENCHMARKS.md section to write the table to")
    args = parser.parse_args()
    small, large = (int(b) for b in args.budgets.split(","))
    results = data_folder(args.section)
    if not (results / "eval.json").is_file():
        raise SystemExit(
            f"no data for {args.section} in {results}: run its bench.quality command (BENCHMARKS.md) first"
        )
    body = table(results, (small, large)) + "\n\n" + per_topic_table(results, large)
    print(body)
    if args.write:
        command = " ".join(["`.venv/bin/python", "-m", "bench.topic_groups", *sys.argv[1:]]) + "`"
        write_section(args.write, f"### {args.section} by kind of topic\n\nCommand: {command}\n\n{body}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
