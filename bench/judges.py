"""Judges alone (issue 36): how well each page judge tells relevant pages
from the rest **on the pages a crawl of the topic fetches**, and over the
whole corpus beside it.

    .venv/bin/python -m bench.judges --corpus ../shared/corpora/webkb [--topics 0] [--fetches 300] [--jobs 2]

For every topic (all of them by default) one crawl runs for real (the link
learner from the topic's Task-2 neighbours, every fetch counted, through the
replay, politely as users crawl: bench.quality's politeness); the pages it
answered 200 are the test set, in fetch order. Judges:

* ``query-tf`` — SPEC §2's TF cosine of the topic's query and the page;
* ``query`` — log-TF × IDF, the IDF the language's corrected by the crawl's
  own pages as they arrive (crawlproject.judges.query);
* ``examples 10+10`` / ``examples 10`` — a topic learnt from 10 relevant and
  10 irrelevant example URLs / from 10 relevant only (crawlproject.models.topic_page,
  positive-unlabelled, calibrated on 200 pages near the crawl's seeds as
  ``scrapy train --examples --seeds`` fetches them); measured outside the examples,
  with the precision its own report announced beside the measured one;
* ``examples-nb 10`` — what ``train --examples`` trained before: naive Bayes
  on the examples against the near pages least like them;
* ``query+20 labels`` — the query judge taught by 20 labels, asked by its own
  questions (active learning) and answered from the corpus labels;
  measured on the pages met that were not asked about.

A query judge's ``relevant`` flag is what a crawl calls relevant: its
calibration on the crawl's own pages (crawlproject.judges.calibration) at
the moment each page is fetched, and *settled*: as the crawl's files say
when it ends, every page called again with the calibration fitted on all
the pages met (crawlproject.corpus.collection); precision and recall of both
are shown for the median topic.

AUC needs both kinds of page: a topic whose crawl met only one kind is left
out of that mean (counted). Precision and recall are at each judge's own
threshold (0.5). Nothing here is tuned on a reported topic: the judges'
constants were fixed before the first run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score

from bench.common import ROOT, stop_children_on_exit, write_section
from bench.quality import (
    POLITE_DELAY,
    POLITE_LATENCY_MS,
    corpus_files,
    data_folder,
    leave_out,
    politeness,
    politeness_text,
    sample_topics,
)
from bench.runner import CrawlJob, Variant, crawls_to_run, run_crawl_job
from bench.topic_models import draw_examples
from crawlproject.corpus.reader import Corpus, load_corpus
from crawlproject.evaluation.evaluate import read_crawl
from crawlproject.evaluation.topics import Topic, derive_topics, relevant_set
from crawlproject.judges.learning import LabelTaughtJudge
from crawlproject.judges.query import QueryJudge, TermRarity, TfQueryJudge
from crawlproject.models.examples import IRRELEVANT, RELEVANT, least_like
from crawlproject.models.taxonomy_classifier import ModelSettings, TaxonomyClassifier
from crawlproject.models.topic_page import TopicPageModel
from crawlproject.policy.scope import site_of
from crawlproject.replay.process import ReplayProcess
from crawlproject.web.page import Page
from crawlproject.web.text import TermAnalyzer

EXAMPLES = 10
NEAR_PAGES = 200  # what `scrapy train --examples --sample` fetches by default
LABELS = 20
JUDGES = ("query-tf", "query", "examples 10+10", "examples 10", "examples-nb 10", "query+20 labels")


def near_pages(corpus: Corpus, examples: list[str], count: int) -> list[str]:
    """The first *count* pages a breadth-first crawl from *examples* (seeds)
    meets inside their registered domains (the seeds excluded): the pages
    ``train --examples`` fetches near its seeds."""
    sites = {site_of(url, "domain") for url in examples}
    seen, queue, found = set(examples), deque(examples), []
    while queue and len(found) < count:
        for link in corpus.outlinks.get(queue.popleft(), ()):
            if link in seen or link not in corpus.text or site_of(link, "domain") not in sites:
                continue
            seen.add(link)
            queue.append(link)
            if corpus.text[link].strip():
                found.append(link)
                if len(found) == count:
                    break
    return found


def measure(truth: np.ndarray, scores: np.ndarray, threshold: float = 0.5) -> dict[str, float | None]:
    called = scores >= threshold
    hits = int((called & truth).sum())
    return {
        "auc": float(roc_auc_score(truth, scores)) if 0 < truth.sum() < len(truth) else None,
        "precision": hits / int(called.sum()) if called.any() else None,
        "recall": hits / int(truth.sum()) if truth.any() else None,
        "called": float(called.mean()) if len(called) else None,
    }


class CorpusPages:
    """The corpus's pages analysed once for every topic: Page objects (their
    TF vectors cached) and the examples model's hashed term counts."""

    def __init__(self, corpus: Corpus):
        self.urls = [url for url in corpus.text if corpus.text[url].strip()]
        self.pages = [Page(url, corpus.text[url], [], key=url) for url in self.urls]
        self.row = {url: i for i, url in enumerate(self.urls)}
        self.counts = TopicPageModel().vectorizer.transform([page.text for page in self.pages])


