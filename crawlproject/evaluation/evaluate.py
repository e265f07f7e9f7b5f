"""Evaluate crawls of topics (docs/methods.md §3): per-crawl metrics at budgets, their
means ± s.e. over topics, paired one-tailed t-tests, and the place of each
strategy between breadth-first and the path oracle.

A crawl is a crawl output folder (history.jsonl + summary.json) whose
summary names its ``topic_id``, ``task`` and ``strategy``.

Two x-axes (``axis``): ``"ok"`` counts pages fetched with status 200 — the
x-axis of the literature's corpus simulations, where every link leads to a
page — and reports the dead fetches (404s of a partial snapshot, errors)
spent on the way beside it; ``"fetches"`` counts every fetch. Reports say
which one a table uses.
"""

from __future__ import annotations

import json
import logging
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from crawlproject.evaluation import metrics
from crawlproject.evaluation.metrics import Fetch
from crawlproject.evaluation.statistics import holm, mean_and_stderr, paired_one_tailed
from crawlproject.evaluation.topics import keyword_counts, relevant_set
from crawlproject.web.text import TermAnalyzer

if TYPE_CHECKING:
    from collections.abc import Iterable

    from crawlproject.corpus.reader import Corpus
    from crawlproject.evaluation.topics import Topic

logger = logging.getLogger(__name__)

#: The floor and the ceilings of "fraction of the gap closed".
FLOOR, CEILING, ONE_STEP_CEILING = "breadth-first", "path-oracle", "oracle"
#: The second baseline the learned strategies are tested against.
NAIVE = "best-first"
TRAJECTORY_STEP = 10
AXES = ("ok", "fetches")
#: Search length: fetches until these fractions of the targets are found.
SEARCH_FRACTIONS = (0.25, 0.50)


@dataclass
class Crawl:
    folder: Path
    topic_id: str
    task: int
    strategy: str
    fetches: list[Fetch]


