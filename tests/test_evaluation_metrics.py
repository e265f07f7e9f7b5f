"""Metrics against hand-computed values, and the t-test against scipy."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from crawlproject.evaluation import metrics
from crawlproject.evaluation.metrics import Fetch
from crawlproject.evaluation.statistics import mean_and_stderr, paired_one_tailed

# A small crawl: r = relevant, t = target (relevant, not a seed), x = dead link.
CRAWL = [
    Fetch("seed", True),  # relevant seed, not a target
    Fetch("a", True),
    Fetch("x1", False),
    Fetch("t1", True),
    Fetch("b", True),
    Fetch("t2", True),
    Fetch("x2", False),
    Fetch("t3", True),
]
RELEVANT = {"seed", "t1", "t2", "t3", "t4"}
TARGETS = {"t1", "t2", "t3", "t4"}


def test_harvest_rate_counts_only_ok_pages() -> None:
    # ok pages in order: seed a t1 b t2 t3 -> relevant 1,1,2,2,3,4
    expected = [1 / 1, 1 / 2, 1 / 2, 2 / 3, 2 / 4, 3 / 5, 3 / 5, 4 / 6]
    assert metrics.harvest_rate(CRAWL, RELEVANT) == pytest.approx(expected)


def test_target_recall() -> None:
    expected = [0, 0, 0, 1 / 4, 1 / 4, 2 / 4, 2 / 4, 3 / 4]
    assert metrics.target_recall(CRAWL, TARGETS) == pytest.approx(expected)


def test_search_length() -> None:
    assert metrics.search_length(CRAWL, TARGETS, 0.25) == 4
    assert metrics.search_length(CRAWL, TARGETS, 0.5) == 6
    assert metrics.search_length(CRAWL, TARGETS, 0.75) == 8
    assert metrics.search_length(CRAWL, TARGETS, 1.0) is None


def test_average_relevance() -> None:
    scores = {"seed": 1.0, "a": 0.0, "t1": 0.5, "b": 0.25, "t2": 0.75, "t3": 1.0}
    trajectory = metrics.average_relevance(CRAWL, scores.__getitem__)
    assert trajectory[0] == 1.0
    assert trajectory[3] == pytest.approx((1.0 + 0.0 + 0.5) / 3)
    assert trajectory[-1] == pytest.approx(3.5 / 6)


def test_static_coverage_and_dynamic_mean_rank() -> None:
    assert metrics.static_coverage(CRAWL, {"t1", "t4", "x1"}) == pytest.approx(1 / 3)
    rank = {"t1": 1, "t2": 2, "a": 5}
    trajectory = metrics.dynamic_mean_rank(CRAWL, rank)
    assert math.isnan(trajectory[0])
    assert trajectory[1] == 5 and trajectory[3] == pytest.approx(3.0) and trajectory[-1] == pytest.approx(8 / 3)


def test_at_budget_and_gap_closed() -> None:
    trajectory = metrics.harvest_rate(CRAWL, RELEVANT)
    assert metrics.at(trajectory, 4) == pytest.approx(2 / 3)
    assert metrics.at(trajectory, 100) == trajectory[-1]
    assert metrics.gap_closed(0.3, 0.1, 0.5) == pytest.approx(0.5)
    assert math.isnan(metrics.gap_closed(0.3, 0.2, 0.2))


def test_mean_and_standard_error_by_hand() -> None:
    mean, stderr = mean_and_stderr([0.1, 0.2, 0.6, float("nan")])
    assert mean == pytest.approx(0.3)
    assert stderr == pytest.approx(math.sqrt(((0.2**2 + 0.1**2 + 0.3**2) / 2) / 3))


def test_paired_one_tailed_t_test_matches_a_hand_computation_and_scipy() -> None:
    better = [0.30, 0.25, 0.40, 0.22, 0.35, 0.28]
    worse = [0.10, 0.20, 0.15, 0.21, 0.12, 0.30]
    t, p = paired_one_tailed(better, worse)
    diffs = [b - w for b, w in zip(better, worse)]
    n = len(diffs)
    mean = sum(diffs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    t_by_hand = mean / (sd / math.sqrt(n))
    assert t == pytest.approx(t_by_hand)
    assert p == pytest.approx(stats.t.sf(t_by_hand, n - 1))
    assert p == pytest.approx(stats.ttest_rel(better, worse, alternative="greater").pvalue)
    # and the other direction is not significant
    assert paired_one_tailed(worse, better)[1] == pytest.approx(1 - p)


def test_gap_closed_of_means_against_hand_computation() -> None:
    from crawlproject.evaluation.evaluate import _gap_closed_of_means

    def at(h: float) -> dict[str, dict[str, float]]:
        return {"500": {"harvest_rate": h}}

    values = {
        ("best-first", "t1"): at(0.3), ("breadth-first", "t1"): at(0.1), ("path-oracle", "t1"): at(0.5),
        ("best-first", "t2"): at(0.2), ("breadth-first", "t2"): at(0.2), ("path-oracle", "t2"): at(0.3),
    }
    # means: best 0.25, bfs 0.15, path 0.4 -> (0.25-0.15)/(0.4-0.15) = 0.4
    assert _gap_closed_of_means(values, "best-first", ["t1", "t2"], "500") == pytest.approx(0.4)
