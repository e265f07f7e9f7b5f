"""A crawl's scoring composed: one factory builds a page
judge (``FOCUS_JUDGE``) and a link scorer (``FOCUS_STRATEGY``) apart, any
with any; no strategy judges a page itself; each link scorer runs against a
fake frontier port with a fixed judge."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, ClassVar

import pytest
from scrapy.utils.test import get_crawler

from crawlproject.judges.base import PageJudge
from crawlproject.judges.learning import LabelTaughtJudge
from crawlproject.models.layer_classifier import ContextGraphModel
from crawlproject.models.link_value_model import LinkValueModel
from crawlproject.models.taxonomy_classifier import TaxonomyClassifier
from crawlproject.strategies import STRATEGIES, strategy_class
from crawlproject.strategies.base import CrawlStrategy, Topic
from crawlproject.strategies.factory import Focus, build_focus
from crawlproject.strategies.ports import DetachedFrontier
from crawlproject.web.page import Link, Page
from crawlproject.web.text import TermAnalyzer
from tests.conftest import UNIVERSITY_HOMES, run_crawl
from tests.test_lookahead import cross_site_graph, hand_graph
from tests.test_strategies_chakrabarti import TRAINING

#: strategies that need no trained model nor labels: crawled with every judge
MODEL_FREE = ("breadth-first", "random", "best-first", "shark-search", "fish-search", "infospiders", "link-learner")
QUERY = "course syllabus homework lecture"


class FixedJudge(PageJudge):
    """A judge whose verdicts the test sets (0.7 for every page)."""

    name = "fixed"

    def score(self, page: Page) -> float:
        return 0.7


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A small model file for each strategy trained with one, and labels for the oracles."""
    folder = tmp_path_factory.mktemp("models")
    ContextGraphModel(depth=2, features=100).fit(hand_graph()).save(folder / "cg.npz")
    LinkValueModel(gamma=0.5, horizon=3).fit(cross_site_graph()).save(folder / "lv.npz")
    texts, categories = zip(*TRAINING, strict=True)
    TaxonomyClassifier().fit(list(texts), list(categories)).save(folder / "taxonomy.npz")
    (folder / "labels.tsv").write_text("url\tcategory\nhttp://u.test/cs1/\tcourse\nhttp://u.test/\tother\n")
    return {"context-graph": str(folder / "cg.npz"), "link-value": str(folder / "lv.npz"),
            "focused": str(folder / "taxonomy.npz"), "labels": str(folder / "labels.tsv")}


def settings_for(name: str, models: dict[str, str], judge: str) -> dict[str, Any]:
    settings: dict[str, Any] = {"FOCUS_JUDGE": judge, "FOCUS_LABELS": models["labels"], "FOCUS_RELEVANT": "course"}
    if name in ("context-graph", "link-value", "focused"):
        settings["FOCUS_MODEL"] = models[name]
    if name == "focused":
        settings["FOCUS_GOOD"] = "course"
    return settings


def page(url: str = "http://u.test/", text: str = "course syllabus homework", links: int = 3) -> Page:
    return Page(url, text, [Link(f"{url}cs{i}/", "course cs") for i in range(links)], meta={})


BUILDABLE = sorted(set(STRATEGIES) - {"path-oracle"})  # the path oracle reads a whole corpus (tests/test_crawl_spiders)


@pytest.mark.parametrize("name", BUILDABLE)
@pytest.mark.parametrize("judge", ["auto", "query", "query-tf"])
def test_any_judge_with_any_strategy_builds_and_scores_a_page(name: str, judge: str, models: dict[str, str]) -> None:
    focus = build_focus(get_crawler(settings_dict=settings_for(name, models, judge)), Topic(query=QUERY), named=name)
    assert isinstance(focus.strategy, strategy_class(name))
    own = focus.strategy.own_judge()
    assert isinstance(focus.judge, LabelTaughtJudge)  # FOCUS_JUDGE_LABELS: the user's labels teach any judge
    expected = {"auto": own.name if own is not None else "query-tf", "query": "query", "query-tf": "query-tf"}[judge]
    assert focus.judge.base.name == expected
    fetched = page()
    relevance = focus.on_page(fetched)
    assert relevance is not None and 0.0 <= relevance <= 1.0 and focus.relevant(relevance) in (True, False)
    scores = focus.strategy.score_links(fetched, relevance)
    assert len(scores) == len(fetched.links)
    assert (
        pickle.loads(pickle.dumps(focus.strategy.child_state(fetched, relevance))) is not None
    )  # kept in the frontier


