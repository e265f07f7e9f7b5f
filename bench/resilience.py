"""Crash safety: a best-first crawl of the WebKB replay killed with SIGKILL
at seeded random moments and resumed with the same JOBDIR, again and again.

    .venv/bin/python -m bench.resilience [--corpus ../shared/corpora/webkb] [--pages 2000] [--kills 20] \
        [--seed 1] [--repeats 3]

Counted: URLs lost (queued before a kill, then neither fetched nor queued
at the end), pages fetched twice beyond those in flight at a kill (leased,
not acknowledged — the only ones the design refetches), and how far the
interrupted crawl's pages are from an uninterrupted crawl of the same budget
(Jaccard; beside it, two uninterrupted crawls' own distance: concurrency
makes no two crawls alike). And what durability costs: pages/s with JOBDIR
(every change journaled in SQLite) against the same crawl in memory, median
of --repeats alternating runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, median, write_section
from bench.corpora import WEBKB_DEPARTMENT_HOMES
from crawlproject.frontier.inspect import FrontierState
from crawlproject.replay import LOOPBACK_SPEED
from crawlproject.replay.process import ReplayProcess

QUERY = "course syllabus lecture homework"


def command(proxy: str, folder: Path, budget: int, jobdir: Path | None) -> list[str]:
    settings = {**LOOPBACK_SPEED, "FOCUS_REPLAY_PROXY": proxy, "FOCUS_OUTPUT_DIR": str(folder),
                "CLOSESPIDER_ITEMCOUNT": str(budget), "LOG_LEVEL": "WARNING", "LOGSTATS_INTERVAL": "0",
                "FOCUS_STORE_PAGES": "false"}
    if jobdir is not None:
        settings["JOBDIR"] = str(jobdir)
    args = [sys.executable, "-m", "scrapy", "crawl", "bestfirst",
            "-a", f"seeds={','.join(WEBKB_DEPARTMENT_HOMES)}", "-a", f"query={QUERY}"]
    for name, value in settings.items():
        args += ["-s", f"{name}={value}"]
    return args


def lines(folder: Path) -> int:
    path = folder / "history.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


def history(folder: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()]


def crawl(proxy: str, folder: Path, budget: int, jobdir: Path | None) -> dict[str, object]:
    subprocess.run(command(proxy, folder, budget, jobdir), cwd=ROOT, check=True, capture_output=True, timeout=1800)  # noqa: S603
    summary: dict[str, object] = json.loads((folder / "summary.json").read_text())
    return summary


def killed_crawl(proxy: str, folder: Path, jobdir: Path, budget: int, kills: list[int]) -> dict[str, float]:
    """Kill at each page count of *kills*, resume after each, finish the budget
    (CLOSESPIDER_ITEMCOUNT counts the pages of every run: issue 51)."""
    snapshots = []
    for point in kills:
        process = subprocess.Popen(  # noqa: S603
            command(proxy, folder, budget, jobdir), cwd=ROOT,  # a budget is the crawl's, across resumes
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 600
        while lines(folder) < point and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        state = FrontierState(jobdir)
        written = {str(r["canonical_url"]) for r in history(folder)}
        # in flight at the kill: queued again (not acknowledged) although its page was written
        snapshots.append((state.queued, written & state.queued))
    subprocess.run(command(proxy, folder, budget, jobdir), cwd=ROOT, check=True, capture_output=True, timeout=1800)  # noqa: S603
    final = FrontierState(jobdir)
    fetched = [str(r["canonical_url"]) for r in history(folder)]
    fetched_set = set(fetched)
    queued_before = set().union(*(queued for queued, _ in snapshots))
    in_flight = set().union(*(flying for _, flying in snapshots))
    lost = {
        key for key in queued_before if key not in fetched_set and key not in final.queued and not final.fetched(key)
    }
    twice = [key for key in fetched_set if fetched.count(key) > 1]
    return {
        "pages": len(fetched),
        "unique": len(fetched_set),
        "queued_before_kills": len(queued_before),
        "lost": len(lost),
        "fetched_twice": len(twice),
        "in_flight_at_kills": len(in_flight),
        "twice_beyond_in_flight": len([key for key in twice if key not in in_flight]),
    }


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/webkb")
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    kills = sorted(rng.sample(range(20, args.pages - 20), args.kills))
    rates: dict[str, list[float]] = {"memory": [], "durable": []}
    with ReplayProcess(str(args.corpus.resolve() / "webkb.warc.gz")) as replay, tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        sets = []
        for run in range(args.repeats):
            for mode in ("memory", "durable"):
                folder = base / f"{mode}-{run}"
                summary = crawl(
                    replay.proxy_url, folder, args.pages, base / f"job-{mode}-{run}" if mode == "durable" else None
                )
                rates[mode].append(float(summary["pages_per_second"]))  # type: ignore[arg-type]
                print(f"run {run + 1}: {mode}: {rates[mode][-1]:.1f} pages/s", flush=True)
                if mode == "durable" and len(sets) < 2:
                    sets.append({str(r["canonical_url"]) for r in history(folder)})
        result = killed_crawl(replay.proxy_url, base / "killed", base / "job-killed", args.pages, kills)
        killed = {str(r["canonical_url"]) for r in history(base / "killed")}
    ratio = median(rates["durable"]) / median(rates["memory"])
    similarity = jaccard(killed, sets[0])
    baseline = jaccard(sets[0], sets[1]) if len(sets) > 1 else float("nan")
    print(json.dumps(result))
    print(f"durable ÷ memory pages/s {ratio:.2f}; Jaccard killed vs uninterrupted {similarity:.3f} "
          f"(two uninterrupted crawls: {baseline:.3f})")
    body = (
        "### Resilience: SIGKILL and resume\n\n"
        f"Command: `.venv/bin/python -m bench.resilience --pages {args.pages} --kills {args.kills} --seed {args.seed} "
        f"--repeats {args.repeats}` — a best-first crawl of {args.pages} pages from the four WebKB department "
        f"home pages, killed with SIGKILL {args.kills} times (when its history reached "
        f"{', '.join(map(str, kills))} pages) and resumed each time with the same JOBDIR.\n\n"
        "| measure | value |\n|---|---:|\n"
        f"| pages fetched in all (unique) | {result['pages']} ({result['unique']}) |\n"
        f"| URLs queued at some kill | {result['queued_before_kills']} |\n"
        f"| **URLs lost** (queued at a kill, then neither fetched nor queued) | **{result['lost']}** |\n"
        f"| pages fetched twice | {result['fetched_twice']} |\n"
        f"| of them in flight at a kill (written, not acknowledged) | {result['in_flight_at_kills']} at most |\n"
        f"| **pages fetched twice beyond those in flight** | **{result['twice_beyond_in_flight']}** |\n"
        f"| Jaccard of the pages: killed crawl vs an uninterrupted one | {similarity:.3f} |\n"
        f"| Jaccard of two uninterrupted crawls (the noise of concurrency) | {baseline:.3f} |\n\n"
        f"Durability's cost: pages/s with JOBDIR {median(rates['durable']):.1f} (runs "
        f"{', '.join(f'{r:.1f}' for r in rates['durable'])}) against in memory {median(rates['memory']):.1f} "
        f"(runs {', '.join(f'{r:.1f}' for r in rates['memory'])}): ratio **{ratio:.2f}** (target ≥ 0.9)."
    )
    if not args.no_write:
        write_section("resilience", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
