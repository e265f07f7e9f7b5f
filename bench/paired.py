"""Paired one-tailed t-tests between strategies of one evaluation (eval.json):
does A beat B over the topics both crawled?

    .venv/bin/python -m bench.paired bench/results/sweep-webkb/eval.json --budget 500 depth2:shark-search bfs64:bfs1
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from crawlproject.evaluation.statistics import paired_one_tailed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("eval_json", type=Path)
    parser.add_argument("pairs", nargs="+", help="A:B, a strategy and the one it should beat")
    parser.add_argument("--budget", default="500")
    parser.add_argument("--metric", default="harvest_rate")
    parser.add_argument("--task", type=int, default=2)
    args = parser.parse_args()
    result = json.loads(args.eval_json.read_text(encoding="utf-8"))
    values = {
        (c["strategy"], c["topic_id"]): c["at"][args.budget][args.metric]
        for c in result["crawls"]
        if c["task"] == args.task
    }
    print(f"task {args.task}, {args.metric} at {args.budget} pages, paired one-tailed t-test")
    for pair in args.pairs:
        a, b = pair.split(":")
        topics = sorted(t for s, t in values if s == a and (b, t) in values)
        xs, ys = [values[(a, t)] for t in topics], [values[(b, t)] for t in topics]
        t, p = paired_one_tailed(xs, ys)
        print(f"  {a} {sum(xs) / len(xs):.3f} > {b} {sum(ys) / len(ys):.3f}? n={len(topics)} t={t:.2f} p={p:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
