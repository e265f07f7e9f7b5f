"""Oracle and random strategies, and re-scoring the frontier."""

from __future__ import annotations

from scrapy import Request

from crawlproject.spiders import RandomSpider
from crawlproject.strategies.base import Topic
from crawlproject.strategies.baselines import (
    OneStepOracleStrategy,
    PathOracleStrategy,
    RandomStrategy,
)
from crawlproject.web.meta import SCORE as SCORE_KEY
from crawlproject.web.page import Link, Page
from crawlproject.web.text import TermAnalyzer
from tests.conftest import open_scheduler

#   a -> b -> c(relevant),  a -> d -> e -> f(relevant),  g isolated
INLINKS = {"http://x/b": ["http://x/a"], "http://x/c": ["http://x/b"], "http://x/d": ["http://x/a"],
           "http://x/e": ["http://x/d"], "http://x/f": ["http://x/e"], "http://x/a": [], "http://x/g": []}
RELEVANT = {"http://x/c", "http://x/f"}


def page(url: str, *targets: str) -> Page:
    return Page(url, "", [Link(t, "") for t in targets])


def test_path_oracle_scores_minus_the_distance_to_the_nearest_relevant_page() -> None:
    oracle = PathOracleStrategy(Topic("q"), TermAnalyzer(), RELEVANT, INLINKS)
    scores = oracle.score_links(page("http://x/a", "http://x/b", "http://x/d", "http://x/g", "http://dead/"), None)
    assert scores == [-1.0, -2.0, -1_000_000.0, -1_000_000.0]


def test_path_oracle_looks_past_fetched_relevant_pages() -> None:
    oracle = PathOracleStrategy(Topic("q"), TermAnalyzer(), RELEVANT, INLINKS)
    fetched = page("http://x/c")
    assert oracle.own_judge().score(fetched) == 1.0
    oracle.page_arrived(fetched, 1.0)  # c fetched: b now leads nowhere new
    assert oracle.score_links(page("http://x/a", "http://x/b", "http://x/e"), None) == [-1_000_000.0, -1.0]


def test_one_step_oracle_knows_each_target() -> None:
    oracle = OneStepOracleStrategy(Topic("q"), TermAnalyzer(), RELEVANT)
    assert oracle.score_links(page("http://x/a", "http://x/c", "http://x/b"), None) == [1.0, 0.0]


def test_random_is_reproducible_for_a_seed() -> None:
    links = page("http://x/a", *[f"http://x/{i}" for i in range(5)])
    first = RandomStrategy(Topic(), TermAnalyzer(), seed=3).score_links(links, None)
    assert first == RandomStrategy(Topic(), TermAnalyzer(), seed=3).score_links(links, None)
    assert first != RandomStrategy(Topic(), TermAnalyzer(), seed=4).score_links(links, None)


def test_a_rescore_reorders_the_queued_urls() -> None:
    _, scheduler, _ = open_scheduler(RandomSpider, seeds="http://x/")
    for i in range(5):
        scheduler.enqueue_request(Request(f"http://x/{i}", meta={SCORE_KEY: i / 10}))
    scheduler.rescore(lambda url, score, meta: -score)  # what the frontier port asks (CrawlerFrontier)
    assert [scheduler.next_request().url for _ in range(5)] == [f"http://x/{i}" for i in range(5)]  # type: ignore[union-attr]
    assert scheduler.stats.get_value("frontier/rescored") == 1
