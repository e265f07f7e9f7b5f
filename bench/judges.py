"""Judges alone (issue 36): how well each page judge tells relevant pages
from the rest **on the pages a crawl of the topic fetches**, and over the
whole corpus beside it.

    .venv/bin/python -m bench.judges --corpus ../shared/corpora/webkb [--topics 0] [--fetches 300] [--jobs 2]

For every topic (all of them by default) one crawl runs for real (the link
learner from the topic's Task-2 neighbours, every fetch counted, through the
replay, politely as users crawl: bench.quality's politeness); the pages it
answered 200 are the test set, in fetch order. Judges:

* ``query-tf`` — docs/methods.md §2's TF cosine of the topic's query and the page;
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
from crawlproject.evaluation.topics import (
    Topic,
    category_keywords,
    derive_topics,
    name_keywords,
    relevant_set,
)
from crawlproject.judges.base import PageJudge
from crawlproject.judges.classifier import EXAMPLES_CALIBRATION, ClassifierJudge, ExamplesJudge
from crawlproject.judges.learning import LabelTaughtJudge
from crawlproject.judges.query import QueryJudge, TermRarity, TfQueryJudge
from crawlproject.models.examples import IRRELEVANT, RELEVANT, least_like
from crawlproject.models.taxonomy_classifier import ModelSettings, TaxonomyClassifier
from crawlproject.models.topic_page import TopicPageModel, examples_precision
from crawlproject.policy.scope import site_of
from crawlproject.replay.process import ReplayProcess
from crawlproject.web.page import Page
from crawlproject.web.text import TermAnalyzer

EXAMPLES = 10
NEAR_PAGES = 200  # what `scrapy train --examples --sample` fetches by default
LABELS = 20
CALIBRATIONS = ("none", "em", "scott", "refit")
JUDGES = ("query-tf", "query", "query-tf (category)", "query (category)", "query-tf (name)", "query (name)",
          "examples 10+10", "examples 10", "examples-nb 10", "query+20 labels")


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
        # counts: pooled over topics, and which topics have enough relevant pages to measure a flag on
        "hits": hits, "calls": int(called.sum()), "relevant": int(truth.sum()),
    }


class CorpusPages:
    """The corpus's pages analysed once for every topic: Page objects (their
    TF vectors cached) and the examples model's hashed term counts."""

    def __init__(self, corpus: Corpus):
        self.urls = [url for url in corpus.text if corpus.text[url].strip()]
        self.pages = [Page(url, corpus.text[url], [], key=url) for url in self.urls]
        self.row = {url: i for i, url in enumerate(self.urls)}
        self.counts = TopicPageModel().vectorizer.transform([page.text for page in self.pages])


class Precomputed(ExamplesJudge):
    """A topic from examples whose probabilities of every page were computed
    ahead in one batch, called through the port as a crawl calls its judge:
    the same calibration (of *kind*), settling and stated precision."""

    def __init__(self, model: TopicPageModel, scores: dict[str, float], kind: str):
        super().__init__(model, kind)
        self.scores = scores

    def score(self, page: Page) -> float:
        return self.scores[page.key]


def as_a_crawl(judge: PageJudge, pages: list[Page], truth: np.ndarray, rows: list[int] | None = None
               ) -> tuple[dict[str, Any], np.ndarray]:
    """*judge* over *pages* in fetch order, as a crawl runs it: its flag as
    each page was fetched, its flag settled at the end, and the precision it
    states then against the one its settled calls have by the labels (every
    page met). *rows*: the pages measured (default: all). And the scores."""
    scores, calls = [], []
    for page in pages:
        scores.append(judge.relevance(page))
        calls.append(judge.calls(scores[-1]))
    judge.settle(scores)
    settled = np.array([judge.calls(score) for score in scores], dtype=float)
    chosen = np.arange(len(pages)) if rows is None else np.asarray(rows, dtype=int)
    stated = judge.precision()
    measured = measure(truth, settled)["precision"]
    return {"flag": measure(truth[chosen], np.array(calls, dtype=float)[chosen]),
            "settled": measure(truth[chosen], settled[chosen]),
            "stated": stated.as_dict() if stated is not None else None,
            # what the interval is made of, so that bench.judges_margin can widen it by any margin
            "tally": {"calls": judge.tally.calibrated_calls, "probability_sum": judge.tally.probability_sum,
                      "variance_sum": judge.tally.variance_sum},
            "stated_measured": measured, "threshold": judge.threshold_in_force()}, np.array(scores)


