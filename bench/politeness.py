"""What politeness costs one focused crawl, and what the crawl's objective buys back.

One topic of a labelled corpus, crawled from given seeds for a fixed number of
fetches by each strategy, under four manners, each run several times:

* ``fast`` — no delay, 8 requests at a time per host: how every quality figure
  was measured before issue 49; no real crawl runs so;
* ``polite, pages`` — one request per host, ``--delay`` seconds apart, the
  replay answering ``--latency-ms`` late; the budget is pages
  (``FOCUS_OBJECTIVE=pages``, the focused spiders' default);
* ``polite, time`` — the same, every ready slot filled (``FOCUS_OBJECTIVE=time``:
  the scheduler of issue 35, as Scrapy's ``DownloaderAwarePriorityQueue``);
* ``polite, global order`` — the same, slots ignored (``FOCUS_SLOT_AWARE=False``):
  the global best-first order, each request waiting in its host's slot.

    .venv/bin/python -m bench.politeness --corpus ../shared/corpora/docsweb \\
        --category "gnuplot/Gnuplot/Terminal types" --query "gnuplot terminal driver output device" \\
        --seeds http://httpd.apache.org/docs/2.4/index.html,… --fetches 300 --runs 3

Prints and records (section ``politeness-<name>``) the relevant pages found,
the dead fetches (404) and the wall time, median of the runs and each run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.common import median, run_child, stop_children_on_exit, write_section
from bench.quality import POLITE_DELAY, POLITE_LATENCY_MS, corpus_files
from crawlproject.replay.process import ReplayProcess

STRATEGIES = {"best-first": "bestfirst", "shark-search": "sharksearch", "link-learner": "linklearner"}


def manners(delay: float) -> dict[str, dict[str, Any]]:
    polite = {"DOWNLOAD_DELAY": delay, "CONCURRENT_REQUESTS_PER_DOMAIN": 1}
    return {
        "fast": {"DOWNLOAD_DELAY": 0, "CONCURRENT_REQUESTS_PER_DOMAIN": 8},
        "polite, pages": {**polite, "FOCUS_OBJECTIVE": "pages"},
        "polite, time": {**polite, "FOCUS_OBJECTIVE": "time"},
        "polite, global order": {**polite, "FOCUS_SLOT_AWARE": False},
    }


def relevant_urls(labels: Path, category: str) -> set[str]:
    rows = (line.rstrip("\n").split("\t") for line in labels.read_text(encoding="utf-8").splitlines()[1:])
    return {row[0] for row in rows if len(row) == 2 and (row[1] == category or row[1].startswith(category + "/"))}


def crawl(
    spider: str, args: argparse.Namespace, proxy: str, folder: Path, settings: dict[str, Any], run: int
) -> dict[str, Any]:
    merged = {
        "FOCUS_REPLAY_PROXY": proxy, "FOCUS_OUTPUT_DIR": str(folder), "LOG_LEVEL": "WARNING",
        "LOG_FILE": str(folder / "crawl.log"), "CLOSESPIDER_PAGECOUNT": args.fetches, "CONCURRENT_REQUESTS": 16,
        "FOCUS_STORE_PAGES": False, "FOCUS_NEAR_DUPLICATES": 0, "LOGSTATS_INTERVAL": 0, "FOCUS_RANDOM_SEED": run,
        **settings,
    }
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        spider,
        "-a",
        f"query={args.query}",
        "-a",
        f"seeds={args.seeds}",
    ]
    for name, value in merged.items():
        command += ["-s", f"{name}={value}"]
    folder.mkdir(parents=True)
    started = time.monotonic()
    completed = run_child(command, timeout=1800)
    seconds = time.monotonic() - started
    if completed.returncode:
        raise RuntimeError(f"{folder}: {completed.stderr[-2000:]}")
    return {"history": [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()],
            "seconds": seconds}


def measure(history: list[dict[str, Any]], relevant: set[str]) -> dict[str, float]:
    found = {r["canonical_url"] for r in history} & relevant
    return {"found": len(found), "dead": sum(r.get("status") == 404 for r in history), "fetches": len(history)}


def main(argv: list[str] | None = None) -> None:
    stop_children_on_exit()  # a bench stopped stops its crawls
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--category", required=True, help="a label path: pages of it and below are relevant")
    parser.add_argument("--query", required=True)
    parser.add_argument("--seeds", required=True, help="comma-separated URLs")
    parser.add_argument("--fetches", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--delay", type=float, default=POLITE_DELAY)
    parser.add_argument("--latency-ms", type=float, default=POLITE_LATENCY_MS)
    parser.add_argument("--jobs", type=int, default=4, help="crawls at once (a polite crawl mostly waits)")
    parser.add_argument("--name", default="", help="section name (default politeness-<corpus>)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    warc, labels = corpus_files(args.corpus.resolve())
    relevant = relevant_urls(labels, args.category)
    strategies = args.strategies.split(",")
    variants = manners(args.delay)
    cells = [
        (strategy, manner, run) for run in range(1, args.runs + 1) for strategy in strategies for manner in variants
    ]
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    with ReplayProcess(str(warc), latency_ms=args.latency_ms) as replay, tempfile.TemporaryDirectory() as work, \
            ThreadPoolExecutor(args.jobs) as pool:
        def one(cell: tuple[str, str, int]) -> tuple[tuple[str, str, int], dict[str, float]]:
            strategy, manner, run = cell
            folder = Path(work) / f"{strategy}-{manner.replace(', ', '-').replace(' ', '-')}-{run}"
            done = crawl(STRATEGIES[strategy], args, replay.proxy_url, folder, variants[manner], run)
            return cell, {**measure(done["history"], relevant), "seconds": done["seconds"]}

        for (strategy, manner, run), figures in pool.map(one, cells):
            results.setdefault((strategy, manner), []).append(figures)
            print(f"run {run}: {strategy:13} {manner:21} found {figures['found']:4.0f} of {len(relevant)}, "
                  f"{figures['dead']:4.0f} dead, {figures['seconds']:5.1f} s", flush=True)
    rows = []
    for strategy in strategies:
        fast_found = median([r["found"] for r in results[(strategy, "fast")]])
        global_seconds = median([r["seconds"] for r in results[(strategy, "polite, global order")]])
        for manner in variants:
            runs = results[(strategy, manner)]
            found, dead, seconds = (median([r[key] for r in runs]) for key in ("found", "dead", "seconds"))
            each = ", ".join(f"{r['found']:.0f}" for r in runs)
            rows.append(
                f"| {strategy} | {manner} | {found:.0f} ({each}) | {found / fast_found if fast_found else 0:.2f} | "
                f"{dead:.0f} | {seconds:.1f} | {seconds / global_seconds:.2f} |"
            )
    table = ("| strategy | manners | relevant found, median (each run) | ÷ fast | dead fetches | wall s | "
             "÷ global order's wall s |\n|---|---|---|---|---|---|---|\n" + "\n".join(rows))
    print(table)
    if args.no_write:
        return
    name = args.name or f"politeness-{args.corpus.resolve().name}"
    pages = results
    headline = "; ".join(
        f"{s}: {median([r['found'] for r in pages[(s, 'polite, pages')]]):.0f} polite (pages) / "
        f"{median([r['found'] for r in pages[(s, 'polite, time')]]):.0f} polite (time) / "
        f"{median([r['found'] for r in pages[(s, 'fast')]]):.0f} fast"
        for s in strategies)
    body = (
        f"`.venv/bin/python -m bench.politeness --corpus {args.corpus} --category '{args.category}' --query "
        f"'{args.query}' --seeds {args.seeds} --fetches {args.fetches} --runs {args.runs} --delay {args.delay:g} "
        f"--latency-ms {args.latency_ms:g}` — {len(relevant)} relevant pages (label `{args.category}` and below); "
        f"{args.fetches} fetches per crawl; polite = one request per host, {args.delay:g} s apart (Scrapy's "
        f"randomized delay), the replay answering after {args.latency_ms:g} ms; fast = no delay, 8 per host; "
        f"16 in flight; {args.runs} runs each (FOCUS_RANDOM_SEED = run), {args.jobs} crawls at once.\n\n" + table + "\n"
    )
    write_section(name, body, figure=f"relevant found of {len(relevant)} at {args.fetches} fetches — {headline}",
                  target="issue 49: polite ≥ 0.9× fast; polite ≤ 0.75× the global order's wall time")


if __name__ == "__main__":
    main()
