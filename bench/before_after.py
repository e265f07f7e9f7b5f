"""A redesign measured against the code before it, in one session: the
scheduler's throughput (bench.frontier's "ours" and its MemoryFrontier alone)
and crawl throughput on the replay (bench.throughput's crawls), each run in a
checkout of the earlier commit and in this tree, alternating, so the
machine's noise hits both alike. Ratios are now ÷ before (> 1: faster now).

    .venv/bin/python -m bench.before_after --before 847f740 --repeats 3

Each tree runs its own code in a child process (``python -m …`` from that
tree puts its package first); the earlier commit is checked out once under
.cache/before-<commit>.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import ROOT, median, write_section
from crawlproject.replay.process import ReplayProcess

#: Timed in each tree's own bench.frontier: N enqueues and N dequeues of the
#: scheduler ("ours"), and the MemoryFrontier's push + pop + ack alone.
FRONTIER = """
import json, sys
from bench import frontier as f
spider = f.make_spider()
out = {}
for n in map(int, sys.argv[1].split(",")):
    prebuilt = list(f.requests(n, spider))
    out[n] = {"ours": f.time_once("ours", prebuilt, spider), "memory": f.frontier_level(prebuilt, spider)["memory"]}
print(json.dumps(out))
"""
#: One crawl of each tree's bench.throughput configuration, by name.
CRAWL = """
import json, sys
from pathlib import Path
from bench import throughput as t
spider, extra = t.CONFIGS[sys.argv[1]]
summary = t.crawl(spider, extra, sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]))
print(json.dumps({"pages_per_second": summary["pages_per_second"], "cpu": summary["cpu_seconds"],
                  "pages": summary["pages_fetched"]}))
"""
CRAWLS = ("ours, best-first", "link learner (query)", "ours, FIFO (best-first scores computed)")


def checkout(commit: str) -> Path:
    """A worktree of *commit*, made once (its children are given the replay: no corpus needed there)."""
    sha = subprocess.run(["git", "rev-parse", "--short", commit], cwd=ROOT, check=True, capture_output=True,  # noqa: S607
                         text=True).stdout.strip()
    tree = ROOT / ".cache" / f"before-{sha}"
    if not tree.is_dir():
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), sha], cwd=ROOT, check=True,  # noqa: S607
                       capture_output=True)
    return tree


def child(tree: Path, code: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=tree, capture_output=True, text=True,  # noqa: S603
                          timeout=3600, env={**os.environ, "PYTHONPATH": str(tree)})
    if done.returncode:
        raise SystemExit(
            f"{tree.name}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}"
        )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the commit before the redesign")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/webkb")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    trees = {"before": checkout(args.before), "now": ROOT}
    frontier: dict[str, list[dict]] = {name: [] for name in trees}
    crawls: dict[str, dict[str, list[dict]]] = {name: {c: [] for c in CRAWLS} for name in trees}
    with ReplayProcess(str(args.corpus.resolve() / "webkb.warc.gz")) as replay, tempfile.TemporaryDirectory() as tmp:
        for run in range(args.repeats):
            for name, tree in trees.items():
                frontier[name].append(child(tree, FRONTIER, args.sizes))
                for index, config in enumerate(CRAWLS):
                    out = Path(tmp) / f"{name}-{run}-{index}"
                    crawls[name][config].append(child(tree, CRAWL, config, replay.proxy_url, str(args.pages), str(out)))
                print(f"run {run + 1}: {name} done", flush=True)
    lines = ["| measure | before | now | now ÷ before |", "|---|---:|---:|---:|"]
    ratios = []
    for size in args.sizes.split(","):
        for key, label in (("ours", "scheduler enqueue + dequeue"), ("memory", "MemoryFrontier push + pop + ack")):
            before, now = (2 * int(size) / median([r[size][key] for r in frontier[n]]) for n in trees)
            ratios.append(now / before)
            lines.append(f"| {label}, {int(size):,} queued (ops/s) | {before:,.0f} | {now:,.0f} | {now / before:.2f} |")
    for config in CRAWLS:
        before, now = (median([r["pages_per_second"] for r in crawls[n][config]]) for n in trees)
        cpu_before, cpu_now = (median([1000 * r["cpu"] / r["pages"] for r in crawls[n][config]]) for n in trees)
        ratios.append(now / before)
        lines.append(f"| {config}: pages/s | {before:.1f} | {now:.1f} | {now / before:.2f} |")
        lines.append(f"| {config}: ms CPU per page | {cpu_before:.2f} | {cpu_now:.2f} | {cpu_now / cpu_before:.2f} |")
    table = "\n".join(lines)
    print(table)
    command = (f"`.venv/bin/python -m bench.before_after --before {args.before} --repeats {args.repeats} "
               f"--sizes {args.sizes} --pages {args.pages}`")
    body = (
        f"### The redesign (issue 60) against {args.before}\n\nCommand: {command}. Medians of {args.repeats} runs, "
        "each tree's own code in a child process, the two trees alternating; crawls of "
        f"{args.pages} pages of the WebKB replay at loopback speed (bench.throughput's crawl).\n\n{table}\n"
    )
    if not args.no_write:
        write_section("before-after", body, figure=(
            f"now ÷ before ({args.before}): {min(ratios):.2f}–{max(ratios):.2f} over the scheduler's and "
            "MemoryFrontier's ops/s and three crawls' pages/s"), target="issue 60: not slower than before")
    return 0


if __name__ == "__main__":
    sys.exit(main())
