"""SharkSearch and Fish-Search formulas on hand-made pages (docs/methods.md §2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse

from crawlproject.judges.query import TfQueryJudge
from crawlproject.strategies.base import Topic
from crawlproject.strategies.shark_search import (
    FishSearchStrategy,
    SharkSearchStrategy,
)
from crawlproject.web.meta import DEPTH_BUDGET as DEPTH_KEY
from crawlproject.web.meta import INHERITED as INHERITED_KEY
from crawlproject.web.page import Page
from crawlproject.web.text import TermAnalyzer, cosine

if TYPE_CHECKING:
    from pathlib import Path

ANALYZER = TermAnalyzer(stem=False)
#: the judge every SharkSearch crawl of the query had before judges were composed: sim(q, p)
JUDGE = TfQueryJudge(ANALYZER.vector("jazz music"), ANALYZER)


def make_page(body: str, meta: dict[str, object] | None = None, url: str = "http://h/p") -> Page:
    request = Request(url, meta=meta or {})
    response = HtmlResponse(url, body=f"<html><body>{body}</body></html>".encode(), request=request)
    return Page.from_response(response, meta=response.meta)


def shark(**kwargs: float) -> SharkSearchStrategy:
    params = {"gamma": 0.7, "delta": 0.5, "beta": 0.8, "depth": 3, "context_words": 3, **kwargs}
    return SharkSearchStrategy(Topic("jazz music"), ANALYZER, **params)  # type: ignore[arg-type]


def sim(a: str, b: str) -> float:
    return cosine(ANALYZER.vector(a), ANALYZER.vector(b))


def test_anchor_and_inherited_from_a_relevant_parent() -> None:
    page = make_page("jazz festival <a href='/a'>jazz concerts</a> tickets")
    strategy = shark()
    relevance = JUDGE.score(page)
    assert relevance == pytest.approx(sim("jazz music", "jazz festival jazz concerts tickets"))
    [score] = strategy.score_links(page, relevance)
    inherited = 0.5 * relevance
    anchor = sim("jazz music", "jazz concerts")
    neighborhood = 0.8 * anchor + 0.2 * 1.0  # anchor > 0: context counts 1
    assert score == pytest.approx(0.7 * inherited + 0.3 * neighborhood)
    assert strategy.child_state(page, relevance) == {INHERITED_KEY: inherited, DEPTH_KEY: 3}


def test_context_counts_when_the_anchor_says_nothing() -> None:
    page = make_page("tickets for the music of <a href='/a'>click here</a> tonight only please")
    strategy = shark()
    relevance = JUDGE.score(page)
    [score] = strategy.score_links(page, relevance)
    context = sim("jazz music", "the music of tonight only please")  # 3 words each side
    assert score == pytest.approx(0.7 * 0.5 * relevance + 0.3 * (0.2 * context))


def test_irrelevant_parent_passes_on_a_decayed_inheritance_and_less_depth() -> None:
    page = make_page("nothing here <a href='/a'>more</a>", {INHERITED_KEY: 0.4, DEPTH_KEY: 2})
    strategy = shark()
    assert JUDGE.score(page) == 0.0
    [score] = strategy.score_links(page, 0.0)
    assert score == pytest.approx(0.7 * 0.5 * 0.4)
    assert strategy.child_state(page, 0.0) == {INHERITED_KEY: 0.2, DEPTH_KEY: 1}


def test_depth_bound_reaching_zero_stops_the_path() -> None:
    page = make_page("nothing <a href='/a'>x</a> <a href='/b'>y</a>", {INHERITED_KEY: 0.1, DEPTH_KEY: 1})
    assert shark().score_links(page, 0.0) == [None, None]
    # a relevant page resets the budget to d
    relevant = make_page("jazz <a href='/a'>x</a>", {INHERITED_KEY: 0.0, DEPTH_KEY: 1})
    assert shark().score_links(relevant, 1.0)[0] is not None


def test_frames_and_image_maps_have_anchors() -> None:
    page = make_page("<map><area href='/m' alt='jazz map'></map><iframe src='/f' title='music'></iframe>")
    contexts = {link.url: page.link_context(link, 3).anchor for link in page.links}
    assert contexts == {"http://h/m": "jazz map", "http://h/f": "music"}


def test_fish_search_is_binary_and_ignores_the_neighborhood() -> None:
    fish = FishSearchStrategy(Topic("jazz music"), ANALYZER, gamma=1.0, delta=0.5, depth=2)
    relevant = make_page("a page about jazz <a href='/a'>anything</a>")
    judge = fish.own_judge()  # Fish-Search's own rule: any query term
    assert judge.score(relevant) == 1.0
    assert fish.score_links(relevant, 1.0) == [0.5]
    irrelevant = make_page("cooking <a href='/a'>recipes</a>", {INHERITED_KEY: 0.5, DEPTH_KEY: 2})
    assert judge.score(irrelevant) == 0.0
    assert fish.score_links(irrelevant, 0.0) == [0.25]
    assert fish.child_state(irrelevant, 0.0)[DEPTH_KEY] == 1


def test_spiders_build_their_strategies_from_settings(tmp_path: Path) -> None:
    from crawlproject.spiders import FishSearchSpider, SharkSearchSpider
    from tests.conftest import built_spider

    settings = {"FOCUS_SHARK_GAMMA": 0.4, "FOCUS_SHARK_DEPTH": 5, "FOCUS_CONTEXT_WORDS": 7,
                "FOCUS_OUTPUT_DIR": str(tmp_path / "%(name)s")}  # a spider settles its output folder when built
    shark_spider = built_spider(SharkSearchSpider, settings, query="jazz", seeds="http://h/")
    strategy = shark_spider.focus.strategy
    assert isinstance(strategy, SharkSearchStrategy)
    assert (strategy.gamma, strategy.depth, strategy.context_words) == (0.4, 5, 7)
    fish_spider = built_spider(FishSearchSpider, settings, query="jazz", seeds="http://h/")
    assert isinstance(fish_spider.focus.strategy, FishSearchStrategy) and fish_spider.focus.strategy.gamma == 1.0