class TopicWordJudge(PageJudge):
    """A judge of one's own, as a contributor writes one: one class, built by its from_settings."""

    name = "topic-word"

    def __init__(self, word: str, analyzer: TermAnalyzer):
        super().__init__()
        self.word, self.analyzer = word, analyzer

    @classmethod
    def from_settings(cls, context: Any) -> PageJudge:
        return cls(sorted(context.query)[0], context.analyzer)  # the topic's first term, as the crawl spells it

    def score(self, page: Page) -> float:
        return 1.0 if self.word in page.vector(self.analyzer) else 0.0


def test_a_judge_is_named_as_a_strategy_is_by_a_name_or_an_import_path() -> None:
    from crawlproject.config import SettingsError

    settings = {"FOCUS_JUDGE": "tests.test_composition.TopicWordJudge", "FOCUS_JUDGE_LABELS": False}
    focus = build_focus(get_crawler(settings_dict=settings), Topic(query=QUERY), named="best-first")
    assert isinstance(focus.judge, TopicWordJudge)
    assert focus.on_page(page(text="a course page")) == 1.0 and focus.on_page(page(text="a lab page")) == 0.0
    for wrong, said in (("querytf", "FOCUS_JUDGE='querytf' names no judge: did you mean 'query-tf'?"),
                        ("tests.test_composition.NoSuchJudge", "cannot be imported"),
                        ("tests.test_composition.page", "is not a PageJudge class")):
        with pytest.raises(SettingsError, match=said):
            build_focus(get_crawler(settings_dict={"FOCUS_JUDGE": wrong}), Topic(query=QUERY), named="best-first")


def test_no_strategy_judges_pages_itself() -> None:
    """The judge is a port of its own: a strategy class has no relevance
    method, and a strategy built alone holds no judge."""
    for name in STRATEGIES:
        chosen = strategy_class(name)
        assert not hasattr(chosen, "page_relevance") and "judge" not in vars(chosen), name


@pytest.mark.parametrize("name", BUILDABLE)
def test_each_link_scorer_runs_against_a_fake_frontier_port_with_a_fixed_judge(
    name: str, models: dict[str, str],
) -> None:
    from crawlproject.strategies.base import BuildContext

    frontier = DetachedFrontier({"http://u.test/queued/": (0.5, {})})
    context = BuildContext(get_crawler(settings_dict=settings_for(name, models, "auto")).settings,
                           Topic(query=QUERY), frontier)
    strategy: CrawlStrategy = strategy_class(name).from_settings(context)
    focus = Focus(FixedJudge(), strategy)
    for n in range(30):  # enough pages for the periodic work (learning, re-scores) to run
        fetched = page(f"http://u.test/p{n}/")
        relevance = focus.on_page(fetched)
        assert relevance == 0.7
        scores = strategy.score_links(fetched, relevance)
        assert len(scores) == 3 and all(score is None or isinstance(score, float) for score in scores)
        strategy.after_page(fetched, relevance)
    frontier.close()  # what a strategy saves at the end goes through the port too
    assert set(frontier.queued) == {"http://u.test/queued/"}  # re-scored maybe, never dropped by a strategy


@pytest.mark.parametrize("name", MODEL_FREE)
@pytest.mark.parametrize("judge", ["auto", "query"])
def test_any_judge_with_any_strategy_crawls_the_replay(
    webkb_replay: Any, tmp_path: Path, name: str, judge: str
) -> None:
    result = run_crawl("focus", tmp_path / "out", UNIVERSITY_HOMES[:2], webkb_replay.proxy_url, query=QUERY,
                       settings={"CLOSESPIDER_PAGECOUNT": 12, "FOCUS_JUDGE": judge, "FOCUS_STORE_PAGES": False},
                       extra_args=["-a", f"strategy={name}"])
    assert result.returncode == 0, result.log[-2000:]
    judged = [record for record in result.history if record.get("status") == 200]
    assert len(judged) >= 6  # of 12 fetches (a few links lead to 404s)
    assert all(isinstance(item["relevance"], float) and isinstance(item["relevant"], bool) for item in judged)
    expected = {"auto": "any-term" if name == "fish-search" else "query-tf", "query": "query"}[judge]
    assert result.summary["judge"]["judge"] == f"{expected}+labels"


