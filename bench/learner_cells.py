"""The link learner against SharkSearch and best-first, cell by cell (issue
28): for every task × budget × axis of a corpus's quality runs, the mean
target recall of breadth-first, best-first, SharkSearch, the link learner
and the path oracle; in the cells where breadth-first → path oracle leaves
at least 10 points, whether the learner is ≥ SharkSearch and ≥ best-first,
the share of the gap it closed, and p of "learner > SharkSearch" (paired
one-tailed t-test of target recall over topics, Holm over the cells of the
corpus).

    .venv/bin/python -m bench.learner_cells --corpus-name webkb --sections learner-webkb-fetches,learner-webkb-ok

Reads each section's eval.json (.cache/bench/SECTION: run its bench.quality
command first); writes nothing but to standard output unless --write names
a BENCHMARKS.md section.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from bench.common import write_section
from bench.quality import data_folder
from crawlproject.evaluation.statistics import holm, mean_and_stderr, paired_one_tailed

STRATEGIES = ("breadth-first", "best-first", "shark-search", "link-learner", "path-oracle")
MIN_GAP = 10.0  # points of target recall between breadth-first and the path oracle


def recall_by_topic(evaluation: dict[str, Any], task: int, budget: str, strategy: str) -> dict[str, float]:
    return {
        crawl["topic_id"]: 100 * crawl["at"][budget]["target_recall"]
        for crawl in evaluation["crawls"]
        if crawl["task"] == task and crawl["strategy"] == strategy and budget in crawl["at"]
        and crawl["at"][budget]["target_recall"] is not None
    }


def cells(sections: list[str]) -> list[dict[str, Any]]:
    found = []
    for section in sections:
        evaluation = json.loads((data_folder(section) / "eval.json").read_text(encoding="utf-8"))
        # what the budgets counted (bench.quality --axis); an old eval.json without it: its section's name
        axis = evaluation.get("axis") or ("fetches" if "fetch" in section else "ok")
        tasks = sorted({crawl["task"] for crawl in evaluation["crawls"]})
        for task in tasks:
            for budget in map(str, evaluation["budgets"]):
                recall = {s: recall_by_topic(evaluation, task, budget, s) for s in STRATEGIES}
                topics = sorted(set.intersection(*(set(r) for r in recall.values())))
                if len(topics) < 2:
                    continue
                means = {s: mean_and_stderr([recall[s][t] for t in topics]) for s in STRATEGIES}
                learner = [recall["link-learner"][t] for t in topics]
                shark = [recall["shark-search"][t] for t in topics]
                _, p = paired_one_tailed(learner, shark) if learner != shark else (0.0, 0.5)
                found.append({"section": section, "axis": axis, "task": task, "budget": budget,
                              "topics": len(topics), "means": means, "p": p if not math.isnan(p) else 0.5})
    adjusted = holm([cell["p"] for cell in found])
    for cell, p in zip(found, adjusted, strict=True):
        cell["p_holm"] = p
    return found


def table(found: list[dict[str, Any]]) -> str:
    lines = [
        "| axis | task | budget | topics | breadth-first | best-first | SharkSearch | link learner | path oracle "
        "| gap ≥ 10 | learner ≥ Shark | learner ≥ best-first | gap closed | learner > Shark: p → Holm |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|---:|",
    ]
    for cell in found:
        m = {s: cell["means"][s][0] for s in STRATEGIES}
        shown = {s: f"{m[s]:.1f} ± {cell['means'][s][1]:.1f}" for s in STRATEGIES}
        gap = m["path-oracle"] - m["breadth-first"]
        counts = gap >= MIN_GAP
        closed = (m["link-learner"] - m["breadth-first"]) / gap if gap > 0 else math.nan
        lines.append(
            f"| {cell['axis']} | {cell['task']} | {cell['budget']} | {cell['topics']} | {shown['breadth-first']} "
            f"| {shown['best-first']} | {shown['shark-search']} | **{shown['link-learner']}** | {shown['path-oracle']} "
            f"| {'yes' if counts else 'no'} | {_verdict(counts, m['link-learner'] >= m['shark-search'])} "
            f"| {_verdict(counts, m['link-learner'] >= m['best-first'])} | {closed:.2f} "
            f"| {cell['p']:.2g} → {cell['p_holm']:.2g} |"
        )
    counted = [c for c in found if c["means"]["path-oracle"][0] - c["means"]["breadth-first"][0] >= MIN_GAP]
    wins = sum(c["means"]["link-learner"][0] >= max(c["means"]["shark-search"][0], c["means"]["best-first"][0])
               for c in counted)
    significant = sum(c["p_holm"] < 0.05 for c in found)
    lines += ["", f"Cells with a gap of ≥ {MIN_GAP:.0f} points: {len(counted)}; the learner ≥ SharkSearch and ≥ "
              f"best-first in {wins} of them; ahead of SharkSearch at p < 0.05 after Holm in {significant} of "
              f"{len(found)} cells."]
    return "\n".join(lines)


def _verdict(counts: bool, holds: bool) -> str:
    return ("yes" if holds else "**no**") if counts else ("(yes)" if holds else "(no)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus-name", required=True)
    parser.add_argument("--sections", required=True, help="comma-separated bench.quality sections of one corpus")
    parser.add_argument("--write", default="", help="BENCHMARKS.md section to write the table to")
    args = parser.parse_args()
    body = table(cells(args.sections.split(",")))
    print(body)
    if args.write:
        command = " ".join(["`.venv/bin/python", "-m", "bench.learner_cells", *sys.argv[1:]]) + "`"
        write_section(args.write, f"### The link learner cell by cell on {args.corpus_name}\n\nCommand: {command}\n\n"
                      "Mean target recall over topics, % ± 1 s.e. A verdict in brackets: a cell whose breadth-first → "
                      f"path-oracle gap is under {MIN_GAP:.0f} points (no room to tell strategies apart).\n\n{body}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
