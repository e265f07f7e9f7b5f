"""Frontier throughput and memory: our MemoryFrontier vs Scrapy's stock
priority queue (Requests, float scores quantised to int priorities) vs a
bare heapq of tuples (the floor), at 10k, 100k and 1M URLs, in one run.

    .venv/bin/python bench/frontier.py [--sizes 10000,100000,1000000] [--repeats 3]

Time: push N URLs with random scores, then pop them all; median of
--repeats runs. Memory: bytes held per queued URL after the N pushes
(tracemalloc, URL strings excluded: they exist before the push).
"""

from __future__ import annotations

import argparse
import gc
import heapq
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scrapy import Request  # noqa: E402
from scrapy.pqueues import ScrapyPriorityQueue  # noqa: E402
from scrapy.squeues import FifoMemoryQueue  # noqa: E402
from scrapy.utils.test import get_crawler  # noqa: E402

from bench.common import median, write_section  # noqa: E402
from crawlproject.frontier.memory import MemoryFrontier  # noqa: E402

QUANTUM = 10_000  # stock priorities: int(score * QUANTUM)


def make_urls(n: int, seed: int = 1) -> tuple[list[str], list[float]]:
    rng = random.Random(seed)
    urls = [f"http://host{i % 1000}.example.org/dir{i % 97}/page{i}.html" for i in range(n)]
    return urls, [rng.random() for _ in range(n)]


def ours(urls: list[str], scores: list[float]) -> tuple[Callable[[], None], Callable[[], Any]]:
    frontier = MemoryFrontier(max_size=len(urls) + 1)
    payload = (0, "parse", "on_error", None)

    def push() -> None:
        for url, score in zip(urls, scores):
            frontier.push(url, score, payload)

    def pop() -> Any:
        while frontier.pop() is not None:
            pass
        return frontier

    return push, pop


def stock(urls: list[str], scores: list[float]) -> tuple[Callable[[], None], Callable[[], Any]]:
    crawler = get_crawler()
    queue = ScrapyPriorityQueue.from_crawler(crawler, FifoMemoryQueue, "")

    def push() -> None:
        for url, score in zip(urls, scores):
            queue.push(Request(url, priority=int(score * QUANTUM)))

    def pop() -> Any:
        while queue.pop() is not None:
            pass
        return queue

    return push, pop


def bare_heapq(urls: list[str], scores: list[float]) -> tuple[Callable[[], None], Callable[[], Any]]:
    heap: list[tuple[float, int, str]] = []

    def push() -> None:
        for seq, (url, score) in enumerate(zip(urls, scores)):
            heapq.heappush(heap, (-score, seq, url))

    def pop() -> Any:
        while heap:
            heapq.heappop(heap)
        return heap

    return push, pop


CONTENDERS = {"ours": ours, "stock": stock, "heapq": bare_heapq}


def time_once(factory: Callable[..., Any], urls: list[str], scores: list[float]) -> float:
    """Seconds for N pushes then N pops; small N is repeated (fresh queue each
    time) until about 200,000 URLs went through, so one sample is not a few ms."""
    loops = max(1, 200_000 // len(urls))
    total = 0.0
    for _ in range(loops):
        push, pop = factory(urls, scores)
        gc.collect()
        started = time.perf_counter()
        push()
        pop()
        total += time.perf_counter() - started
    return total / loops


def bytes_per_url(factory: Callable[..., Any], urls: list[str], scores: list[float]) -> float:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    push, pop = factory(urls, scores)
    push()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del push, pop
    return held / len(urls)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        urls, scores = make_urls(n)
        times = {name: median([time_once(f, urls, scores) for _ in range(args.repeats)])
                 for name, f in CONTENDERS.items()}
        memory = {name: bytes_per_url(f, urls, scores) for name, f in CONTENDERS.items()}
        row = (n, times, memory)
        rows.append(row)
        print(
            f"N={n:>9,}: ops/s (push+pop) ours {2 * n / times['ours']:>11,.0f}  "
            f"stock {2 * n / times['stock']:>11,.0f}  heapq {2 * n / times['heapq']:>11,.0f} | "
            f"ours/heapq time {times['ours'] / times['heapq']:.2f}x  stock/ours {times['stock'] / times['ours']:.1f}x | "
            f"bytes/URL ours {memory['ours']:.0f} stock {memory['stock']:.0f} heapq {memory['heapq']:.0f} "
            f"(ours = {memory['ours'] / memory['stock']:.0%} of stock)",
            flush=True,
        )
    table = [
        "| URLs | ours ops/s | stock ops/s | heapq ops/s | ours time ÷ heapq | stock time ÷ ours "
        "| bytes/URL ours | stock | heapq | ours ÷ stock memory |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, t, m in rows:
        table.append(
            f"| {n:,} | {2 * n / t['ours']:,.0f} | {2 * n / t['stock']:,.0f} | {2 * n / t['heapq']:,.0f} "
            f"| {t['ours'] / t['heapq']:.2f}× | {t['stock'] / t['ours']:.1f}× "
            f"| {m['ours']:.0f} | {m['stock']:.0f} | {m['heapq']:.0f} | {m['ours'] / m['stock']:.0%} |"
        )
    body = (
        "### Frontier: push + pop throughput and memory per queued URL\n\n"
        f"Command: `.venv/bin/python bench/frontier.py --sizes {args.sizes} --repeats {args.repeats}`"
        f" — time is the median of {args.repeats} runs of N pushes then N pops; ops/s counts both.\n"
        "Stock = `scrapy.pqueues.ScrapyPriorityQueue` over `FifoMemoryQueue` holding Requests "
        f"with priority `int(score × {QUANTUM})`; heapq = bare `heapq` of `(-score, seq, url)` tuples.\n\n"
        + "\n".join(table)
    )
    if not args.no_write:
        write_section("frontier", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
