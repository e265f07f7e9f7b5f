"""Crawl throughput on the replay: our frontier scheduler + best-first
scoring vs Scrapy's stock scheduler with no scoring, same run, same replay.

    .venv/bin/python bench/throughput.py [--corpus ../shared/corpora/webkb] [--pages 2000] [--repeats 3]

Both crawl the same seeds through one replay server with the same
pipelines; pages/s = pages fetched ÷ crawl time (from each crawl's
summary.json); runs alternate so machine noise hits both alike.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import median, write_section  # noqa: E402
from crawlproject.replay.process import ReplayProcess  # noqa: E402

SEEDS = "http://www.cs.cornell.edu/,http://www.cs.utexas.edu/,http://www.cs.washington.edu/,http://www.cs.wisc.edu/"
CONFIGS = {
    "ours (FrontierScheduler + best-first)": ["bestfirst", []],
    "stock (Scrapy Scheduler, no scoring)": [
        "breadthfirst", ["-s", "SCHEDULER=scrapy.core.scheduler.Scheduler"],
    ],
}


def crawl(spider: str, extra: list[str], proxy: str, pages: int, out: Path) -> float:
    command = [
        sys.executable, "-m", "scrapy", "crawl", spider, "-a", f"seeds={SEEDS}",
        "-a", "query=course syllabus lecture homework",
        "-s", f"FOCUS_REPLAY_PROXY={proxy}", "-s", f"CLOSESPIDER_ITEMCOUNT={pages}",
        "-s", f"FOCUS_OUTPUT_DIR={out}", "-s", "LOG_LEVEL=WARNING", *extra,
    ]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)  # noqa: S603
    summary = json.loads((out / "summary.json").read_text())
    return float(summary["pages_per_second"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/webkb")
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rates: dict[str, list[float]] = {name: [] for name in CONFIGS}
    with ReplayProcess(str(args.corpus / "webkb.warc.gz")) as replay, tempfile.TemporaryDirectory() as tmp:
        for run in range(args.repeats):
            for name, (spider, extra) in CONFIGS.items():
                rate = crawl(spider, extra, replay.proxy_url, args.pages, Path(tmp) / f"{run}-{spider}")
                rates[name].append(rate)
                print(f"run {run + 1}: {name}: {rate:.1f} pages/s", flush=True)
    ours, stock = (median(r) for r in rates.values())
    print(f"median: ours {ours:.1f} pages/s, stock {stock:.1f} pages/s, ratio {ours / stock:.2f}")
    names = list(CONFIGS)
    body = (
        "### Crawl throughput on the replay\n\n"
        f"Command: `.venv/bin/python bench/throughput.py --pages {args.pages} --repeats {args.repeats}`"
        f" — {args.pages} pages per crawl from the four WebKB department home pages, one replay "
        "server for all runs, runs alternating.\n\n"
        "| configuration | pages/s (median) | runs |\n|---|---:|---|\n"
        f"| {names[0]} | {ours:.1f} | {', '.join(f'{r:.1f}' for r in rates[names[0]])} |\n"
        f"| {names[1]} | {stock:.1f} | {', '.join(f'{r:.1f}' for r in rates[names[1]])} |\n\n"
        f"Ratio ours ÷ stock: **{ours / stock:.2f}**."
    )
    if not args.no_write:
        write_section("throughput", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