def query_judges(kind: str, query: dict[str, float], analyzer: TermAnalyzer, pages: list[Page], truth: np.ndarray,
                 every: CorpusPages, all_truth: np.ndarray) -> dict[str, Any]:
    """The two query judges of one kind of query, as a crawl runs them."""
    suffix = "" if kind == "seed-terms" else f" ({kind})"
    rows = {}
    for name, judge in ((f"query-tf{suffix}", TfQueryJudge(query, analyzer)),
                        (f"query{suffix}", QueryJudge(query, analyzer, TermRarity(stem=True)))):
        found, scores = as_a_crawl(judge, pages, truth)
        # the ranking: the scores as the crawl knew them, and over the whole corpus at the end
        found["met"] = measure(truth, scores)
        if kind == "seed-terms":
            found["corpus"] = measure(all_truth, np.array([judge.score(p) for p in every.pages]))
        rows[name] = found
    return rows


def judge_topic(corpus: Corpus, every: CorpusPages, topic: Topic, met: list[str], seed: int) -> dict[str, Any]:
    """Every judge's figures for one topic on the pages *met* (and the corpus)."""
    relevant = relevant_set(topic, corpus)
    analyzer = TermAnalyzer(stem=True)
    pages = [every.pages[every.row[url]] for url in met]
    truth = np.array([url in relevant for url in met])
    everything = every.urls
    all_truth = np.array([url in relevant for url in everything])
    rows: dict[str, Any] = {}
    queries = {"seed-terms": topic.query, "category": " ".join(category_keywords(topic.category)),
               "name": " ".join(name_keywords(topic.category))}
    for kind, words in queries.items():
        rows.update(query_judges(kind, analyzer.vector(words), analyzer, pages, truth, every, all_truth))

    positives, negatives = draw_examples(corpus, topic, EXAMPLES, seed)
    near = near_pages(corpus, topic.neighbors, NEAR_PAGES)  # where the crawl starts: `train --examples --seeds`
    near_truth = np.array([url in relevant for url in near])
    shown = set(positives) | set(negatives)
    outside = [i for i, url in enumerate(met) if url not in shown]
    outside_all = [i for i, url in enumerate(everything) if url not in shown]
    text = corpus.text.__getitem__
    for name, irrelevant in (("examples 10+10", negatives), ("examples 10", [])):
        model = TopicPageModel().fit([text(u) for u in positives], [text(u) for u in irrelevant],
                                     [text(u) for u in near], seed)
        said = model.report.get("on_unlabelled") or {}
        near_called = model.unlabelled_probabilities >= 0.5
        probabilities = model.relevance_of_counts(every.counts[[every.row[url] for url in met]])
        scored = dict(zip(met, probabilities.tolist(), strict=True))
        found, _ = as_a_crawl(Precomputed(model, scored, EXAMPLES_CALIBRATION), pages, truth, outside)
        # each way of calibrating on the crawl, for choosing one leaving a corpus out (bench.judges_choice)
        found["calibrations"] = {}
        for kind in CALIBRATIONS:
            judge = Precomputed(model, scored, kind)
            found["calibrations"][kind] = run = as_a_crawl(judge, pages, truth, outside)[0]
            # the precision told by the examples instead of by the probabilities (positive-unlabelled)
            threshold = judge.threshold_in_force()
            told = examples_precision(model.example_probabilities, probabilities, threshold) \
                if threshold is not None else None
            run["examples_told"] = None if told is None else dict(zip(("value", "low", "high"), told, strict=True))
        rows[name] = {
            **found,
            "met": measure(truth[outside], probabilities[outside]),
            "corpus": measure(all_truth[outside_all], model.relevance_of_counts(every.counts[outside_all])),
            # train's statement, on the pages near the seeds it is about, against their labels
            "train": {"precision": said.get("precision"), "low": said.get("precision_low"),
                      "high": said.get("precision_high"), "calls": int(near_called.sum()),
                      "measured": float(near_truth[near_called].mean()) if near_called.any() else None,
                      "prior": model.prior, "near_relevant": float(near_truth.mean()) if len(near) else None},
            "prior_crawl": float(truth.mean()),
        }
    drawn = least_like([text(u) for u in positives], {u: text(u) for u in near}, max(len(positives), 10))
    nb = TaxonomyClassifier(ModelSettings()).fit(
        [text(u) for u in positives + drawn], [RELEVANT] * len(positives) + [IRRELEVANT] * len(drawn))
    nb_judge = ClassifierJudge(nb, [RELEVANT])
    nb_judge.prepare([pages[i] for i in outside])
    found, scores = as_a_crawl(nb_judge, [pages[i] for i in outside], truth[outside])
    good = nb.good_nodes([RELEVANT])
    corpus_scores = np.asarray(nb.classify_texts([text(everything[i]) for i in outside_all])[:, good].sum(axis=1))
    rows["examples-nb 10"] = {**found, "met": measure(truth[outside], scores),
                              "corpus": measure(all_truth[outside_all], corpus_scores)}

    taught = LabelTaughtJudge(QueryJudge(analyzer.vector(topic.query), analyzer, TermRarity(stem=True)), analyzer,
                              remembered=len(pages) + 1)
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
    labelled = {"met": measure(truth[rest], after), "before": measure(truth[rest], before[rest]),
                "asked_relevant": sum(url in relevant for url in asked)}
    if taught.model is not None:  # its calls, as its crawl makes them
        labelled["settled"] = measure(truth[rest], np.array([taught.calls(p) for p in after], dtype=float))
    rows["query+20 labels"] = labelled
    return {"topic": topic.id, "met": len(met), "relevant_met": int(truth.sum()), "judges": rows}