def test_every_strategy_has_a_spider_named_after_it_generated_from_the_registry() -> None:
    # Twelve alias spiders were written by hand in eight files; a strategy added to the
    # registry now has its spider with no code to write, and Scrapy's loader finds each once.
    from scrapy.spiderloader import SpiderLoader
    from scrapy.utils.project import get_project_settings

    import crawlproject.spiders
    from crawlproject.spiders.strategy_spiders import SPIDERS
    from crawlproject.strategies import STRATEGIES

    assert set(SPIDERS) == set(STRATEGIES)
    loader = SpiderLoader.from_settings(get_project_settings())
    for strategy, spider in SPIDERS.items():
        assert spider.strategy_class == strategy and spider.name == strategy.replace("-", "")
        assert loader.load(spider.name) is spider
        assert getattr(crawlproject.spiders, spider.__name__) is spider
    assert SPIDERS["breadth-first"].custom_settings == {"FOCUS_FRONTIER_ORDER": "fifo"}
    assert crawlproject.spiders.SharkSearchSpider.__name__ == "SharkSearchSpider"


def test_only_the_focus_calls_the_judge_and_the_strategy() -> None:
    # The spider called five of their hooks in order, the dashboard and the progress
    # line called the judge's; one owner keeps the order they must be called in.
    import re

    from tests.conftest import ROOT

    package = ROOT / "crawlproject"
    owners = {package / "strategies", package / "judges"}
    # a judge's or a strategy's method called on what holds them (a dict or a name called "judge" aside)
    calling = re.compile(r"\b(?:self|spider|focus)\.(?:judge|strategy)\.(?!name\b)\w+\(|"
                         r"getattr\([^)]*[\"'](?:judge|strategy)[\"']")
    found = [f"{path.relative_to(ROOT)}: {match.group()}"
             for path in package.rglob("*.py") if not any(owner in path.parents for owner in owners)
             for match in calling.finditer(path.read_text(encoding="utf-8"))]
    assert found == []


@pytest.mark.parametrize("name", BUILDABLE)
def test_a_topic_bound_to_its_sites_has_one_home_the_focus_applies(name: str, models: dict[str, str]) -> None:
    """FOCUS_HOME binds the strategies that learn what pages are worth, and
    no naive baseline; the factory builds the home once, the Focus applies it
    (the home-site rule in one place) and hands the same object to
    whatever model reads it."""
    settings = {**settings_for(name, models, "auto"), "FOCUS_HOME": "http://u.test/"}
    focus = build_focus(get_crawler(settings_dict=settings), Topic(query=QUERY), named=name)
    strategy = focus.strategy
    assert focus.home is not None  # the crawl's home, whatever the strategy (the scheduler's wait keeps to it)
    if not strategy.bound_by_home:
        assert not strategy.home.bound
        return
    assert strategy.home is focus.home
    for inner in ("placer", "classifier"):  # the context graph's and the focused crawler's own judges
        if hasattr(strategy, inner):
            assert getattr(strategy, inner).home is focus.home
    away = Page("http://elsewhere.test/p/", "course syllabus homework", [Link("http://elsewhere.test/q/", "course")],
                meta={})
    at_home = page()
    at_home.links.append(Link("http://elsewhere.test/cs/", "course cs"))
    for fetched in (at_home, away):
        relevance = focus.on_page(fetched)
        scores = focus.score_links(fetched, relevance)
        floor = strategy.off_home_score()
        if floor is not None and scores[-1] is not None:  # the link that leaves home: below every link at home
            assert all(s is None or scores[-1] < s for s in scores[:-1])
        focus.after_page(fetched, relevance)


