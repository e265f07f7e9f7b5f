"""Scaling out: best-first crawls of 1, 2 and 4 workers sharing one frontier
in a real Redis, against the WebKB replay answering every request 100 ms
late (an I/O-bound crawl, as on the web); the shared frontier's cost in
Redis round trips per page and Redis memory per queued URL; and its raw
speed against scrapy-redis's own priority queue; and whether N workers keep
the harvest of one (course pages among the pages fetched with status 200).

    .venv/bin/python -m bench.distributed [--pages 800] [--workers 1,2,4] [--repeats 3] [--queue-ops 20000]
    .venv/bin/python -m bench.distributed --synthetic 1000000 --pages 4000   # the big web (docs/synthetic-web.md)

With ``--synthetic N`` the workers crawl the synthetic web of N pages from
its four biggest sites instead of WebKB (its many hosts keep four workers
busy; no harvest: it has no labels), and the section written is
``distributed-synthetic``.

pages/s counts the pages all workers fetched together, from the first
fetch to the last (process start-up excluded); runs alternate; medians.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import redis

from bench.common import ROOT, median, write_section
from bench.corpora import WEBKB_DEPARTMENT_HOMES
from bench.servers import RedisServer
from crawlproject.corpus.labels import is_relevant, load_labels
from crawlproject.distributed.frontier import RedisFrontier
from crawlproject.replay.process import ReplayProcess

QUERY = "course syllabus lecture homework"
PER_WORKER_CONCURRENCY = 4


def start_worker(
    proxy: str, redis_url: str, key: str, folder: Path, budget: int, seeds: list[str]
) -> subprocess.Popen[bytes]:
    settings = {
        "FOCUS_REPLAY_PROXY": proxy, "REDIS_URL": redis_url, "FOCUS_REDIS_KEY": key,
        "FOCUS_FRONTIER_BACKEND": "crawlproject.distributed.frontier.RedisFrontier",
        "DOWNLOAD_DELAY": 0, "CONCURRENT_REQUESTS": PER_WORKER_CONCURRENCY,
        "CONCURRENT_REQUESTS_PER_DOMAIN": PER_WORKER_CONCURRENCY, "CLOSESPIDER_ITEMCOUNT": budget,
        "FOCUS_OUTPUT_DIR": str(folder), "LOG_FILE": str(folder.with_suffix(".log")), "LOG_LEVEL": "INFO",
        "LOGSTATS_INTERVAL": 0, "FOCUS_STORE_PAGES": False,
    }
    command = [sys.executable, "-m", "scrapy", "crawl", "bestfirst",
               "-a", f"seeds={','.join(seeds)}", "-a", f"query={QUERY}"]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603


def crawl(
    proxy: str, server: RedisServer, workers: int, pages: int, base: Path, labels: dict[str, str] | None,
    seeds: list[str],
) -> dict[str, float]:
    key = f"bench{time.monotonic_ns()}:frontier"
    base.mkdir(parents=True, exist_ok=True)
    folders = [base / f"{key.split(':')[0]}-{i}" for i in range(workers)]
    processes = [start_worker(proxy, server.url, key, folder, pages // workers, seeds) for folder in folders]
    for process, folder in zip(processes, folders):
        if process.wait(timeout=3600) != 0:
            log = folder.with_suffix(".log")
            raise SystemExit(f"a worker failed: {log.read_text()[-3000:] if log.exists() else 'no log'}")
    per_worker, fetched, round_trips, ok, good = [], 0, 0, 0, 0
    for folder in folders:
        records = [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()]
        times = [datetime.fromisoformat(record["fetched_at"]).timestamp() for record in records]
        per_worker.append(times)
        ok += sum(record["status"] == 200 for record in records)
        if labels is not None:
            good += sum(record["status"] == 200 and is_relevant(labels.get(record["canonical_url"]), ("course",))
                        for record in records)
        fetched += len(times)
        found = re.search(r"'frontier/redis_round_trips': (\d+)", folder.with_suffix(".log").read_text())
        round_trips += int(found[1]) if found else 0
    RedisFrontier(redis.Redis.from_url(server.url), key, 1).clear()
    # While every worker is crawling (processes start a second or two apart):
    start, end = max(min(t) for t in per_worker), min(max(t) for t in per_worker)
    together = sum(1 for times in per_worker for t in times if start <= t <= end)
    return {
        "pages": fetched,
        "pages_per_second": together / (end - start),
        "round_trips_per_page": round_trips / fetched,
        "harvest": good / max(1, ok) if labels is not None else float("nan"),
    }


def urls(n: int, seed: int = 1) -> list[tuple[str, float]]:
    rng = random.Random(seed)
    return [
        (f"http://www.host{(i * 7) % 1000}.example.edu/~user{i % 5003}/courses/cs{i % 911}/p{i}.html", rng.random())
        for i in range(n)
    ]


def memory_per_url(server: RedisServer, n: int) -> float:
    client = redis.Redis.from_url(server.url)
    client.flushall()
    before = int(client.info("memory")["used_memory"])
    frontier = RedisFrontier(client, "memory:frontier", 10**9, batch=1000)
    payload = ("get", "parse", "on_error", {"focus_parent": "http://www.host1.example.edu/", "depth": 2}, False)
    for url, score in urls(n):
        frontier.push(url, score, payload)
    frontier.flush()
    used = int(client.info("memory")["used_memory"]) - before
    client.flushall()
    return used / n


def queue_speed(server: RedisServer, n: int) -> dict[str, float]:
    """Push n Requests, then pop (and acknowledge) them all: our frontier
    with the settings a crawl uses (seen set, leases and all) vs
    scrapy-redis's PriorityQueue (a queue only: no seen set, no leases).
    Both take Requests and give Requests back."""
    from scrapy.utils.test import get_crawler
    from scrapy_redis import picklecompat
    from scrapy_redis.queue import PriorityQueue

    from bench.frontier import requests as crawl_requests
    from crawlproject import config
    from crawlproject.frontier.codec import RequestCodec
    from crawlproject.spiders import BestFirstSpider

    client = redis.Redis.from_url(server.url)
    client.flushall()
    spider = BestFirstSpider(query="course", seeds="http://seed.example/")
    spider.crawler = get_crawler(BestFirstSpider)  # scrapy-redis serialises callbacks by their spider
    requests = list(crawl_requests(n, spider))
    codec = RequestCodec(spider)
    results = {}
    started = time.perf_counter()
    ours = RedisFrontier(client, "ours:frontier", 10**9, prefetch=config.DEFAULTS["FOCUS_REDIS_PREFETCH"],
                         batch=config.DEFAULTS["FOCUS_REDIS_BATCH"])
    for request in requests:
        key, score, url, payload = codec.encode(request)
        ours.push(key, score, payload, url=url)
    ours.flush()
    while (entry := ours.pop()) is not None:
        codec.decode(entry)
        ours.ack(entry.key)
    ours.flush()
    results["ours"] = 2 * n / (time.perf_counter() - started)
    stock = PriorityQueue(client, spider, "stock:requests", serializer=picklecompat)
    started = time.perf_counter()
    for request in requests:
        stock.push(request)
    while stock.pop() is not None:
        pass
    results["scrapy_redis"] = 2 * n / (time.perf_counter() - started)
    client.flushall()
    return results


def _runs(results: list[dict[str, float]], figure: str = "pages_per_second", digits: int = 1) -> str:
    return ", ".join(f"{r[figure]:.{digits}f}" for r in results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/webkb")
    parser.add_argument("--pages", type=int, default=800)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--queue-ops", type=int, default=20_000)
    parser.add_argument("--memory-urls", type=int, default=100_000)
    parser.add_argument("--synthetic", type=int, default=0, help="crawl a synthetic web of this many pages")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    runs: dict[int, list[dict[str, float]]] = {n: [] for n in counts}
    labels: dict[str, str] | None = None
    seeds = list(WEBKB_DEPARTMENT_HOMES)
    if args.synthetic:
        from crawlproject.corpus.paragraphs import paragraph_file

        paragraphs = paragraph_file(
            [ROOT.parent / "shared/corpora/webkb", ROOT.parent / "shared/corpora/phpdoc-evolving"], ROOT / ".cache"
        )
        replaying = ReplayProcess("", latency_ms=args.latency_ms,
                                  synthetic={"pages": args.synthetic, "seed": 1, "paragraphs": str(paragraphs)})
    else:
        labels = load_labels(args.corpus.resolve() / "labels.tsv")
        replaying = ReplayProcess(str(args.corpus.resolve() / "webkb.warc.gz"), latency_ms=args.latency_ms)
    with RedisServer() as server, tempfile.TemporaryDirectory() as tmp:
        with replaying as replay:
            if args.synthetic:
                seeds = list(replay.synthetic()["seeds"])  # type: ignore[call-overload]
            for run in range(args.repeats):
                for n in counts:
                    result = crawl(replay.proxy_url, server, n, args.pages, Path(tmp) / f"run{run}", labels, seeds)
                    runs[n].append(result)
                    print(f"run {run + 1}: {n} worker(s): {result['pages_per_second']:.1f} pages/s, "
                          f"{result['round_trips_per_page']:.2f} Redis round trips per page, "
                          f"harvest {result['harvest']:.3f}", flush=True)
        speeds = [queue_speed(server, args.queue_ops) for _ in range(args.repeats)]
        memory = memory_per_url(server, args.memory_urls)
    rate = {n: median([r["pages_per_second"] for r in runs[n]]) for n in counts}
    trips = {n: median([r["round_trips_per_page"] for r in runs[n]]) for n in counts}
    harvest = {n: median([r["harvest"] for r in runs[n]]) for n in counts}
    ours, stock = median([s["ours"] for s in speeds]), median([s["scrapy_redis"] for s in speeds])
    one = rate[counts[0]]
    print(f"speed-up: {', '.join(f'{n} workers {rate[n] / one:.2f}x' for n in counts)}; "
          f"queue ops/s ours {ours:,.0f} vs scrapy-redis {stock:,.0f} ({ours / stock:.1f}x); "
          f"Redis memory {memory:.0f} B per queued URL")
    harvested = labels is not None
    rows = "".join(
        f"| {n} | {rate[n]:.1f} | {_runs(runs[n])} | {rate[n] / one:.2f}× | {trips[n]:.2f} |"
        + (f" {harvest[n]:.3f} ({_runs(runs[n], 'harvest', 3)}) |" if harvested else "") + "\n"
        for n in counts
    )
    web = (f"the synthetic web of {args.synthetic:,} pages (docs/synthetic-web.md) from its four biggest sites"
           if args.synthetic else "the four WebKB department home pages")
    body = (
        "### Distributed crawling: workers sharing one frontier in Redis\n\n"
        f"Command: `.venv/bin/python -m bench.distributed --pages {args.pages} --workers {args.workers} "
        f"--repeats {args.repeats} --queue-ops {args.queue_ops}"
        + (f" --synthetic {args.synthetic}" if args.synthetic else "") + "` — best-first from "
        f"{web}; the replay answers every request {args.latency_ms:.0f} ms late (I/O-bound, as the web); "
        f"{args.pages} pages in all, split between the workers; {PER_WORKER_CONCURRENCY} concurrent requests per "
        "worker; a real redis-server on loopback. pages/s from the first fetch to the last, all workers together; "
        "median of the runs (alternating)."
        + (f" Harvest: course pages (query `{QUERY}`) among all workers' pages fetched with status 200 — whether "
           "N workers together stay as focused as one." if harvested else "") + "\n\n"
        "| workers | pages/s (median) | runs | speed-up over one | Redis round trips per page |"
        + (" harvest (runs) |" if harvested else "") + "\n"
        + "|---:|---:|---|---:|---:|" + ("---|" if harvested else "") + f"\n{rows}\n"
        f"Frontier operations (push, then pop and acknowledge, {args.queue_ops:,} Requests built as our spiders "
        f"build them, median of {args.repeats}): ours {ours:,.0f} ops/s against scrapy-redis's `PriorityQueue` "
        f"{stock:,.0f} ops/s — **{ours / stock:.1f}×** (target ≥ 10×). Redis memory per queued URL "
        f"({args.memory_urls:,} URLs with a shared payload): **{memory:.0f} bytes**."
    )
    if not args.no_write:
        write_section("distributed-synthetic" if args.synthetic else "distributed", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