def mean_of(values: list[float | None]) -> tuple[float | None, int]:
    found = [v for v in values if v is not None]
    return (statistics.fmean(found) if found else None, len(found))


def median_of(values: list[float]) -> float | None:
    """The median (a topic whose judge called nothing relevant counts precision 0)."""
    return statistics.median(values) if values else None


#: a topic's flag is measured when its pages hold this many relevant pages
#: (outside the examples): a precision of 1 call in 2 is no figure
MEASURABLE = 5


def median_flag(results: list[dict[str, Any]], judge: str, kind: str) -> tuple[float | None, float | None]:
    """The median topic's precision and recall of a judge's ``relevant`` flag
    (*kind*: "flag" as fetched, "settled" at the crawl's end), over the
    topics with ``MEASURABLE`` relevant pages measured."""
    flags = [r["judges"][judge][kind] for r in results if kind in r["judges"][judge]]
    flags = [f for f in flags if f["recall"] is not None and f.get("relevant", MEASURABLE) >= MEASURABLE]
    return (median_of([f["precision"] or 0.0 for f in flags]), median_of([f["recall"] for f in flags]))


def pooled_flag(results: list[dict[str, Any]], judge: str, kind: str) -> tuple[float | None, float | None]:
    """Precision and recall of a judge's flag over every topic's pages together."""
    flags = [r["judges"][judge][kind] for r in results if kind in r["judges"][judge]]
    hits, calls, relevant = (sum(f.get(k, 0) for f in flags) for k in ("hits", "calls", "relevant"))
    return (hits / calls if calls else None, hits / relevant if relevant else None)


def shown(value: float | None, percent: bool = False) -> str:
    return "–" if value is None else (f"{value:.0%}" if percent else f"{value:.3f}")