def read_crawl(folder: Path) -> Crawl:
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    missing = [k for k in ("topic_id", "task", "strategy") if summary.get(k) is None]
    if missing:
        raise ValueError(
            f"{folder}/summary.json lacks {', '.join(missing)}: crawl with "
            "-a topic_id=… -a task=1|2 so the evaluator knows what the crawl was for"
        )
    fetches = []
    with (folder / "history.jsonl").open(encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            # a near-copy of a page fetched before costs a fetch and brings nothing new
            url = "" if record.get("near_duplicate_of") else record["canonical_url"]
            fetches.append(Fetch(url, record.get("status") == 200))
    return Crawl(folder, str(summary["topic_id"]), int(summary["task"]), summary["strategy"], fetches)


class Evaluator:
    """Scores crawls against a corpus's labels and text."""

    def __init__(self, corpus: Corpus, topics: Iterable[Topic], top_n: int = 50):
        self.corpus = corpus
        self.topics = {t.id: t for t in topics}
        self.top_n = top_n
        analyzer = TermAnalyzer(stem=True)
        self.vectorizer = TfidfVectorizer(analyzer=analyzer.terms, sublinear_tf=True)
        self.urls = corpus.urls
        self.index = {url: i for i, url in enumerate(self.urls)}
        self.page_vectors = self.vectorizer.fit_transform(corpus.text[u] for u in self.urls)

    def similarity_to(self, text: str) -> dict[str, float]:
        """TF-IDF cosine of every corpus page to *text*."""
        query = self.vectorizer.transform([text])
        sims = np.asarray((self.page_vectors @ query.T).todense()).ravel()
        return {url: float(sims[i]) for i, url in enumerate(self.urls)}

    def evaluate(self, crawls: list[Crawl], budgets: list[int], axis: str = "ok") -> dict[str, Any]:
        if axis not in AXES:
            raise ValueError(f"axis must be one of {', '.join(AXES)}, got {axis!r}")
        by_topic: dict[tuple[str, int], list[Crawl]] = defaultdict(list)
        for crawl in crawls:
            if crawl.topic_id not in self.topics:
                raise ValueError(f"{crawl.folder}: topic {crawl.topic_id!r} is not in the topics file")
            by_topic[(crawl.topic_id, crawl.task)].append(crawl)
        per_crawl = []
        for (topic_id, task), group in sorted(by_topic.items()):
            per_crawl += self._evaluate_topic(self.topics[topic_id], task, group, budgets, axis)
        return {
            "budgets": budgets,
            "axis": axis,
            "crawls": per_crawl,
            "summary": summarize(per_crawl, budgets),
        }

    def _evaluate_topic(
        self, topic: Topic, task: int, crawls: list[Crawl], budgets: list[int], axis: str = "ok"
    ) -> list[dict[str, Any]]:
        relevant = relevant_set(topic, self.corpus)
        targets = set(topic.targets)
        similarity = self.similarity_to(topic.description)
        pool = {f.url for c in crawls for f in c.fetches if f.ok and f.url in self.index}
        smart_rank = _rank(pool, key=lambda u: -similarity.get(u, 0.0))
        kw_pr_rank = self._keyword_pagerank_rank(pool, topic.keywords)
        top_smart = {u for u, r in smart_rank.items() if r <= self.top_n}
        top_kw_pr = {u for u, r in kw_pr_rank.items() if r <= self.top_n}
        results = []
        for crawl in crawls:
            # The x-axis: every fetch, or only the status-200 ones (then the
            # dead fetches before the n-th good page are counted apart).
            along = [f for f in crawl.fetches if f.ok] if axis == "ok" else crawl.fetches
            fetches = along[: max(budgets)]  # in-flight pages past the budget
            dead_before = _dead_before_each_ok(crawl.fetches) if axis == "ok" else []
            harvest = metrics.harvest_rate(fetches, relevant)
            recall = metrics.target_recall(fetches, targets)
            relevance = metrics.average_relevance(fetches, lambda u: similarity.get(u, 0.0))
            mean_rank = metrics.dynamic_mean_rank(fetches, smart_rank)
            at_budget = {}
            for budget in budgets:
                head = fetches[:budget]
                at_budget[str(budget)] = {
                    "harvest_rate": metrics.at(harvest, budget),
                    "target_recall": metrics.at(recall, budget),
                    "average_relevance": metrics.at(relevance, budget),
                    "dynamic_mean_rank": metrics.at(mean_rank, budget),
                    "coverage_smart": metrics.static_coverage(head, top_smart),
                    "coverage_kw_pr": metrics.static_coverage(head, top_kw_pr),
                    "search_length_10pct": metrics.search_length(head, targets, 0.10),
                    **{
                        f"search_length_{round(fraction * 100)}pct": metrics.search_length(head, targets, fraction)
                        for fraction in SEARCH_FRACTIONS
                    },
                    "pages": len(head),
                    "pages_ok": sum(f.ok for f in head),
                    "dead_fetches": (
                        (dead_before[len(head) - 1] if head else 0) if axis == "ok"
                        else sum(not f.ok for f in head)
                    ),
                }
            results.append(
                {
                    "folder": str(crawl.folder),
                    "topic_id": topic.id,
                    "task": task,
                    "strategy": crawl.strategy,
                    "at": at_budget,
                    "harvest_trajectory": harvest[TRAJECTORY_STEP - 1 :: TRAJECTORY_STEP],
                    "recall_trajectory": recall[TRAJECTORY_STEP - 1 :: TRAJECTORY_STEP],
                }
            )
        return results

    def _keyword_pagerank_rank(self, pool: set[str], keywords: list[str]) -> dict[str, int]:
        """rank_KW,PR: by number of topic keywords, ties by PageRank of the pooled graph."""
        graph = nx.DiGraph()
        graph.add_nodes_from(pool)
        for source in pool:
            for target in self.corpus.outlinks.get(source, ()):
                if target in pool and target != source:
                    graph.add_edge(source, target)
        pagerank = nx.pagerank(graph) if graph.number_of_nodes() else {}
        counts = {u: keyword_counts(self.corpus.text.get(u, ""), keywords) for u in pool}
        return _rank(pool, key=lambda u: (-counts[u], -pagerank.get(u, 0.0)))


def _dead_before_each_ok(fetches: list[Fetch]) -> list[int]:
    """For the n-th status-200 fetch: how many dead fetches came before it.

    >>> _dead_before_each_ok([Fetch("a", False), Fetch("b", True), Fetch("c", False), Fetch("d", True)])
    [1, 2]
    """
    dead, counts = 0, []
    for fetch in fetches:
        if fetch.ok:
            counts.append(dead)
        else:
            dead += 1
    return counts


def _rank(pool: set[str], key: Any) -> dict[str, int]:
    return {url: i for i, url in enumerate(sorted(pool, key=lambda u: (key(u), u)), 1)}


METRICS = ("harvest_rate", "target_recall", "average_relevance", "coverage_smart", "coverage_kw_pr")


def summarize(per_crawl: list[dict[str, Any]], budgets: list[int]) -> dict[str, Any]:
    """Means ± s.e. over topics, gap closed, search lengths, and t-tests
    against breadth-first and best-first with Holm's correction over every
    test of one task and budget."""
    table: dict[str, Any] = {}
    for task in sorted({c["task"] for c in per_crawl}):
        crawls = [c for c in per_crawl if c["task"] == task]
        strategies = sorted({c["strategy"] for c in crawls})
        values = {
            (c["strategy"], c["topic_id"]): c["at"] for c in crawls
        }
        topics = sorted({c["topic_id"] for c in crawls})
        task_table: dict[str, Any] = {}
        for budget in map(str, budgets):
            rows: dict[str, Any] = {}
            for strategy in strategies:
                row: dict[str, Any] = {}
                for metric in METRICS:
                    series = [values[(strategy, t)][budget][metric] for t in topics if (strategy, t) in values]
                    mean, stderr = mean_and_stderr(series)
                    row[metric] = {"mean": mean, "stderr": stderr, "n": len(series)}
                # A crawl that ran out of links is shorter than the budget: its
                # rates "at the budget" are those of the shorter crawl.
                mine = [values[(strategy, t)][budget] for t in topics if (strategy, t) in values]
                row["pages_median"] = float(statistics.median(v["pages"] for v in mine)) if mine else math.nan
                row["dead_fetches_median"] = (
                    float(statistics.median(v.get("dead_fetches", 0) for v in mine)) if mine else math.nan
                )
                row["gap_closed"] = _gap_closed(values, strategy, topics, budget)
                row["gap_closed_of_means"] = _gap_closed_of_means(values, strategy, topics, budget)
                row["recall_gap_closed_of_means"] = _gap_closed_of_means(
                    values, strategy, topics, budget, metric="target_recall"
                )
                row["one_step_gap_closed_of_means"] = _gap_closed_of_means(
                    values, strategy, topics, budget, ceiling=ONE_STEP_CEILING
                )
                row["search_length"] = {
                    key: _search_length(values, strategy, topics, budget, key)
                    for key in (f"search_length_{round(f * 100)}pct" for f in SEARCH_FRACTIONS)
                }
                row["vs_breadth_first"] = _t_test(values, strategy, FLOOR, topics, budget)
                # the floor is not tested against the second baseline
                row["vs_best_first"] = None if strategy == FLOOR else _t_test(values, strategy, NAIVE, topics, budget)
                rows[strategy] = row
            _holm_correct(rows)
            task_table[budget] = rows
        table[f"task{task}"] = task_table
    return table


def _holm_correct(rows: dict[str, Any]) -> None:
    """Adds ``p_holm`` to every test of one table: the family is all of them."""
    tests = [row[key] for row in rows.values() for key in ("vs_breadth_first", "vs_best_first") if row.get(key)]
    for test, adjusted in zip(tests, holm([t["p"] for t in tests]), strict=True):
        test["p_holm"] = adjusted


def _search_length(
    values: dict[Any, Any], strategy: str, topics: list[str], budget: str, key: str
) -> dict[str, Any]:
    """Median search length over topics (a crawl that never got there counts
    as longer than any that did), how many got there, and the ratio of the
    median to breadth-first's on the same topics (< 1: faster)."""
    both = [t for t in topics if (strategy, t) in values and (FLOOR, t) in values]

    def median(name: str) -> float:
        lengths = [values[(name, t)][budget].get(key) for t in both]
        return float(statistics.median(math.inf if n is None else n for n in lengths)) if lengths else math.nan

    reached = sum(values[(strategy, t)][budget].get(key) is not None for t in both)
    mine, floor = median(strategy), median(FLOOR)
    ratio = mine / floor if math.isfinite(mine) and math.isfinite(floor) and floor else math.nan
    return {"median": mine, "reached": reached, "n": len(both), "ratio_to_breadth_first": ratio}


def _paired(
    values: dict[Any, Any], a: str, b: str, topics: list[str], budget: str, metric: str
) -> tuple[list[float], list[float]]:
    both = [t for t in topics if (a, t) in values and (b, t) in values]
    return (
        [values[(a, t)][budget][metric] for t in both],
        [values[(b, t)][budget][metric] for t in both],
    )


def _t_test(
    values: dict[Any, Any], strategy: str, baseline: str, topics: list[str], budget: str
) -> dict[str, Any] | None:
    if strategy == baseline:
        return None
    better, worse = _paired(values, strategy, baseline, topics, budget, "harvest_rate")
    if len(better) < 2 or all(x == y for x, y in zip(better, worse)):
        return None
    t, p = paired_one_tailed(better, worse)
    return {"metric": "harvest_rate", "t": t, "p": p, "n": len(better)}


def _gap_closed_of_means(
    values: dict[Any, Any], strategy: str, topics: list[str], budget: str, ceiling: str = CEILING,
    metric: str = "harvest_rate",
) -> float | None:
    """(mean H − mean H_bfs) / (mean H_path − mean H_bfs) over the topics all
    three crawled (H the metric): steadier than the mean of per-topic
    ratios, whose small denominators swing."""
    both = [t for t in topics if all((s, t) in values for s in (strategy, FLOOR, ceiling))]
    if not both:
        return None
    means = [
        sum(values[(s, t)][budget][metric] for t in both) / len(both)
        for s in (strategy, FLOOR, ceiling)
    ]
    gap = metrics.gap_closed(*means)
    return None if math.isnan(gap) else gap


def _gap_closed(values: dict[Any, Any], strategy: str, topics: list[str], budget: str) -> dict[str, float] | None:
    closed = []
    for topic in topics:
        keys = [(strategy, topic), (FLOOR, topic), (CEILING, topic)]
        if not all(k in values for k in keys):
            continue
        h, floor, ceiling = (values[k][budget]["harvest_rate"] for k in keys)
        gap = metrics.gap_closed(h, floor, ceiling)
        if not math.isnan(gap):
            closed.append(gap)
    if not closed:
        return None
    mean, stderr = mean_and_stderr(closed)
    return {"mean": mean, "stderr": stderr, "n": len(closed)}