def judge_topic(corpus: Corpus, every: CorpusPages, topic: Topic, met: list[str], seed: int) -> dict[str, Any]:
    """Every judge's figures for one topic on the pages *met* (and the corpus)."""
    relevant = relevant_set(topic, corpus)
    analyzer = TermAnalyzer(stem=True)
    pages = [every.pages[every.row[url]] for url in met]
    truth = np.array([url in relevant for url in met])
    everything = every.urls
    all_truth = np.array([url in relevant for url in everything])
    query = analyzer.vector(topic.query)
    rows: dict[str, Any] = {}

    for name, judge in (("query-tf", TfQueryJudge(query, analyzer)),
                        ("query", QueryJudge(query, analyzer, TermRarity(stem=True)))):
        # in fetch order: the IDF and the calibration as the crawl knew them when each page came
        met_scores, calls = [], []
        for p in pages:
            met_scores.append(judge.relevance(p))
            calls.append(judge.calls(met_scores[-1]))
        # and as the crawl's files say at its end: called again, the calibration fitted on all
        judge.settle(met_scores)
        settled = np.array([judge.calls(score) for score in met_scores], dtype=float)
        rows[name] = {"met": measure(truth, np.array(met_scores)), "flag": measure(truth, np.array(calls, dtype=float)),
                      "settled": measure(truth, settled),
                      "corpus": measure(all_truth, np.array([judge.score(p) for p in every.pages]))}

    positives, negatives = draw_examples(corpus, topic, EXAMPLES, seed)
    near = near_pages(corpus, topic.neighbors, NEAR_PAGES)  # where the crawl starts: `train --examples --seeds`
    shown = set(positives) | set(negatives)
    outside = [i for i, url in enumerate(met) if url not in shown]
    outside_all = [i for i, url in enumerate(everything) if url not in shown]
    text = corpus.text.__getitem__
    for name, irrelevant in (("examples 10+10", negatives), ("examples 10", [])):
        model = TopicPageModel().fit([text(u) for u in positives], [text(u) for u in irrelevant],
                                     [text(u) for u in near], seed)
        announced = (model.report.get("on_unlabelled") or {}).get("precision")
        rows[name] = {
            "met": measure(truth[outside], model.relevance_of_counts(every.counts[[every.row[met[i]] for i in outside]])),
            "corpus": measure(all_truth[outside_all], model.relevance_of_counts(every.counts[outside_all])),
            "announced_precision": announced,
        }
    drawn = least_like([text(u) for u in positives], {u: text(u) for u in near}, max(len(positives), 10))
    nb = TaxonomyClassifier(ModelSettings()).fit(
        [text(u) for u in positives + drawn], [RELEVANT] * len(positives) + [IRRELEVANT] * len(drawn))
    good = nb.good_nodes([RELEVANT])

    def nb_scores(urls: list[str]) -> np.ndarray:
        return np.asarray(nb.classify_texts([text(u) for u in urls])[:, good].sum(axis=1))

    rows["examples-nb 10"] = {"met": measure(truth[outside], nb_scores([met[i] for i in outside])),
                              "corpus": measure(all_truth[outside_all], nb_scores([everything[i] for i in outside_all]))}

    taught = LabelTaughtJudge(QueryJudge(query, analyzer, TermRarity(stem=True)), analyzer, remembered=len(pages) + 1)
    before = np.array([taught.relevance(p) for p in pages])
    asked: list[str] = []
    for _ in range(min(LABELS, len(pages))):
        question = taught.questions(1)
        if not question:
            break
        asked.append(question[0]["url"])
        taught.label(asked[-1], asked[-1] in relevant)
    rest = [i for i, url in enumerate(met) if url not in set(asked)]
    after = np.array(taught.current([met[i] for i in rest]), dtype=float)
    rows["query+20 labels"] = {"met": measure(truth[rest], after), "before": measure(truth[rest], before[rest]),
                               "asked_relevant": sum(url in relevant for url in asked)}
    return {"topic": topic.id, "met": len(met), "relevant_met": int(truth.sum()), "judges": rows}


