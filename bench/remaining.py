"""How much is left (issue 37): the crawl's own estimate of the relevant
pages behind its queued links, against the truth from the labels.

    .venv/bin/python -m bench.remaining --sections prior-quality-docsweb,prior-quality-webkb [--at 100,300]

Reads the crawls a bench.quality run left under .cache/bench/SECTION/crawls
(crawls whose summary.json has ``remaining_history``: the estimate every 50
fetches, made with the verdicts of FOCUS_REMAINING_FROM — in these runs the
labels', so that the estimator is measured apart from the judge). At each
checkpoint it compares the estimate with two truths: the relevant pages
behind the links found and not yet fetched (what it estimates: links.tsv of
the pages fetched so far, less the pages fetched), and every relevant page
of the corpus not yet found (what a user would like to know: the estimate
is a floor of it). Reported: the share of crawls whose 90 % interval holds
the truth, and the median absolute error of the estimate (pages). Crawls
whose estimate came from their judge are left out.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.common import write_section
from bench.quality import data_folder
from crawlproject.evaluation.topics import read_topics


def truths(folder: Path, checkpoints: list[int], relevant: set[str]) -> dict[int, tuple[int, int]]:
    """At each of *checkpoints* (fetches): (relevant pages behind the links
    found and not fetched, relevant pages not found). The crawl's files are
    read once."""
    history = [json.loads(line) for line in (folder / "history.jsonl").read_text(encoding="utf-8").splitlines()]
    order = {}
    for number, record in enumerate(history, 1):
        order.setdefault(record["canonical_url"], number)
    links = [parts for parts in (line.split("\t") for line in (folder / "links.tsv").read_text(encoding="utf-8")
                                 .splitlines()) if len(parts) >= 2]
    found = {}
    for at in checkpoints:
        fetched = {url for url, number in order.items() if number <= at}
        ok = {record["canonical_url"] for record in history[:at] if record["status"] == 200}
        queued = {target for source, target, *_ in links if source in fetched}
        found[at] = (len((queued - fetched) & relevant), len(relevant - ok))
    return found


def measure(section: str, checkpoints: list[int]) -> list[dict[str, Any]]:
    data = data_folder(section)
    topics = {topic.id: topic for topic in read_topics(data / "topics.jsonl")}
    rows = []
    for summary_path in sorted((data / "crawls").glob("task*/*/*/summary.json")):
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        history = {entry["fetches"]: entry for entry in summary.get("remaining_history", [])}
        topic = topics.get(summary_path.parent.parent.name)
        if not history or topic is None or summary.get("remaining", {}).get("from") != "labels":
            continue  # no estimate, or one from a judge's verdicts (measured apart from the estimator)
        relevant = set(topic.seeds) | set(topic.targets)
        reached = [at for at in checkpoints if at in history]
        for at, (in_queue, unfound) in truths(summary_path.parent, reached, relevant).items():
            estimate = history[at]
            rows.append({"section": section, "strategy": summary_path.parent.name, "task": summary_path.parts[-4],
                         "topic": topic.id, "at": at, "estimate": estimate, "in_queue": in_queue, "unfound": unfound})
    return rows


def figures(rows: list[dict[str, Any]], truth: str) -> tuple[float, float]:
    """The share of intervals holding the truth; the median absolute error, in pages."""
    inside = [r["estimate"]["low"] <= r[truth] <= r["estimate"]["high"] for r in rows]
    errors = [abs(r["estimate"]["expected"] - r[truth]) for r in rows]
    return sum(inside) / len(inside), statistics.median(errors)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sections", required=True, help="bench.quality sections whose crawls to read")
    parser.add_argument("--at", default="100,300", help="fetches at which to compare")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    checkpoints = [int(a) for a in args.at.split(",")]
    rows = [row for section in args.sections.split(",") for row in measure(section, checkpoints)]
    if not rows:
        raise SystemExit("no crawl with an estimate of what is left (remaining_history) in those sections")
    groups: dict[tuple[str, str, int], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["section"], row["strategy"], row["at"])].append(row)
    lines = [
        f"`python -m bench.remaining --sections {args.sections} --at {args.at}` — the estimate of what is left "
        "(crawlproject.models.remaining, verdicts from the labels) in each crawl of those bench.quality runs, "
        "against the truth at the same fetch. Interval: 90 %.",
        "",
        "| run | strategy | fetches | crawls | truth in the queue: inside the interval | median error (pages) "
        "| every relevant page not found: inside | median error | mean estimate / truth in queue / not found |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for (section, strategy, at), group in sorted(groups.items()):
        queue_inside, queue_error = figures(group, "in_queue")
        all_inside, all_error = figures(group, "unfound")
        means = (statistics.fmean(r["estimate"]["expected"] for r in group),
                 statistics.fmean(r["in_queue"] for r in group), statistics.fmean(r["unfound"] for r in group))
        lines.append(f"| {section} | {strategy} | {at} | {len(group)} | {queue_inside:.0%} | {queue_error:.1f} | "
                     f"{all_inside:.0%} | {all_error:.1f} | {means[0]:.1f} / {means[1]:.1f} / {means[2]:.1f} |")
    body = "\n".join(lines) + "\n"
    print(body)
    if not args.no_write:
        write_section("remaining", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
