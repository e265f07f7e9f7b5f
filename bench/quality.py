"""Crawl quality on a labelled corpus (docs/methods.md §3): every strategy × topics ×
tasks, evaluated at several budgets, with means ± s.e., paired t-tests and
each strategy's place between breadth-first and the path oracle.

    .venv/bin/python -m bench.quality --corpus ../shared/corpora/webkb [--topics 20] [--jobs 2]

The corpus folder holds one ``*.warc.gz`` and ``labels.tsv`` (url<TAB>category
path, any depth). Crawls run once at the largest budget; smaller budgets are
that crawl's prefix. Writes report.md, per-topic.tsv, the topic ids and plots
under --out (bench/results/<section>, kept in git), the bulky data —
eval.json, topics.jsonl, the crawls and models — under --data
(.cache/bench/<section>, made anew by running the command again), and the
tables into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.common import ROOT, SECTIONS, stop_children_on_exit, write_section
from bench.runner import (
    NEEDS_EXAMPLES,
    NEEDS_MODEL,
    CrawlJob,
    Variant,
    crawls_to_run,
    run_crawl_job,
)
from bench.steadiness import steadiness, steadiness_table
from bench.topic_models import (
    PROTOCOLS,
    draw_examples,
    models_folder,
    train_examples_model,
    train_lookahead_model,
    train_topic_model,
)
from crawlproject.corpus.reader import Corpus, load_corpus
from crawlproject.evaluation.evaluate import Evaluator, read_crawl, summarize
from crawlproject.evaluation.report import markdown_tables, plot_trajectories, write_report
from crawlproject.evaluation.topics import (
    QUERY_KINDS,
    Topic,
    derive_topics,
    read_topics,
    spread_topics,
    write_topics,
)
from crawlproject.models.training_graph import link_graph
from crawlproject.policy.scope import SCOPES
from crawlproject.replay.process import ReplayProcess

SCOPE_TEXT = {
    "any": "",
    "domain": "crawls kept to the seeds' registered domains (FOCUS_SCOPE=domain: Rennie & McCallum's "
    "per-site spidering; a target on another domain is a miss for every strategy); ",
    "host": "crawls kept to the seeds' hosts (FOCUS_SCOPE=host); ",
}
PROTOCOL_TEXT = {
    "host-disjoint": "trained per topic without the topic's hosts (host-disjoint).",
    "label-disjoint": "trained per topic on every page and link of the corpus but without the labels of the "
    "topic's relevant pages other than its seeds; the good category is the topic's own (label-disjoint).",
}


#: Scrapy's project template is polite to real sites (1 s between two requests
#: to a host, one at a time); the replay answers at once on loopback, so the
#: delay is scaled to it and the replay made to answer as a server far away.
POLITE_DELAY = 0.25
POLITE_LATENCY_MS = 30.0


def politeness(delay: float, per_host: int) -> dict[str, str]:
    """The settings a benchmark crawl runs with: as a user crawls (one
    request per host, a delay between two; Scrapy's default 16 in flight)."""
    return {
        "DOWNLOAD_DELAY": f"{delay:g}",
        "CONCURRENT_REQUESTS_PER_DOMAIN": str(per_host),
        "CONCURRENT_REQUESTS": "16",
    }


def politeness_text(delay: float, per_host: int, latency_ms: float) -> str:
    if delay == 0:
        return (f"Crawled with no delay, {per_host} requests at a time per host, replay latency {latency_ms:g} ms "
                "(no real crawl runs so; for comparison). ")
    return (f"Crawled politely, as users crawl: {per_host} request{'s' if per_host > 1 else ''} at a time per host, "
            f"{delay:g} s apart (Scrapy's randomized delay), 16 in flight, the replay answering after "
            f"{latency_ms:g} ms. ")


def corpus_files(folder: Path) -> tuple[Path, Path]:
    warcs = sorted(folder.glob("*.warc.gz")) + sorted(folder.glob("*.warc"))
    labels = folder / "labels.tsv"
    if not warcs or not labels.is_file():
        raise SystemExit(f"{folder} must hold a .warc.gz and labels.tsv")
    return warcs[0], labels


def sample_topics(topics: list[Topic], count: int, seed: int) -> list[Topic]:
    """The seeded sample of *count* topics a benchmark runs (all when 0 or fewer exist)."""
    if count and len(topics) > count:
        return sorted(random.Random(seed).sample(topics, count), key=lambda t: t.id)
    return topics


def train_models(
    corpus: Corpus, topics: list[Topic], folder: Path, strategies: set[str], warc: Path, scope: str = "any",
    protocol: str = "host-disjoint",
) -> dict[tuple[str, str], tuple[Path, str]]:
    """The models each strategy needs, one per topic, kept from the topic's
    answers by *protocol* (bench.topic_models): (strategy, topic
    id) → (file, good)."""
    models_folder(folder)
    started = time.monotonic()
    models: dict[tuple[str, str], tuple[Path, str]] = {}
    graph = None
    for strategy in sorted(strategies & NEEDS_MODEL):
        for t in topics:
            if strategy == "focused":
                models[(strategy, t.id)] = train_topic_model(corpus, t, folder / f"{t.id}.npz", protocol=protocol)
                continue
            if graph is None:
                graph = link_graph(warc, window=10, cache_dir=ROOT / ".cache")
                graph.labels = corpus.labels
            path = train_lookahead_model(graph, corpus, t, strategy, folder / f"{strategy}-{t.id}.npz", scope, protocol)
            models[(strategy, t.id)] = (path, "")
    print(f"  {len(models)} topic models in {folder} ({time.monotonic() - started:.0f}s)", flush=True)
    return models


def data_folder(section: str) -> Path:
    """Where a section's bulky data lives: made anew by its command, not kept in git."""
    return ROOT / ".cache" / "bench" / section


def leave_out(topics: list[Topic], path: Path | None) -> list[Topic]:
    """*topics* without those *path* names (``--exclude-topics``: develop on
    topics a report does not use)."""
    if path is None:
        return topics
    excluded = topic_ids(path)
    return [t for t in topics if t.id not in excluded]


def topic_ids(path: Path) -> set[str]:
    """The topic ids a topics.jsonl or a topic-ids.txt (one per line) names."""
    if path.suffix == ".jsonl":
        return {t.id for t in read_topics(path)}
    return {line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


def write_per_topic(result: dict[str, Any], path: Path) -> None:
    """Each crawl's figures at each budget, one line each: the per-topic
    summary that stays in git beside the report."""
    fields = ("harvest_rate", "target_recall", "average_relevance", "pages", "pages_ok")
    lines = ["task\ttopic\tstrategy\tbudget\t" + "\t".join(fields)]
    for crawl in sorted(result["crawls"], key=lambda c: (c["task"], c["topic_id"], c["strategy"])):
        for budget, figures in crawl["at"].items():
            values = [figures.get(name) for name in fields]
            shown = ["" if v is None else (f"{v:.4f}" if isinstance(v, float) else str(v)) for v in values]
            lines.append(f"{crawl['task']}\t{crawl['topic_id']}\t{crawl['strategy']}\t{budget}\t" + "\t".join(shown))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_folder(label: str, run: int) -> str:
    """A crawl's folder name: the strategy's label, and its run past the first."""
    return label if run == 1 else f"{label}@run{run}"


def run_of(folder: Path) -> int:
    return int(folder.name.rpartition("@run")[2]) if "@run" in folder.name else 1


def run_variant(variant: Variant, run: int) -> Variant:
    """The variant of one run: its own FOCUS_RANDOM_SEED past the first run."""
    if run == 1:
        return variant
    return replace(variant, settings=(*variant.settings, ("FOCUS_RANDOM_SEED", str(run))))


def mean_over_runs(runs: list[dict[str, Any]], budgets: list[int]) -> dict[str, Any]:
    """One evaluation from several runs: each (topic, task, strategy) the
    mean of its runs' figures (a search length: the median run's; the
    trajectories: the mean over the runs' common length)."""
    grouped: dict[tuple[str, int, str], list[dict[str, Any]]] = defaultdict(list)
    for result in runs:
        for crawl in result["crawls"]:
            grouped[(crawl["topic_id"], crawl["task"], crawl["strategy"])].append(crawl)
    merged = []
    for (topic_id, task, strategy), crawls in sorted(grouped.items()):
        at: dict[str, dict[str, Any]] = {}
        for budget in crawls[0]["at"]:
            at[budget] = {}
            for metric, first in crawls[0]["at"][budget].items():
                found = [c["at"][budget][metric] for c in crawls]
                if metric.startswith("search_length"):  # None: never reached
                    ordered = sorted(found, key=lambda v: math.inf if v is None else v)
                    at[budget][metric] = ordered[len(ordered) // 2]
                elif isinstance(first, (int, float)) and all(isinstance(v, (int, float)) for v in found):
                    at[budget][metric] = statistics.fmean(found)
                else:
                    at[budget][metric] = first
        trajectories = {}
        for key in ("harvest_trajectory", "recall_trajectory"):
            length = min(len(c[key]) for c in crawls)
            trajectories[key] = [statistics.fmean(c[key][i] for c in crawls) for i in range(length)]
        merged.append({"folder": crawls[0]["folder"], "topic_id": topic_id, "task": task, "strategy": strategy,
                       "at": at, **trajectories})
    return {"budgets": budgets, "axis": runs[0]["axis"], "crawls": merged, "summary": summarize(merged, budgets),
            "runs": len(runs)}


def spread_table(runs: list[dict[str, Any]]) -> str:
    """Each run's mean target recall over topics, per task, budget and
    strategy: how far one run's order is from another's."""
    lines = ["**Spread over runs** — target recall %, mean over topics, of each run (min–max):", "",
             "| task | pages | strategy | runs | min–max |", "|---|---:|---|---|---|"]
    first = runs[0]["summary"]
    for task_key, by_budget in first.items():
        for budget, rows in by_budget.items():
            for strategy in rows:
                means = [100 * run["summary"][task_key][budget][strategy]["target_recall"]["mean"] for run in runs
                         if strategy in run["summary"].get(task_key, {}).get(budget, {})]
                lines.append(f"| {task_key.removeprefix('task')} | {budget} | {strategy} | "
                             f"{' / '.join(f'{m:.1f}' for m in means)} | {min(means):.1f}–{max(means):.1f} |")
    return "\n".join(lines) + "\n"


POLITE, FAST, GLOBAL = "polite", "delay0", "global-order"
#: ceilings, not strategies: what politeness costs them is no question (--beside-fast leaves them out)
ORACLES = frozenset({"oracle", "path-oracle"})


def wall_seconds(folder: Path) -> float:
    return float(json.loads((folder / "summary.json").read_text(encoding="utf-8"))["elapsed_seconds"])


def target_hosts(topic: Topic) -> int:
    return len({url.split("/")[2] for url in topic.targets if "://" in url})


def politeness_table(
    polite: dict[str, Any], fast: dict[str, Any] | None, jobs: list[CrawlJob], extra: list[CrawlJob],
    ordered: list[CrawlJob], topics: list[Topic],
) -> str:
    """What politeness costs each strategy (its polite mean target recall ÷
    its own at delay 0, same run) and how long its crawls took; and the
    pages objective's wall time beside the global best-first order's on the
    topics whose targets sit on two hosts or more."""
    lines = []
    if fast is not None:
        lines += ["**Politeness** — mean target recall %, polite ÷ the same crawls at delay 0 (same run), and each "
                  "crawl's wall time (median):", "",
                  "| task | fetches | strategy | polite | delay 0 | ÷ | wall s polite | wall s delay 0 |",
                  "|---|---:|---|---:|---:|---:|---:|---:|"]
        seconds: dict[tuple[str, str], list[float]] = defaultdict(list)
        for manner, group in ((POLITE, jobs), (FAST, extra)):
            for job in group:
                seconds[(manner, job.variant.label)].append(wall_seconds(job.folder))
        for task_key, by_budget in polite["summary"].items():
            for budget, rows in by_budget.items():
                for strategy, figures in rows.items():
                    mine = 100 * figures["target_recall"]["mean"]
                    theirs_row = fast["summary"].get(task_key, {}).get(budget, {}).get(strategy)
                    if theirs_row is None:
                        continue
                    theirs = 100 * theirs_row["target_recall"]["mean"]
                    ratio = f"{mine / theirs:.2f}" if theirs else "—"
                    lines.append(
                        f"| {task_key.removeprefix('task')} | {budget} | {strategy} | {mine:.1f} | {theirs:.1f} | "
                        f"{ratio} | {statistics.median(seconds[(POLITE, strategy)]):.1f} | "
                        f"{statistics.median(seconds[(FAST, strategy)]):.1f} |"
                    )
        lines.append("")
    if ordered:
        spread = {t.id for t in topics if target_hosts(t) >= 2}
        pairs: dict[str, list[float]] = defaultdict(list)
        mine = {(job.topic.id, job.task, job.folder.name): job for job in jobs}  # the name: label and run
        for job in ordered:
            if job.topic.id not in spread:
                continue
            twin = mine[(job.topic.id, job.task, job.folder.name)]
            pairs[job.variant.label].append(wall_seconds(twin.folder) / wall_seconds(job.folder))
        lines += [f"**Wall time beside the global best-first order** (`FOCUS_SLOT_AWARE=false`), polite, on the "
                  f"{len(spread)} of {len(topics)} topics whose targets sit on ≥ 2 hosts: each crawl's wall time ÷ "
                  "the same crawl's in the global order:", "",
                  "| strategy | crawls | median | min–max |", "|---|---:|---:|---|"]
        for label, ratios in pairs.items():
            lines.append(f"| {label} | {len(ratios)} | {statistics.median(ratios):.2f} | "
                         f"{min(ratios):.2f}–{max(ratios):.2f} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    stop_children_on_exit()  # a bench stopped stops its crawls
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/webkb")
    parser.add_argument("--topics", type=int, default=20, help="seeded sample of topics (0: all)")
    parser.add_argument(
        "--exclude-topics", type=Path, default=None,
        help="a topics.jsonl or topic-ids.txt (one id per line) whose topics are left out "
        "(e.g. tune on topics a benchmark does not use)",
    )
    parser.add_argument("--topic-ids", default="", help="comma-separated topic ids to run (default: a sample)")
    parser.add_argument(
        "--topics-file", type=Path, default=None,
        help="topics spread over several sites, named in a spec (bench/topics/*.json: each topic's query, its "
        "sites' index pages as seeds, its relevant pages), in place of the labels' categories; Task 1 only",
    )
    parser.add_argument("--tasks", default="1,2")
    parser.add_argument("--budgets", default="200,500,1000")
    parser.add_argument(
        "--strategies",
        default="random,breadth-first,best-first,oracle,path-oracle",
        help="comma-separated; a variant is LABEL=STRATEGY:SETTING=VALUE;SETTING=VALUE",
    )
    parser.add_argument(
        "--axis", choices=("ok", "fetches"), default="ok",
        help="budgets count pages fetched with status 200 (dead fetches reported apart), or every fetch",
    )
    parser.add_argument(
        "--query", choices=QUERY_KINDS, default="seed-terms",
        help="the topics' queries: the seeds' most telling terms, or the category path's words",
    )
    parser.add_argument(
        "--scope", choices=SCOPES, default="any",
        help="where crawls may go: anywhere, or the seeds' registered domains / hosts (FOCUS_SCOPE)",
    )
    parser.add_argument(
        "--train-scope", choices=SCOPES, default=None,
        help="the links look-ahead models learn from: all, or those inside a domain / host (default: --scope)",
    )
    parser.add_argument(
        "--protocol", choices=PROTOCOLS, default="host-disjoint",
        help="how learning strategies' models are kept from a topic's answers: no page of its hosts but the seeds, "
        "or every page but no label of its relevant pages but the seeds' (a corpus of one site)",
    )
    parser.add_argument(
        "--examples", type=int, default=0,
        help="draw this many relevant and irrelevant example URLs per topic (fixed --seed) for the *-examples "
        "strategies, trained by `scrapy train --examples`; the relevant ones leave every strategy's targets",
    )
    parser.add_argument("--name", default="", help="BENCHMARKS.md section name (default: quality-<corpus>)")
    parser.add_argument(
        "--runs", type=int, default=1,
        help="crawls per topic, task and strategy (each run its own FOCUS_RANDOM_SEED): the tables show each "
        "topic's mean over runs, and a table the spread of the runs' means",
    )
    parser.add_argument(
        "--delay", type=float, default=POLITE_DELAY,
        help="seconds between two requests to a host (Scrapy's template: 1 s to real sites; scaled to the replay)",
    )
    parser.add_argument(
        "--per-host", type=int, default=1, help="requests at a time per host (CONCURRENT_REQUESTS_PER_DOMAIN)"
    )
    parser.add_argument(
        "--latency-ms", type=float, default=POLITE_LATENCY_MS,
        help="the replay answers every request this late (a real server is not on loopback)",
    )
    parser.add_argument(
        "--beside-fast", action="store_true",
        help="crawl every job again with no delay and 8 requests per host (the replay's latency kept): each "
        "strategy's polite target recall ÷ its own at delay 0, and wall times, measured in the same run (the "
        "oracles are left out)",
    )
    parser.add_argument(
        "--global-order", default="",
        help="comma-separated strategy labels crawled politely once more in the global best-first order "
        "(FOCUS_SLOT_AWARE=false): wall time on topics whose targets sit on ≥ 2 hosts",
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="report and plots (default bench/results/SECTION)")
    parser.add_argument("--data", type=Path, default=None,
                        help="eval.json, topics, crawls and models (default .cache/bench/SECTION)")
    parser.add_argument("--no-write", action="store_true", help="do not touch BENCHMARKS.md")
    parser.add_argument(
        "--reuse-crawls",
        action="store_true",
        help="keep crawls that already finished under --data (resume, or re-evaluate only); "
        "without it every crawl is made anew",
    )
    args = parser.parse_args()
    started = time.monotonic()
    warc, labels = corpus_files(args.corpus.resolve())
    name = args.corpus.resolve().name
    section = args.name or f"quality-{name}"
    out = (args.out or ROOT / "bench" / "results" / section).resolve()
    data = (args.data or data_folder(section)).resolve()
    budgets = sorted(int(b) for b in args.budgets.split(","))
    tasks = [int(t) for t in args.tasks.split(",")]
    variants = [Variant.parse(text) for text in args.strategies.split(",")]

    corpus = load_corpus(warc, labels, ROOT / ".cache")
    if args.topics_file is not None:
        topics = spread_topics(corpus, args.topics_file)
        tasks = [1]
    else:
        topics = derive_topics(corpus, rng_seed=args.seed, query=args.query)
    topics = leave_out(topics, args.exclude_topics)
    if args.topic_ids:
        wanted = set(args.topic_ids.split(","))
        unknown = wanted - {t.id for t in topics}
        if unknown:
            raise SystemExit(f"unknown topic ids: {', '.join(sorted(unknown))}")
        topics = [t for t in topics if t.id in wanted]
    topics = sample_topics(topics, args.topics, args.seed)
    out.mkdir(parents=True, exist_ok=True)
    data.mkdir(parents=True, exist_ok=True)
    write_topics(topics, data / "topics.jsonl")
    (out / "topic-ids.txt").write_text("".join(f"{t.id}\n" for t in topics), encoding="utf-8")
    examples = {t.id: draw_examples(corpus, t, args.examples, args.seed) for t in topics} if args.examples else {}
    if examples:  # an example is given, not found: it is no target of any strategy
        topics = [replace(t, targets=[u for u in t.targets if u not in set(examples[t.id][0])]) for t in topics]
        write_topics(topics, data / "topics.jsonl")
    models = train_models(
        corpus, topics, data / "models", {v.strategy for v in variants}, warc, args.train_scope or args.scope,
        args.protocol,
    )
    failed = []
    timing = data / "crawl-time.json"
    manners = {POLITE: politeness(args.delay, args.per_host)}
    if args.beside_fast:
        manners[FAST] = politeness(0, 8)
    global_order = [label for label in args.global_order.split(",") if label]
    unknown = set(global_order) - {v.label for v in variants}
    if unknown:
        raise SystemExit(f"--global-order names no strategy of --strategies: {', '.join(sorted(unknown))}")
    with ReplayProcess(str(warc), latency_ms=args.latency_ms) as replay, ThreadPoolExecutor(args.jobs) as pool:
        if {v.strategy for v in variants} & NEEDS_EXAMPLES:
            if not examples:
                raise SystemExit("the *-examples strategies need --examples N")
            for t in topics:
                path = train_examples_model(
                    examples[t.id], data / "models" / f"examples-{t.id}.npz", replay.proxy_url, ROOT
                )
                for strategy in NEEDS_EXAMPLES:
                    models[(strategy, t.id)] = (path, "")
        jobs = [
            CrawlJob(
                run_variant(v, run),
                t,
                task,
                budgets[-1],
                data / "crawls" / f"task{task}" / t.id / run_folder(v.label, run),
                *(models[(v.strategy, t.id)] if v.strategy in NEEDS_MODEL | NEEDS_EXAMPLES else (None, "")),
                axis=args.axis,
                scope=args.scope,
            )
            for run in range(1, args.runs + 1)
            for t in topics
            for task in tasks
            if t.start(task)
            for v in variants
        ]
        settings_of = {job.folder: manners[POLITE] for job in jobs}
        extra = [replace(job, folder=data / "crawls" / FAST / job.folder.relative_to(data / "crawls"))
                 for job in jobs if job.variant.strategy not in ORACLES] if args.beside_fast else []
        settings_of.update({job.folder: manners[FAST] for job in extra})
        ordered = [replace(job, folder=data / "crawls" / GLOBAL / job.folder.relative_to(data / "crawls"))
                   for job in jobs if job.variant.label in global_order]
        settings_of.update({job.folder: {**manners[POLITE], "FOCUS_SLOT_AWARE": "false"} for job in ordered})
        print(f"{name}: {len(topics)} topics × tasks {tasks} × {len(variants)} strategies = {len(jobs)} crawls of "
              f"{budgets[-1]} pages" + (f", {len(extra) + len(ordered)} more to compare" if extra or ordered else ""),
              flush=True)
        todo = crawls_to_run(jobs + extra + ordered, args.reuse_crawls)
        futures = {pool.submit(run_crawl_job, job, replay.proxy_url, warc, labels, settings_of[job.folder]): job
                   for job in todo}
        for done, future in enumerate(as_completed(futures), 1):
            job, completed = futures[future], future.result()
            if completed.returncode != 0:
                failed.append(job)
                print(f"  FAILED {job.folder}: {completed.stderr[-500:]}", flush=True)
            if done % 10 == 0 or done == len(todo):
                print(f"  {done}/{len(todo)} crawls done ({time.monotonic() - started:.0f}s)", flush=True)
    if failed:
        raise SystemExit(f"{len(failed)} crawls failed")
    earlier = json.loads(timing.read_text())["crawl_seconds"] if len(todo) < len(jobs) and timing.exists() else 0.0
    if todo:  # the time all invocations' crawls took, kept for a resumed run or a re-evaluation
        timing.write_text(json.dumps({"crawl_seconds": earlier + time.monotonic() - started}), encoding="utf-8")
    evaluator = Evaluator(corpus, topics)
    crawls = [read_crawl(job.folder) for job in jobs]
    runs = [evaluator.evaluate([c for c in crawls if run_of(c.folder) == run], budgets, axis=args.axis)
            for run in range(1, args.runs + 1)]
    result = mean_over_runs(runs, budgets) if args.runs > 1 else runs[0]
    (data / "eval.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    write_per_topic(result, out / "per-topic.tsv")
    plots = plot_trajectories(result, out)
    write_report(result, out / "report.md", f"Crawl quality on {name}", plots)
    elapsed = earlier + time.monotonic() - started  # this run plus the crawls of earlier ones it reused
    tables = markdown_tables(result)
    if args.runs > 1:
        tables = spread_table(runs) + "\n" + tables
    if args.runs > 1 or args.topics_file is not None:
        counts = {t.id: t.relevant_count for t in topics}
        steady = {POLITE: steadiness(jobs, corpus, budgets[-1])}
        if extra:
            steady[FAST] = steadiness(extra, corpus, budgets[-1])
        (data / "steadiness.json").write_text(json.dumps(steady, indent=1) + "\n", encoding="utf-8")
        said = {POLITE: "polite", FAST: "at delay 0 (8 requests per host)"}
        tables = "\n".join(steadiness_table(result, counts, said[name]) for name, result in steady.items()) \
            + "\n" + tables
    if args.beside_fast or global_order:
        fast = [evaluator.evaluate([read_crawl(job.folder) for job in extra if run_of(job.folder) == run], budgets,
                                   axis=args.axis) for run in range(1, args.runs + 1)] if extra else []
        fast_result = (mean_over_runs(fast, budgets) if args.runs > 1 else fast[0]) if fast else None
        tables = politeness_table(result, fast_result, jobs, extra, ordered, topics) + "\n" + tables
    print(tables)
    print(f"report: {out / 'report.md'} ({elapsed:.0f}s)")
    if not args.no_write:
        relative = out.relative_to(ROOT)
        images = "\n".join(f"![{p.stem}]({os.path.relpath(p, SECTIONS)})" for p in plots)  # links from the section
        strategies_arg = f" --axis {args.axis} --query {args.query}" + (
            f" --scope {args.scope}" if args.scope != "any" else ""
        ) + (f" --train-scope {args.train_scope}" if args.train_scope else "") + (
            f" --protocol {args.protocol}" if args.protocol != "host-disjoint" else ""
        ) + f" --strategies '{args.strategies}'" + (
            f" --name {section}" if args.name else ""
        )
        if args.exclude_topics:
            strategies_arg += f" --exclude-topics {args.exclude_topics}"
        if args.topic_ids:
            strategies_arg += f" --topic-ids {args.topic_ids}"
        if args.topics_file:
            strategies_arg += f" --topics-file {args.topics_file}"
        if args.reuse_crawls:
            strategies_arg += " --reuse-crawls"
        if args.examples:
            strategies_arg += f" --examples {args.examples}"
        if args.runs > 1:
            strategies_arg += f" --runs {args.runs}"
        if args.beside_fast:
            strategies_arg += " --beside-fast"
        if global_order:
            strategies_arg += f" --global-order {args.global_order}"
        strategies_arg += f" --delay {args.delay:g} --per-host {args.per_host} --latency-ms {args.latency_ms:g}"
        write_section(
            section,
            f"### Crawl quality on {name}: {section}\n\nCommand: `.venv/bin/python -m bench.quality --corpus "
            f"{args.corpus} "
            f"--topics {args.topics} --tasks {args.tasks} --budgets {args.budgets} --jobs {args.jobs} --seed "
            f"{args.seed}{strategies_arg}` "
            f"({len(topics)} topics, {len(jobs)} crawls, {elapsed / 60:.1f} min; report, per-topic figures and "
            "plots in "
            f"`{relative}/`). "
            + (
                f"{args.runs} runs per topic, task and strategy (FOCUS_RANDOM_SEED = run number); the tables below "
                "the spread show each topic's mean over the runs. "
                if args.runs > 1
                else "One crawl per topic, task and strategy. "
            )
            + politeness_text(args.delay, args.per_host, args.latency_ms)
            + f"Crawls stopped at {budgets[-1]} "
            f"{'pages with status 200' if args.axis == 'ok' else 'fetches'}; queries: {args.query}; "
            + SCOPE_TEXT[args.scope]
            + "harvest rate over status-200 pages; p from paired one-tailed t-tests of harvest rate over topics, "
            "raw → after Holm's correction over all tests of a table; models (where a strategy learns) "
            + PROTOCOL_TEXT[args.protocol]
            + (
                " The *-examples strategies crawl with a model trained by `scrapy train --examples` on "
                f"{args.examples} "
                f"relevant and {args.examples} irrelevant example URLs per topic drawn from the labels (seed "
                f"{args.seed}; the pages fetched from the replay through Scrapy); the relevant examples are no "
                "target of any strategy."
                if args.examples
                else ""
            )
            + "\n\n"
            f"{tables}\n{images}\n",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
