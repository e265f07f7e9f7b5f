"""The scheduler as a crawl uses it: our FrontierScheduler vs stock Scrapy's
Scheduler with its default priority queue (DownloaderAwarePriorityQueue) and
with ScrapyPriorityQueue, and a bare heapq of Requests (the floor), at 10k,
100k and 1M queued URLs; and the RSS of a process holding 1M queued URLs.

    .venv/bin/python -m bench.frontier [--sizes 10000,100000,1000000] [--repeats 3]

Every contender gets the same Requests, built as our spiders build them:
``Request(url, callback=spider.parse, errback=spider.on_error, meta=…)``
with the score, the link's canonical key, the parent page (30 links per
page) and the depth in meta, the parent page as Referer header (Scrapy's
RefererMiddleware sets it on every link a spider yields; without it this
bench missed that the header made each of our queued URLs a Request dict
of its own), and ``priority = int(score × 10⁴)`` for the
stock queues (Scrapy priorities are integers). Time: enqueue N, then dequeue
N (ours also settles each lease, as a crawl does); median of --repeats;
ops/s counts both. Memory: a fresh process per contender builds N Requests
one at a time, enqueues each and keeps nothing else; RSS is read at the end.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import json
import random
import subprocess
import sys
import time
from typing import Any

from scrapy import Request
from scrapy.utils.reactor import install_reactor

from bench.common import ROOT, median, write_section

QUANTUM = 10_000  # stock priorities: int(score × QUANTUM)
LINKS_PER_PAGE = 30
CONTENDERS = ("ours", "stock-default", "stock-scrapypq", "heapq")
LABELS = {
    "ours": "ours (FrontierScheduler, memory backend, the add-on's settings)",
    "stock-default": "stock Scheduler, DownloaderAwarePriorityQueue (Scrapy's default)",
    "stock-scrapypq": "stock Scheduler, ScrapyPriorityQueue",
    "heapq": "bare heapq of (−score, seq, Request)",
}


def make_spider() -> Any:
    from crawlproject.spiders import BestFirstSpider

    return BestFirstSpider(query="course", seeds="http://seed.example/")


def requests(n: int, spider: Any, seed: int = 1) -> Any:
    """N Requests as a crawl yields them, one at a time."""
    from crawlproject.web import meta as keys

    rng = random.Random(seed)
    parent = ""
    for i in range(n):
        if i % LINKS_PER_PAGE == 0:
            parent = f"http://www.host{i % 997}.example.edu/dept/people/page{i}.html"
        url = f"http://www.host{(i * 7) % 1000}.example.edu/~user{i % 5003}/courses/cs{i % 911}/p{i}.html"
        score = rng.random()
        yield Request(
            url, callback=spider.parse, errback=spider.on_error, priority=int(score * QUANTUM),
            headers={"Referer": parent},
            meta={keys.SCORE: score, keys.KEY: (url, url), keys.PARENT: parent, "depth": 2},
        )


class Ours:
    def __init__(self, spider: Any):
        from scrapy.utils.test import get_crawler

        from crawlproject.addon import SCRAPY_SETTINGS
        from crawlproject.frontier.scheduler import FrontierScheduler

        # With the add-on's fingerprinter and dupefilter, as the project's
        # crawls run: repeats are left to the frontier (Scrapy's default
        # dupefilter would fingerprint and remember every request besides).
        filters = {name: SCRAPY_SETTINGS[name] for name in ("REQUEST_FINGERPRINTER_CLASS", "DUPEFILTER_CLASS")}
        crawler = get_crawler(type(spider), {"FOCUS_FRONTIER_MAX": 10**9, **filters})
        crawler._apply_settings()  # noqa: SLF001 (stats, as Crawler.crawl builds them)
        self.scheduler = FrontierScheduler.from_crawler(crawler)
        self.scheduler.open(spider)
        assert self.scheduler.frontier_filters, "the add-on's dupefilter"

    def push(self, request: Request) -> None:
        self.scheduler.enqueue_request(request)

    def pop(self) -> Request | None:
        request = self.scheduler.next_request()
        if request is not None:
            self.scheduler.request_finished(request)
        return request


class Stock:
    def __init__(self, spider: Any, priority_queue: str):
        from scrapy.core.engine import ExecutionEngine
        from scrapy.core.scheduler import Scheduler
        from scrapy.utils.test import get_crawler

        install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")  # as a crawl does
        crawler = get_crawler(type(spider), {"SCHEDULER_PRIORITY_QUEUE": priority_queue})
        crawler._apply_settings()  # noqa: SLF001
        crawler.spider = spider
        # DownloaderAwarePriorityQueue asks the downloader which slots are busy.
        crawler.engine = ExecutionEngine(crawler, lambda _: None)
        self.scheduler = Scheduler.from_crawler(crawler)
        self.scheduler.open(spider)

    def push(self, request: Request) -> None:
        self.scheduler.enqueue_request(request)

    def pop(self) -> Request | None:
        return self.scheduler.next_request()


class BareHeap:
    def __init__(self, spider: Any):
        self.heap: list[tuple[float, int, Request]] = []
        self.seq = 0

    def push(self, request: Request) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (-request.meta["focus_score"], self.seq, request))

    def pop(self) -> Request | None:
        return heapq.heappop(self.heap)[2] if self.heap else None


def contender(name: str, spider: Any) -> Any:
    if name == "ours":
        return Ours(spider)
    if name == "stock-default":
        return Stock(spider, "scrapy.pqueues.DownloaderAwarePriorityQueue")
    if name == "stock-scrapypq":
        return Stock(spider, "scrapy.pqueues.ScrapyPriorityQueue")
    return BareHeap(spider)


def time_once(name: str, prebuilt: list[Request], spider: Any) -> float:
    """Seconds for N enqueues then N dequeues (small N repeated until about
    200,000 requests went through, so one sample is not a few ms)."""
    loops = max(1, 200_000 // len(prebuilt))
    total = 0.0
    for _ in range(loops):
        queue = contender(name, spider)
        gc.collect()
        started = time.perf_counter()
        for request in prebuilt:
            queue.push(request)
        while queue.pop() is not None:
            pass
        total += time.perf_counter() - started
        del queue
    return total / loops


def frontier_level(prebuilt: list[Request], spider: Any) -> dict[str, float]:
    """The data structure alone: MemoryFrontier push + pop + ack of the
    entries the scheduler hands it (key, score, shared payload), against a
    bare heapq of (−score, seq, key, payload) tuples. Seconds, N of each."""
    from crawlproject.frontier.codec import RequestCodec
    from crawlproject.frontier.memory import MemoryFrontier

    codec = RequestCodec(spider)
    entries = [codec.encode(request) for request in prebuilt]
    loops = max(1, 200_000 // len(entries))
    times = {"memory": 0.0, "tuples": 0.0}
    for _ in range(loops):
        frontier = MemoryFrontier(10**9)
        gc.collect()
        started = time.perf_counter()
        for key, score, url, payload in entries:
            frontier.push(key, score, payload, url=url)
        while (entry := frontier.pop()) is not None:
            frontier.ack(entry.key)
        times["memory"] += time.perf_counter() - started
        heap: list[tuple[float, int, str, Any]] = []
        gc.collect()
        started = time.perf_counter()
        for seq, (key, score, _, payload) in enumerate(entries):
            heapq.heappush(heap, (-score, seq, key, payload))
        while heap:
            heapq.heappop(heap)
        times["tuples"] += time.perf_counter() - started
    return {name: value / loops for name, value in times.items()}


def rss_child(name: str, n: int) -> None:
    """Run in a fresh process: enqueue N requests built one at a time, then
    print RSS and how many are queued."""
    import psutil

    spider = make_spider()
    queue = contender(name, spider)
    gc.collect()
    before = psutil.Process().memory_info().rss  # interpreter, Scrapy, an empty queue
    for request in requests(n, spider):
        queue.push(request)
    gc.collect()
    queued = len(queue.scheduler) if hasattr(queue, "scheduler") else len(queue.heap)
    print(json.dumps({"rss": psutil.Process().memory_info().rss, "before": before, "queued": queued}))


def rss_of(name: str, n: int) -> dict[str, int]:
    completed = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "bench.frontier", "--rss-child", name, "--sizes", str(n)],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )
    result: dict[str, int] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rss-size", type=int, default=1_000_000, help="queued URLs of the RSS measure (0: none)")
    parser.add_argument("--rss-child", default="", help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    if args.rss_child:
        rss_child(args.rss_child, int(args.sizes))
        return 0
    spider = make_spider()
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        prebuilt = list(requests(n, spider))
        samples: dict[str, list[float]] = {name: [] for name in CONTENDERS}
        for _ in range(args.repeats):  # alternate, so noise hits all alike
            for name in CONTENDERS:
                samples[name].append(time_once(name, prebuilt, spider))
        times = {name: median(values) for name, values in samples.items()}
        structure = [frontier_level(prebuilt, spider) for _ in range(args.repeats)]
        for name in ("memory", "tuples"):
            times[name] = median([s[name] for s in structure])
        rows.append((n, times))
        print(
            f"N={n:>9,}: ops/s " + "  ".join(f"{name} {2 * n / times[name]:,.0f}" for name in CONTENDERS)
            + f" | ours ÷ heapq time {times['ours'] / times['heapq']:.2f}× | stock default ÷ ours "
            f"{times['stock-default'] / times['ours']:.1f}× | MemoryFrontier ÷ heapq of tuples "
            f"{times['memory'] / times['tuples']:.2f}×",
            flush=True,
        )
        del prebuilt
        gc.collect()
    memory = {name: rss_of(name, args.rss_size) for name in CONTENDERS} if args.rss_size > 0 else {}
    for name, m in memory.items():
        print(
            f"RSS at {m['queued']:,} queued: {name} {m['rss'] / 2**20:,.0f} MiB = {m['rss'] / m['queued']:.0f} B/URL; "
            f"growth {(m['rss'] - m['before']) / m['queued']:.0f} B/URL",
            flush=True,
        )
    table = [
        "| queued URLs | ours ops/s | stock default ops/s | stock ScrapyPriorityQueue ops/s | heapq ops/s "
        "| ours time ÷ heapq | stock default time ÷ ours | stock ScrapyPQ time ÷ ours |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, t in rows:
        table.append(
            f"| {n:,} | {2 * n / t['ours']:,.0f} | {2 * n / t['stock-default']:,.0f} "
            f"| {2 * n / t['stock-scrapypq']:,.0f} | {2 * n / t['heapq']:,.0f} "
            f"| {t['ours'] / t['heapq']:.2f}× | {t['stock-default'] / t['ours']:.1f}× "
            f"| {t['stock-scrapypq'] / t['ours']:.1f}× |"
        )
    structure_table = [
        "| queued URLs | MemoryFrontier ops/s | heapq of tuples ops/s | MemoryFrontier time ÷ heapq |",
        "|---:|---:|---:|---:|",
    ] + [
        f"| {n:,} | {2 * n / t['memory']:,.0f} | {2 * n / t['tuples']:,.0f} | {t['memory'] / t['tuples']:.2f}× |"
        for n, t in rows
    ]
    memory_rows = "\n".join(
        f"| {LABELS[name]} | {m['queued']:,} | {m['rss'] / 2**20:,.0f} MiB | {m['rss'] / m['queued']:.0f} "
        f"| {(m['rss'] - m['before']) / m['queued']:.0f} |"
        for name, m in memory.items()
    )
    body = (
        "### Scheduler: enqueue + dequeue throughput, and memory at 1M queued URLs\n\n"
        f"Command: `.venv/bin/python -m bench.frontier --sizes {args.sizes} --repeats {args.repeats} "
        f"--rss-size {args.rss_size}`"
        f" — every contender gets the same Requests, built as our spiders build them (callbacks "
        f"on the spider; score, key, parent page shared by {LINKS_PER_PAGE} links, depth in meta; "
        "the parent page as Referer header, as Scrapy's RefererMiddleware sets it; "
        f"`priority = int(score × {QUANTUM})` for the stock queues). Time is the median of "
        f"{args.repeats} alternating runs of N enqueues then N dequeues (ours also settles each "
        "lease); ops/s counts both.\n\n"
        + "\n".join(table)
        + "\n\nThe data structure alone — MemoryFrontier push + pop + ack of the entries the "
        "scheduler hands it (key, score, shared payload) against a bare heapq of "
        "(−score, seq, key, payload) tuples; no Requests built or read:\n\n"
        + "\n".join(structure_table)
        + "\n\nRSS of a fresh process that built "
        f"{args.rss_size:,} Requests one at a time and enqueued each (interpreter and Scrapy "
        "included), and its growth from the empty queue to the last push, per queued URL — the entry, its "
        "Request's payload and its seen-set entry, *all in*:\n\n| contender | queued | RSS | RSS per queued URL "
        "| growth per queued URL |\n|---|---:|---:|---:|---:|\n"
        + memory_rows
    )
    if not args.no_write:
        write_section("frontier", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
