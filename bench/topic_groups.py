"""A quality run's figures split by kind of topic: *site-bound* topics (the
seeds all lie on one registered domain, as "the course pages of this
university") against topics whose seeds span sites (see
crawlproject.evaluation.models.value_scope_of — the same rule decides how the
benchmark's link-value models count targets).

Reads a finished ``bench/quality.py`` run (its eval.json and topics.jsonl,
and its crawls' history when they are still there) and prints, per task,
strategy and group: mean target recall and harvest rate at two budgets, and
the median share of the crawl's status-200 pages that lie off every
target's host. Writes nothing but to standard output unless --write names a
BENCHMARKS.md section.

    .venv/bin/python bench/topic_groups.py --results bench/results/lookahead-webkb-per-site
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import write_section  # noqa: E402
from crawlproject.evaluation.evaluate import read_crawl  # noqa: E402
from crawlproject.evaluation.models import value_scope_of  # noqa: E402
from crawlproject.evaluation.topics import Topic, read_topics  # noqa: E402
from crawlproject.urls import host_of  # noqa: E402

GROUPS = {"domain": "site-bound", "any": "spanning sites"}


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
                    f"| {mean(small, 'target_recall')} | {mean(large, 'harvest_rate')} | {mean(large, 'target_recall')} "
                    f"| {off} |"
                )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, required=True, help="a bench/quality.py results folder")
    parser.add_argument("--budgets", default="500,1000", help="two budgets (status-200 pages) of the run")
    parser.add_argument("--write", default="", help="BENCHMARKS.md section to write the table to")
    args = parser.parse_args()
    small, large = (int(b) for b in args.budgets.split(","))
    body = table(args.results, (small, large))
    print(body)
    if args.write:
        command = " ".join(["`.venv/bin/python", "bench/topic_groups.py", *sys.argv[1:]]) + "`"
        write_section(args.write, f"### {args.results.name} by kind of topic\n\nCommand: {command}\n\n{body}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
