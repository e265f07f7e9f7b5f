"""A plain crawl's queue far past the frontier's memory bound: what spilling
to disk costs.

A fresh process per run builds N Requests as a plain spider yields them
(``response.follow(href, callback=self.parse)``: no score, depth in meta, 30
links per page), enqueues each in the FrontierScheduler, then dequeues every
one and settles its lease, as a crawl does. Two variants, alternated:

* ``spill`` — ``FOCUS_FRONTIER_MAX`` = --bound: past it the lowest-ranked
  requests spill to disk (the default);
* ``memory`` — a bound above N: everything in memory (the baseline).

    .venv/bin/python -m bench.spill --requests 2000000 --bound 100000 --repeats 3

Prints and records (the ``spill`` section of BENCHMARKS.md): ops/s (enqueue
and dequeue both counted), RSS growth per queued URL at the peak, the spill
file's bytes per spilled URL, and that every request came out.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from typing import Any

from scrapy import Request

from bench.common import ROOT, median, write_section

LINKS_PER_PAGE = 30


def plain_requests(n: int, spider: Any) -> Any:
    for i in range(n):
        url = f"http://www.host{(i * 7) % 1000}.example.edu/~user{i % 5003}/courses/cs{i % 911}/p{i}.html"
        yield Request(url, callback=spider.parse, meta={"depth": 2 + i // 100_000})


def child(n: int, bound: int) -> dict[str, Any]:
    import psutil
    from scrapy.utils.reactor import install_reactor
    from scrapy.utils.test import get_crawler

    from crawlproject.frontier.scheduler import FrontierScheduler
    from tests.spiders.plain import PlainSpider

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")  # as a crawl does
    spider = PlainSpider()
    crawler = get_crawler(
        PlainSpider, {"ADDONS": {"crawlproject.addon.FocusedCrawlAddon": 0}, "FOCUS_FRONTIER_MAX": bound}
    )
    crawler._apply_settings()  # noqa: SLF001 (stats, as Crawler.crawl builds them)
    scheduler = FrontierScheduler.from_crawler(crawler)
    scheduler.open(spider)
    gc.collect()
    process = psutil.Process()
    before = process.memory_info().rss
    started = time.perf_counter()
    for request in plain_requests(n, spider):
        scheduler.enqueue_request(request)
    enqueued = time.perf_counter() - started
    gc.collect()
    peak = process.memory_info().rss
    frontier: Any = scheduler.frontier
    spilled, disk = frontier.spilled(), frontier.spill_disk_bytes()
    started = time.perf_counter()
    out = 0
    while (request := scheduler.next_request()) is not None:
        scheduler.request_finished(request)
        out += 1
    dequeued = time.perf_counter() - started
    scheduler.close("finished")
    return {
        "queued": n, "out": out, "enqueue_seconds": enqueued, "dequeue_seconds": dequeued,
        "rss_growth": peak - before, "spilled": spilled, "disk_bytes": disk,
    }


def run(n: int, bound: int) -> dict[str, Any]:
    completed = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "bench.spill", "--child", "--requests", str(n), "--bound", str(bound)],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2_000_000)
    parser.add_argument("--bound", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.requests, args.bound)))
        return 0
    variants = {"spill": args.bound, "memory": args.requests * 2}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    for repeat in range(args.repeats):
        for name, bound in variants.items():  # alternated: load hits both alike
            result = run(args.requests, bound)
            if result["out"] != result["queued"]:
                raise SystemExit(f"{name}: {result['queued']:,} queued but {result['out']:,} came out")
            runs[name].append(result)
            ops = 2 * result["queued"] / (result["enqueue_seconds"] + result["dequeue_seconds"])
            print(f"run {repeat + 1} {name:6}: {ops:,.0f} ops/s, RSS growth {result['rss_growth'] / 2**20:,.0f} MiB, "
                  f"spilled {result['spilled']:,} ({result['disk_bytes'] / 2**20:,.0f} MiB on disk), "
                  f"{result['out']:,} came out", flush=True)
    rows = []
    base = median([2 * r["queued"] / (r["enqueue_seconds"] + r["dequeue_seconds"]) for r in runs["memory"]])
    for name, results in runs.items():
        ops = median([2 * r["queued"] / (r["enqueue_seconds"] + r["dequeue_seconds"]) for r in results])
        growth = median([r["rss_growth"] / r["queued"] for r in results])
        spilled = median([r["spilled"] for r in results])
        per_spilled = median([r["disk_bytes"] / r["spilled"] for r in results if r["spilled"]]) if spilled else 0
        rows.append(
            f"| {name} | {ops:,.0f} | {ops / base:.2f}× | {median([r['rss_growth'] for r in results]) / 2**20:,.0f} "
            "MiB "
            f"| {growth:.0f} | {spilled:,.0f} | {per_spilled:.0f} | {results[0]['out']:,} |"
        )
        print(
            f"{name:6}: median {ops:,.0f} ops/s ({ops / base:.2f}× in memory), RSS growth {growth:.0f} B per queued "
            "URL, "
            f"{per_spilled:.0f} disk bytes per spilled URL"
        )
    spill = runs["spill"]
    figure = (
        f"{args.requests:,} plain requests, {args.bound:,} in memory: all came out; "
        f"{median([2 * r['queued'] / (r['enqueue_seconds'] + r['dequeue_seconds']) for r in spill]):,.0f} ops/s "
        f"(×{median([2 * r['queued'] / (r['enqueue_seconds'] + r['dequeue_seconds']) for r in spill]) / base:.2f} "
        f"of all in memory), {median([r['rss_growth'] / r['queued'] for r in spill]):.0f} B of RSS per queued URL, "
        f"{median([r['disk_bytes'] / r['spilled'] for r in spill if r['spilled']]):.0f} disk bytes per spilled URL"
    )
    body = (
        f"`python -m bench.spill --requests {args.requests} --bound {args.bound} --repeats {args.repeats}` — "
        f"{args.requests:,} plain requests (no score, as a plain spider yields them) enqueued in the "
        "FrontierScheduler, "
        "then all dequeued and settled; a fresh process per run, variants alternated, medians. "
        "RSS growth is from the empty queue to the last push.\n\n"
        "| variant | ops/s | × in memory | RSS growth | RSS growth per queued URL (B) | spilled to disk "
        "| disk bytes per spilled URL | came out |\n|---|---:|---:|---:|---:|---:|---:|---:|\n" + "\n".join(rows)
    )
    if not args.no_write:
        write_section(
            "spill",
            body,
            figure=figure,
            target="issue 35: nothing lost past the bound; ≤ 300 B per queued URL in memory",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