def table(results: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    lines = [
        "| judge | AUC on pages met | AUC over the corpus | precision (met) | recall (met) | pages called relevant "
        "| `relevant` flag: precision / recall, median topic (as fetched; settled at the end) "
        "| settled flag, pooled over topics: precision / recall |",
        "|---|---|---|---|---|---|---|---|",
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
        pooled_p, pooled_r = pooled_flag(results, judge, "settled")
        measurable = sum(1 for r in results if "settled" in r["judges"][judge]
                         and r["judges"][judge]["settled"].get("relevant", 0) >= MEASURABLE)
        means[judge] = {"auc": auc, "topics": n, "precision": precision, "recall": recall,
                        "flag_precision": flag_p, "flag_recall": flag_r,
                        "settled_precision": settled_p, "settled_recall": settled_r,
                        "pooled_precision": pooled_p, "pooled_recall": pooled_r, "measurable": measurable}
        lines.append(f"| {judge} | {shown(auc)} ({n} topics) | {shown(corpus_auc)} | {shown(precision)} | "
                     f"{shown(recall)} | {shown(called, True)} | "
                     f"{'–' if flag_p is None else f'{shown(flag_p)} / {shown(flag_r)}'}"
                     f"{'' if settled_p is None else f'; {shown(settled_p)} / {shown(settled_r)}'}"
                     f"{'' if flag_p is None else f' ({measurable} topics)'} | "
                     f"{'–' if pooled_p is None else f'{shown(pooled_p)} / {shown(pooled_r)}'} |")
    before, _ = mean_of([r["judges"]["query+20 labels"]["before"]["auc"] for r in results])
    means["labels_before"] = before
    statements, means["statements"] = statements_table(results)
    return "\n".join(lines) + "\n\n" + statements, means


def statement_figures(pairs: list[tuple[float, float, float, float]]) -> dict[str, Any]:
    """(stated, low, high, measured) of each topic → how often the interval
    holds the measured precision, and the mean |stated − measured|."""
    return {"topics": len(pairs),
            "held": sum(low <= measured <= high for _, low, high, measured in pairs) / len(pairs) if pairs else None,
            "gap": statistics.fmean(abs(stated - measured) for stated, _, _, measured in pairs) if pairs else None}


def statements_table(results: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """How the precisions stated compare with the labels': the crawl's own
    (each judge, its settled calls on every page met) and train's (on the
    pages near the seeds its report is about)."""
    lines = [
        "| statement | topics stating one | unknown | interval holds the measured | mean \\|stated − measured\\| |",
        "|---|---|---|---|---|",
    ]
    figures: dict[str, Any] = {}
    for judge in JUDGES:
        found = [r["judges"][judge] for r in results if "stated" in r["judges"][judge]]
        if not found:
            continue
        pairs = [(f["stated"]["value"], f["stated"]["low"], f["stated"]["high"], f["stated_measured"])
                 for f in found if f["stated"] is not None and f["stated_measured"] is not None]
        unknown = sum(f["stated"] is None for f in found)
        figures[judge] = {**statement_figures(pairs), "unknown": unknown}
        lines.append(f"| the crawl's, {judge} | {len(pairs)} | {unknown} | {shown(figures[judge]['held'], True)} | "
                     f"{shown(figures[judge]['gap'])} |")
    for judge in ("examples 10+10", "examples 10"):
        said = [r["judges"][judge]["train"] for r in results]
        pairs = [(t["precision"], t["low"], t["high"], t["measured"]) for t in said if t["measured"] is not None]
        figures[f"train {judge}"] = {**statement_figures(pairs), "unknown": len(said) - len(pairs)}
        lines.append(f"| `train`'s, {judge} (pages near the seeds) | {len(pairs)} | {len(said) - len(pairs)} | "
                     f"{shown(figures[f'train {judge}']['held'], True)} | {shown(figures[f'train {judge}']['gap'])} |")
    return "\n".join(lines), figures


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
    parser.add_argument(
        "--exclude-topics",
        type=Path,
        default=None,
        help="a topics.jsonl or topic-ids.txt whose topics are left out (develop on topics a report does not use)",
    )
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
        met = [
            f.url
            for f in read_crawl(job.folder).fetches
            if f.ok and f.url in corpus.text and corpus.text[f.url].strip()
        ]
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
    text = (f"`python -m bench.judges --corpus {args.corpus} --topics {args.topics} --fetches {args.fetches}` — "
            f"{len(results)} topics of {name}, the pages a {args.fetches}-fetch link-learner crawl (Task 2) answered "
            f"200 for (mean {statistics.fmean(r['met'] for r in results):.0f} pages, "
            f"{statistics.fmean(r['relevant_met'] for r in results):.1f} relevant). Means over topics; AUC over topics "
            "whose crawl met both kinds of page; precision/recall (met): the judge's raw score ≥ 0.5, before any "
            "calibration; the `relevant` flag: the judge's calls as a crawl makes them (its calibration as each page "
            f"came) and settled at the crawl's end, its median over the topics whose pages hold {MEASURABLE} relevant "
            "pages or more (a precision of 1 call in 2 is no figure) and pooled over all topics' pages; the examples "
            "judges outside their examples. Queries: the seeds' "
            "terms (no suffix), the category path's words (category), the topic's short name (name: the path's first "
            "and last parts). " + politeness_text(args.delay, 1, args.latency_ms)
            + f"({time.monotonic() - started:.0f}s)\n\n{body}\n\n{labels_line}\n\n"
            "Statements: the precision a judge states at the crawl's end (summary, report, dashboard) against the "
            "precision of its settled calls by the labels, over every page met; `train`'s against the labels of the "
            "pages near the seeds it states it for. \"Unknown\": the judge states none (a query judge without "
            "labels) or called nothing relevant.\n\n"
            f"Per topic: `bench/results/{section}/per-topic.json`.")
    print(text)
    if not args.no_write:
        query = means["query"]
        tf = means["query-tf"]
        examples = means["examples 10+10"]
        stated = means["statements"]["examples 10+10"]
        figure = (f"politely: query judge AUC on pages met {query['auc']:.3f} (TF {tf['auc']:.3f}; category query "
                  f"{means['query (category)']['auc']:.3f}); 10+10 examples settled flag P "
                  f"{examples['settled_precision'] or 0:.2f} R {examples['settled_recall'] or 0:.2f} (median topic); "
                  f"its stated precision's interval holds in {stated['held'] or 0:.0%} of topics, mean gap "
                  f"{stated['gap'] or 0:.2f}")
        write_section(section, text, figure=figure,
                      target="10+10 settled P ≥ 0.8 R ≥ 0.7; 10 relevant P ≥ 0.7; stated interval holds in ≥ 80 % "
                             "of topics, mean gap ≤ 0.10")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
