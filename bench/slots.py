"""Best-first over many polite hosts: does a slow host idle the others?

A best-first crawl of a synthetic web of 50 hosts, every host polite (one
request at a time, ``DOWNLOAD_DELAY`` seconds apart), for a fixed time,
with three schedulers in one run:

* ``frontier, time objective`` — ours, filling every slot: the best request
  whose download slot can take one now (``FOCUS_OBJECTIVE=time``);
* ``frontier, pages objective`` — ours as a focused spider runs by default
  (``FOCUS_OBJECTIVE=pages``): a ready slot takes a URL only among the
  ``CONCURRENT_REQUESTS`` best queued — slower by design on a web whose best
  links sit on few hosts; and with a wait (``FOCUS_PAGES_WAIT=1``, issue
  61): a free host also takes its best below the window when the busy hosts
  holding the URLs above it would keep it waiting a delay or more and it
  scores within reach of the window;
* ``frontier, slots ignored`` — ours with ``FOCUS_SLOT_AWARE=False``: the
  global best whatever its slot (the scheduler before issue 35, which handed
  the downloader the top requests of one host);
* ``scrapy (DownloaderAware)`` — Scrapy's scheduler with its
  ``DownloaderAwarePriorityQueue`` (the same spider; it orders by integer
  priority, so it is not best-first: the politeness baseline).

    .venv/bin/python -m bench.slots --seconds 60 --repeats 3
    .venv/bin/python -m bench.slots --seconds 60 --repeats 3 --spread

With ``--spread`` the web's hosts hold two topics only (course and student
pages): the query's pages sit on half the hosts, not on one in six — where
issue 61 asks the pages objective for half Scrapy's pages/s.

Prints pages/s (median of the runs and each run) and the ratio to Scrapy's,
measured in the same run, and writes the ``slots`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, median, write_section
from crawlproject.corpus.paragraphs import paragraph_file
from crawlproject.replay.process import ReplayProcess
from crawlproject.replay.synthetic import SyntheticWeb
from crawlproject.replay.web_shape import WebShape, load_paragraphs

SHAPE: dict[str, Any] = {"pages": 50_000, "hosts": 50, "seed": 5, "cross_host": 0.3}
QUERY = "course syllabus lecture homework"
TOPIC = "course"  #: the synthetic web's topics the query asks for: course/cornell, course/misc, …
OTHER = "student"  #: with --spread, the only other topic
VARIANTS: dict[str, dict[str, Any]] = {
    "frontier, time objective": {"FOCUS_OBJECTIVE": "time"},
    "frontier, pages objective": {"FOCUS_OBJECTIVE": "pages"},
    "frontier, pages objective, wait 1": {"FOCUS_OBJECTIVE": "pages", "FOCUS_PAGES_WAIT": 1},
    "frontier, slots ignored": {"FOCUS_SLOT_AWARE": False},
    "scrapy (DownloaderAware)": {
        "SCHEDULER": "scrapy.core.scheduler.Scheduler",
        "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.DownloaderAwarePriorityQueue",
    },
}


def crawl(web: SyntheticWeb, proxy: str, seeds: list[str], folder: Path, seconds: float, delay: float,
          extra: dict[str, Any]) -> dict[str, Any]:
    settings = {
        "FOCUS_REPLAY_PROXY": proxy, "FOCUS_OUTPUT_DIR": str(folder), "LOG_LEVEL": "WARNING",
        "DOWNLOAD_DELAY": delay, "RANDOMIZE_DOWNLOAD_DELAY": False, "CONCURRENT_REQUESTS": 16,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1, "CLOSESPIDER_TIMEOUT": seconds, "ROBOTSTXT_OBEY": False,
        "FOCUS_NEAR_DUPLICATES": 0, **extra,
    }
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        "bestfirst",
        "-a",
        f"query={QUERY}",
        "-a",
        f"seeds={','.join(seeds)}",
    ]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    started = time.monotonic()
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=seconds * 4 + 120)  # noqa: S603
    if completed.returncode:
        raise RuntimeError(completed.stderr[-2000:])
    summary = json.loads((folder / "summary.json").read_text())
    urls = [json.loads(line)["url"] for line in (folder / "history.jsonl").read_text().splitlines()]
    return {"pages": summary["pages_fetched"], "seconds": time.monotonic() - started,
            "pages_per_second": summary["pages_fetched"] / seconds, "hosts": len({url.split("/")[2] for url in urls}),
            "on_topic": [(web.topic_of(url) or "").split("/")[0] == TOPIC for url in urls]}


def share(flags: list[bool]) -> float:
    return 100 * sum(flags) / len(flags) if flags else 0.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpora" / "webkb")
    parser.add_argument(
        "--spread", action="store_true",
        help=f"a web whose hosts hold two topics only, {TOPIC}/… and {OTHER}/…: the query's pages on half the hosts "
        "(the slots-spread section)",
    )
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    paragraphs = paragraph_file([args.corpus], ROOT / ".cache")
    topics = load_paragraphs(paragraphs)
    with tempfile.TemporaryDirectory() as work:
        if args.spread:  # the replay builds the same web from a pool of the two topics' paragraphs
            topics = {name: found for name, found in topics.items() if name.split("/")[0] in (TOPIC, OTHER)}
            paragraphs = Path(work) / "paragraphs.json.gz"
            with gzip.open(paragraphs, "wt", encoding="utf-8") as f:
                json.dump({"topics": topics}, f)
        runs = crawl_variants(SyntheticWeb(WebShape(**SHAPE), topics), paragraphs, Path(work), args)
    write_results(runs, args)


def crawl_variants(
    web: SyntheticWeb, paragraphs: Path, work: Path, args: argparse.Namespace
) -> dict[str, list[dict[str, Any]]]:
    seeds = web.seeds(5)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in VARIANTS}
    with ReplayProcess("", synthetic={**SHAPE, "paragraphs": str(paragraphs)}) as replay:
        for repeat in range(args.repeats):
            for number, (name, extra) in enumerate(VARIANTS.items()):  # interleaved: load hits every variant alike
                result = crawl(web, replay.proxy_url, seeds, work / f"run{repeat}-variant{number}",
                               args.seconds, args.delay, extra)
                runs[name].append(result)
                print(f"run {repeat + 1}: {name:28} {result['pages']:5d} pages, "
                      f"{result['pages_per_second']:.2f} pages/s, {result['hosts']} hosts", flush=True)
    return runs


def write_results(runs: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> None:
    base = median([r["pages_per_second"] for r in runs["scrapy (DownloaderAware)"]])
    ours = median([r["pages_per_second"] for r in runs["frontier, time objective"]])
    pages = median([r["pages_per_second"] for r in runs["frontier, pages objective"]])
    waited = median([r["pages_per_second"] for r in runs["frontier, pages objective, wait 1"]])
    unaware = median([r["pages_per_second"] for r in runs["frontier, slots ignored"]])
    web = (f"over 50 polite hosts, half of them on the query's topic ({TOPIC} and {OTHER} only)" if args.spread
           else "over 50 polite hosts")
    figure = (
        f"best-first {web}, time objective: {ours:.1f} pages/s = {ours / base:.2f}× Scrapy's "
        f"DownloaderAware ({base:.1f}), {ours / unaware:.1f}× the scheduler with slots ignored ({unaware:.1f}); "
        f"pages objective {pages:.1f} ({pages / base:.2f}×), with a wait of 1 delay {waited:.1f} ({waited / base:.2f}×)"
    )
    # On-topic pages among the first K fetched, K the fewest any crawl fetched:
    # what the same page budget bought, whatever the pace.
    first = min(len(r["on_topic"]) for results in runs.values() for r in results)
    rows = []
    for name, results in runs.items():
        rate = median([r["pages_per_second"] for r in results])
        each = ", ".join(f"{r['pages_per_second']:.2f}" for r in results)
        hosts = median([r["hosts"] for r in results])
        early = median([share(r["on_topic"][:first]) for r in results])
        overall = median([share(r["on_topic"]) for r in results])
        rows.append(
            f"| {name} | {rate:.2f} | {each} | {rate / base:.2f}× | {hosts:.0f} | {early:.0f} | {overall:.0f} |"
        )
        print(f"{name:28} median {rate:.2f} pages/s ({rate / base:.2f}× Scrapy's), hosts {hosts:.0f}")
    shape_note = (
        f"; two topics only, {TOPIC} and {OTHER}: the query's pages spread over half the hosts" if args.spread else ""
    )
    body = (
        f"`python -m bench.slots --seconds {args.seconds:g} --delay {args.delay:g} --repeats {args.repeats}"
        f"{' --spread' if args.spread else ''}` — "
        f"a best-first crawl of a synthetic web of {SHAPE['hosts']} hosts ({SHAPE['pages']:,} pages"
        f"{shape_note}), every host "
        f"one request at a time, {args.delay:g} s apart, 16 requests in flight, {args.seconds:g} s per crawl; "
        f"variants interleaved, median of the runs. On topic: the share of pages whose topic is the query's "
        f"(the web's own labels {TOPIC}/…), among the first {first} each crawl fetched (the fewest any crawl "
        "fetched: the same page budget) and among all it fetched.\n\n"
        "| scheduler | pages/s (median) | each run | × Scrapy's DownloaderAware | hosts fetched from "
        f"| on topic, first {first} % | on topic, all % |\n"
        "|---|---|---|---|---|---|---|\n" + "\n".join(rows)
    )
    if not args.no_write:
        write_section(
            "slots-spread" if args.spread else "slots",
            body,
            figure=figure,
            target="issue 35: ≥ 0.95× Scrapy's DownloaderAwarePriorityQueue (time objective); "
            "issue 61: the pages objective ≥ 0.5× where the scores spread over many hosts",
        )


if __name__ == "__main__":
    main()