def mean_of(values: list[float | None]) -> tuple[float | None, int]:
    found = [v for v in values if v is not None]
    return (statistics.fmean(found) if found else None, len(found))


def median_of(values: list[float]) -> float | None:
    """The median (a topic whose judge called nothing relevant counts precision 0)."""
    return statistics.median(values) if values else None


def median_flag(results: list[dict[str, Any]], judge: str, kind: str) -> tuple[float | None, float | None]:
    """The median topic's precision and recall of a judge's ``relevant`` flag
    (*kind*: "flag" as fetched, "settled" at the crawl's end)."""
    flags = [r["judges"][judge][kind] for r in results if kind in r["judges"][judge]]
    return (median_of([f["precision"] or 0.0 for f in flags if f["recall"] is not None]),
            median_of([f["recall"] for f in flags if f["recall"] is not None]))


def table(results: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    lines = [
        "| judge | AUC on pages met | AUC over the corpus | precision (met) | recall (met) | pages called relevant "
        "| `relevant` flag: precision / recall, median topic (as fetched; settled at the end) |",
        "|---|---|---|---|---|---|---|",
    ]
    means: dict[str, Any] = {}
    for judge in JUDGES:
        auc, n = mean_of([r["judges"][judge]["met"]["auc"] for r in results])
        corpus_auc, _ = mean_of([r["judges"][judge].get("corpus", {}).get("auc") for r in results])
        precision, _ = mean_of([r["judges"][judge]["met"]["precision"] for r in results])
        recall, _ = mean_of([r["judges"][judge]["met"]["recall"] for r in results])
        called, _ = mean_of([r["judges"][judge]["met"]["called"] for r in results])
        flag_p, flag_r = median_flag(results, judge, "flag")
        settled_p, settled_r = median_flag(results, judge, "settled")
        means[judge] = {"auc": auc, "topics": n, "precision": precision, "recall": recall,
                        "flag_precision": flag_p, "flag_recall": flag_r,
                        "settled_precision": settled_p, "settled_recall": settled_r}

        def shown(value: float | None, percent: bool = False) -> str:
            return "–" if value is None else (f"{value:.0%}" if percent else f"{value:.3f}")

        lines.append(f"| {judge} | {shown(auc)} ({n} topics) | {shown(corpus_auc)} | {shown(precision)} | "
                     f"{shown(recall)} | {shown(called, True)} | "
                     f"{'–' if flag_p is None else f'{shown(flag_p)} / {shown(flag_r)}'}"
                     f"{'' if settled_p is None else f'; {shown(settled_p)} / {shown(settled_r)}'} |")
    before, _ = mean_of([r["judges"]["query+20 labels"]["before"]["auc"] for r in results])
    means["labels_before"] = before
    announced = [(r["judges"]["examples 10+10"]["announced_precision"], r["judges"]["examples 10+10"]["met"]["precision"])
                 for r in results]
    pairs = [(a, m) for a, m in announced if a is not None and m is not None]
    means["announced_gap"] = statistics.fmean(abs(a - m) for a, m in pairs) if pairs else None
    means["announced"] = statistics.fmean(a for a, _ in pairs) if pairs else None
    return "\n".join(lines), means


def main() -> int:
    stop_children_on_exit()  # a bench stopped stops its crawls
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/webkb")
    parser.add_argument("--topics", type=int, default=0, help="seeded sample of topics (0: every topic)")
    parser.add_argument("--fetches", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--delay", type=float, default=POLITE_DELAY, help="seconds between two requests to a host")
    parser.add_argument("--latency-ms", type=float, default=POLITE_LATENCY_MS, help="the replay answers this late")
    parser.add_argument("--exclude-topics", type=Path, default=None,
                        help="a topics.jsonl or topic-ids.txt whose topics are left out (develop on topics a report does not use)")
    parser.add_argument("--name", default="", help="the section and data folder (default: judges-CORPUS)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    started = time.monotonic()
    warc, labels = corpus_files(args.corpus.resolve())
    name = args.corpus.resolve().name
    section = args.name or f"judges-{name}"
    data = data_folder(section)
    corpus = load_corpus(warc, labels, ROOT / ".cache")
    topics = leave_out(derive_topics(corpus, rng_seed=args.seed, query="seed-terms"), args.exclude_topics)
    topics = [t for t in sample_topics(topics, args.topics, args.seed) if t.neighbors]
    variant = Variant.parse("link-learner")
    manner = f"delay{args.delay:g}-latency{args.latency_ms:g}"  # crawls of another politeness are not reused
    jobs = [CrawlJob(variant, t, 2, args.fetches, data / f"crawls-{manner}" / t.id, axis="fetches") for t in topics]
    print(f"{name}: {len(jobs)} topics, one {args.fetches}-fetch link-learner crawl each (Task 2)", flush=True)
    polite = politeness(args.delay, 1)
    with ReplayProcess(str(warc), latency_ms=args.latency_ms) as replay, ThreadPoolExecutor(args.jobs) as pool:
        todo = crawls_to_run(jobs, reuse=True)  # a re-run measures the judges on the same crawls
        futures = {pool.submit(run_crawl_job, job, replay.proxy_url, warc, labels, polite): job for job in todo}
        for done, future in enumerate(as_completed(futures), 1):
            if future.result().returncode != 0:
                raise SystemExit(f"crawl failed: {futures[future].folder}")
            if done % 10 == 0 or done == len(todo):
                print(f"  {done}/{len(todo)} crawls ({time.monotonic() - started:.0f}s)", flush=True)
    results = []
    every = CorpusPages(corpus)
    for number, (topic, job) in enumerate(zip(topics, jobs, strict=True), 1):
        met = [f.url for f in read_crawl(job.folder).fetches if f.ok and f.url in corpus.text and corpus.text[f.url].strip()]
        met = list(dict.fromkeys(met))
        if len(met) < 2:
            continue
        results.append(judge_topic(corpus, every, topic, met, args.seed))
        if number % 10 == 0:
            print(f"  judged {number}/{len(topics)} topics ({time.monotonic() - started:.0f}s)", flush=True)
    out = ROOT / "bench" / "results" / section
    out.mkdir(parents=True, exist_ok=True)
    (out / "per-topic.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    body, means = table(results)
    labels_line = (f"With {LABELS} labels asked by the judge itself (active learning) the query judge's AUC on the "
                   f"pages met went from {means['labels_before']:.3f} to {means['query+20 labels']['auc']:.3f} "
                   "(the pages asked about left out of both).") if means["labels_before"] is not None else ""
    gap = means["announced_gap"]
    report_line = (f"The 10+10 model's own report announced a precision of {means['announced']:.2f} on average "
                   f"(on 200 pages near the crawl's seeds); measured on the pages met it was "
                   f"{means['examples 10+10']['precision']:.2f} — a mean gap of {gap * 100:.0f} points per topic."
                   ) if gap is not None and means["examples 10+10"]["precision"] is not None else ""
    text = (f"`python -m bench.judges --corpus {args.corpus} --topics {args.topics} --fetches {args.fetches}` — "
            f"{len(results)} topics of {name}, the pages a {args.fetches}-fetch link-learner crawl (Task 2) answered "
            f"200 for (mean {statistics.fmean(r['met'] for r in results):.0f} pages, "
            f"{statistics.fmean(r['relevant_met'] for r in results):.1f} relevant). Means over topics; AUC over topics "
            "whose crawl met both kinds of page; precision/recall at each judge's own threshold (0.5), the examples "
            "judges outside their examples. " + politeness_text(args.delay, 1, args.latency_ms)
            + f"({time.monotonic() - started:.0f}s)\n\n{body}\n\n{labels_line}\n\n{report_line}\n\n"
            f"Per topic: `bench/results/{section}/per-topic.json`.")
    print(text)
    if not args.no_write:
        query = means["query"]
        tf = means["query-tf"]
        figure = (f"politely: query judge AUC on pages met {query['auc']:.3f} (TF {tf['auc']:.3f}); its relevant flag "
                  f"settled P {query['settled_precision'] or 0:.2f} R {query['settled_recall'] or 0:.2f} (median topic); "
                  "10+10 examples "
                  f"P {means['examples 10+10']['precision'] or 0:.2f} R {means['examples 10+10']['recall'] or 0:.2f}")
        write_section(section, text, figure=figure,
                      target="query AUC ≥ 0.85; 10+10 P ≥ 0.7 at R ≥ 0.7; report within 10 points; +0.05 AUC from 20 labels")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
