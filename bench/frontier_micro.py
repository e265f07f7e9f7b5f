"""The MemoryFrontier alone, as quiet as Python allows: N pushes then N pops
and acks, garbage collection off while timed, best of 5 in a fresh process —
for comparing two trees, where bench.frontier's figures at 10,000 queued URLs
vary by a third from run to run.

    cd TREE && PYTHONPATH=TREE python -m bench.frontier_micro 10000   # prints seconds
"""

from __future__ import annotations

import gc
import random
import sys
import time

from crawlproject.frontier.memory import MemoryFrontier


def once(n: int) -> float:
    rng = random.Random(1)
    keys = [f"http://h{i % 50}.test/p{i}" for i in range(n)]
    scores = [rng.random() for _ in range(n)]
    frontier = MemoryFrontier(max_size=10**7)
    payload = object()  # a page's links share one payload
    gc.collect()
    gc.disable()
    start = time.perf_counter()
    for key, score in zip(keys, scores, strict=True):
        frontier.push(key, score, payload)
    while (entry := frontier.pop()) is not None:
        frontier.ack(entry.key)
    elapsed = time.perf_counter() - start
    gc.enable()
    return elapsed


if __name__ == "__main__":
    print(min(once(int(sys.argv[1])) for _ in range(5)))