def test_the_wait_keeps_to_the_home_of_a_site_bound_model_that_no_setting_names(tmp_path: Path) -> None:
    """One home per crawl: a link-value model that counts only its
    home's targets makes the seeds' sites home, with no FOCUS_HOME; the
    scheduler's wait reads the same home, so it bars a host away from it.
    (The wait built its own home from FOCUS_HOME alone, and fed that host.)"""
    from crawlproject.spiders.any_strategy import AnyStrategySpider
    from tests.conftest import open_scheduler

    model = tmp_path / "lv.npz"
    LinkValueModel(gamma=0.5, horizon=3, value_scope="domain").fit(cross_site_graph()).save(model)
    settings = {"FOCUS_MODEL": str(model), "FOCUS_PAGES_WAIT": 1, "FOCUS_OBJECTIVE": "pages"}
    _, scheduler, spider = open_scheduler(AnyStrategySpider, settings, strategy="link-value", seeds="http://u.test/")
    assert spider.focus.home is not None
    harvest = scheduler.objective.harvest
    assert harvest.home is spider.focus.home
    assert "far.test" in harvest and "u.test" not in harvest  # away: barred; at home, never tried: may go
    scheduler.close("finished")


def test_the_wait_asks_again_while_a_home_of_seeds_grows() -> None:
    """A home of the seeds' sites grows as seeds from Redis arrive: a host
    the wait found at home before any seed is asked again, not remembered."""
    from crawlproject.frontier.host_harvest import HostHarvest
    from crawlproject.policy.scope import HomeSites
    from crawlproject.web import meta as keys

    home = HomeSites("domain", seeds_are_home=True)
    harvest = HostHarvest(home)
    assert "far.test" not in harvest  # no seed yet: nothing is away
    home.note(Page("http://u.test/", "", [], meta={keys.SEED: True}))
    assert "far.test" in harvest and "u.test" not in harvest


def test_a_naive_baseline_keeps_the_wait_home_but_is_not_bound() -> None:
    """FOCUS_HOME is the crawl's home for every strategy: best-first's wait
    keeps to it, while its link scores stay those of the topic alone."""
    focus = build_focus(get_crawler(settings_dict={"FOCUS_HOME": "http://u.test/"}), Topic(query=QUERY),
                        named="best-first")
    assert focus.home is not None and focus.home.away("http://far.test/")
    assert not focus.strategy.home.bound
    fetched = page()
    fetched.links.append(Link("http://far.test/cs/", "course cs"))
    assert focus.score_links(fetched, 0.7) == focus.strategy.score_links(fetched, 0.7)


def test_the_focus_binds_any_strategy_to_its_home() -> None:
    """The rule around a strategy that knows nothing of homes: it learns an
    away page is worth 0 (the judge still says what it read), its links off
    home drop below every link at home, and its promotions off home are dropped."""
    from crawlproject.policy.scope import HomeSites
    from crawlproject.strategies.best_first import BestFirstStrategy
    from crawlproject.web.page import Promotion

    class Recording(BestFirstStrategy):
        bound_by_home = True
        learnt: ClassVar[list[float | None]] = []

        def page_arrived(self, page: Page, relevance: float | None) -> None:
            self.learnt.append(relevance)

        def after_page(self, page: Page, relevance: float | None) -> list[Promotion]:
            return [Promotion("http://u.test/hub/", 2.0, page.url, "http://u.test/hub/"),
                    Promotion("http://far.test/hub/", 2.0, page.url, "http://far.test/hub/")]

    strategy = Recording(Topic(query=QUERY), TermAnalyzer())
    focus = Focus(FixedJudge(), strategy, HomeSites("domain", ["u.test"]))
    assert strategy.home is focus.home
    at_home = page()
    at_home.links.append(Link("http://far.test/cs/", "course cs"))
    away = Page("http://far.test/", "course syllabus homework", [Link("http://u.test/back/", "course")], meta={})
    assert focus.on_page(at_home) == focus.on_page(away) == 0.7  # the judge says what it reads …
    assert strategy.learnt == [0.7, 0.0]  # … the strategy learns the page away is worth nothing
    *stays, leaves = focus.score_links(at_home, 0.7)
    assert leaves == strategy.OFF_HOME < min(stays)  # type: ignore[operator]
    assert focus.score_links(away, 0.7) == strategy.score_links(away, 0.0)  # its link home, from a page worth 0
    assert [p.key for p in focus.after_page(at_home, 0.7)] == ["http://u.test/hub/"]
