"""The one factory of a crawl's scoring (docs/architecture.md, "Three
ports"): the link scorer ``FOCUS_STRATEGY`` (or the spider) names, its
frontier port, and the page judge ``FOCUS_JUDGE`` names — any judge with any
strategy — built from settings, and held together as a :class:`Focus`.

    focus = build_focus(crawler, Topic(query="jazz"), default=BestFirstStrategy)
    relevance = focus.on_page(page)
    scores = focus.score_links(page, relevance)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crawlproject import config
from crawlproject.policy.scope import HomeSites
from crawlproject.strategies import strategy_class
from crawlproject.strategies.base import BuildContext
from crawlproject.strategies.ports import CrawlerFrontier

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from crawlproject.judges.base import PageJudge
    from crawlproject.strategies.base import CrawlStrategy, Topic
    from crawlproject.web.page import Page, Promotion


@dataclass
class Focus:
    """A crawl's scoring: its judge (a fetched page → a verdict; None: the
    crawl judges nothing, as breadth-first without a topic) and its link
    scorer (the strategy: a page's links → scores, given the verdict).

    The only caller of both: the spider, the progress line, the
    dashboard and the Python call talk to the Focus, which keeps the order
    the two must be called in — the judge's verdict first, then the
    strategy's learning hook, then its link scores.

    A topic bound to its sites (*home*: crawlproject.policy.scope.HomeSites,
    the crawl's one home, which the scheduler's wait also keeps to) is bound
    here, around a strategy that learns what pages are worth
    (``bound_by_home``), and nowhere else: a page away from
    home is worth 0 to the strategy (it learns 0 from it, whatever the judge
    read), a link off home scores the strategy's
    :meth:`~crawlproject.strategies.base.CrawlStrategy.off_home_score`, below
    every link at home, and nothing off home is promoted. A crawl may still
    go there (a home is no scope: :class:`~crawlproject.policy.scope.CrawlScope`)."""

    judge: PageJudge | None
    strategy: CrawlStrategy
    #: the crawl's home; None: the topic is bound to no site
    home: HomeSites | None = None

    def __post_init__(self) -> None:
        #: the home the strategy is bound by (None: none, or a naive baseline)
        self._bound = self.home if self.strategy.bound_by_home else None
        if self._bound is not None:
            self.strategy.bind_home(self._bound)

    # -- a page, in the order of a crawl ---------------------------------------

    def on_fetching(self, key: str) -> None:
        """A URL of the frontier reached the downloader."""
        self.strategy.fetching(key)

    @property
    def strategy_name(self) -> str:
        """The strategy's name, as a crawl's signature and summary show it."""
        return str(self.strategy.name)

    @property
    def explores(self) -> bool:
        """Whether the crawl explores its seeds' sites before it commits
        (crawlproject.frontier.exploration): it judges its pages, and its
        strategy is no baseline."""
        return self.judge is not None and self.strategy.explores

    @property
    def batches(self) -> bool:
        """Whether the judge judges best a batch of pages at a time (the
        spider then gathers fetched pages in micro-batches: :meth:`prepare`)."""
        return self.judge is not None and self.judge.batches

    def prepare(self, pages: Sequence[Page]) -> None:
        assert self.judge is not None
        for page in pages:
            self._arrived(page)
        self.judge.prepare(pages)

    def prepare_failed(self, page: Page) -> None:
        if self.judge is not None:
            self.judge.prepare_failed(page)

    def on_page(self, page: Page) -> float | None:
        """A page answered 2xx: the judge's verdict, which the strategy learns
        from (its learning hook) before it scores the page's links."""
        self._arrived(page)
        relevance = self.judge.relevance(page) if self.judge is not None else None
        self.strategy.page_arrived(page, self._worth(page, relevance))
        return relevance

    def on_dead_end(self, key: str, meta: Mapping[str, Any], status: int | None) -> None:
        """A fetch answered otherwise, or failed (*status* None)."""
        self.strategy.dead_end(key, meta, status)

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float | None]:
        self._arrived(page)  # a seed's links are scored at home, arrived through on_page or not (a sitemap's)
        if self._bound is None:
            return self.strategy.score_links(page, relevance)
        away = [self._bound.away(link.key) for link in page.links]
        return self.strategy.score_links_bound(page, self._worth(page, relevance), away)

    def child_state(self, page: Page, relevance: float | None) -> dict[str, Any]:
        return self.strategy.child_state(page, self._worth(page, relevance))

    def after_page(self, page: Page, relevance: float | None) -> Sequence[Promotion]:
        """Once the page's links are queued: the strategy's periodic work
        (the distiller's hubs), as promotions to queue."""
        promotions = self.strategy.after_page(page, self._worth(page, relevance))
        if self._bound is None or not promotions:
            return promotions
        return [promotion for promotion in promotions if not self._bound.away(promotion.key)]

    # -- the home-site rule --------------------------------------------------------

    def _arrived(self, page: Page) -> None:
        """A seed's site is home (a seed from Redis that no seed list holds)."""
        if self.home is not None:
            self.home.note(page)

    def _worth(self, page: Page, relevance: float | None) -> float | None:
        """The verdict the strategy learns from: 0 for a page away from home."""
        if self._bound is None or relevance is None or not self._bound.away(page.key):
            return relevance
        return 0.0

    # -- verdicts ----------------------------------------------------------------

    def relevant(self, relevance: float | None, key: str = "") -> bool | None:
        """Whether the judge calls the page *key* of this verdict relevant —
        the user's word on it first (None: no verdict)."""
        return self.judge.call(key, relevance) if self.judge is not None and relevance is not None else None

    def word(self) -> dict[str, bool]:
        """The user's word on pages: examples and labels (final: crawlproject.judges.base)."""
        return dict(self.judge.word) if self.judge is not None else {}

    def calls(self, relevance: float) -> bool:
        """The judge's call on a verdict (there must be a judge)."""
        assert self.judge is not None
        return self.judge.calls(relevance)

    def expected_relevant(self, relevance: float) -> float:
        assert self.judge is not None
        return self.judge.expected_relevant(relevance)

    def settle(self, relevances: list[float]) -> bool:
        """The crawl's end: the judge refits on every page met (*relevances*,
        else the pages it remembers) and calls them anew (PageJudge.settle)."""
        assert self.judge is not None
        return self.judge.settle(relevances or list(self.judge.recent.values()))

    @property
    def calibrated(self) -> bool:
        """Whether the judge's calls follow a calibration on the crawl's pages."""
        return self.judge is not None and self.judge.calibration is not None

    # -- what people see and say -------------------------------------------------

    def describe(self) -> dict[str, Any] | None:
        """The judge's state (its precision, threshold, …); None without a judge."""
        return self.judge.describe() if self.judge is not None else None

    def describe_learning(self) -> dict[str, Any]:
        return self.strategy.describe_learning()

    def questions(self, count: int) -> list[dict[str, Any]]:
        """The pages whose labels would teach the judge most."""
        return self.judge.questions(count) if self.judge is not None else []

    def label(self, key: str, relevant: bool) -> dict[str, Any]:
        """A person's label: the judge takes it in (and counts it for its
        precision), then a strategy that learns links."""
        effect = {"judge": self.judge.label(key, relevant)} if self.judge is not None else {}
        return effect | self.strategy.user_label(key, relevant)


def focus_of(crawler: Crawler) -> Focus | None:
    """The crawl's Focus — its focused spider's, built as the spider is
    (``from_crawler``); None for a plain spider, or before the spider exists."""
    focus = getattr(crawler.spider, "focus", None)
    return focus if isinstance(focus, Focus) else None


def build_focus(
    crawler: Crawler, topic: Topic, default: type[CrawlStrategy] | str | None = None, named: str | None = None,
) -> Focus:
    """The judge and link scorer of this crawl: the strategy *named* (a
    spider's ``-a strategy=``) when given, else ``FOCUS_STRATEGY`` when set,
    else *default* (a class or a strategy name: the spider's), else
    breadth-first; the judge by ``FOCUS_JUDGE`` (crawlproject.judges)."""
    settings = crawler.settings
    chosen = strategy_class(named or "") or strategy_class(config.get_str(settings, "FOCUS_STRATEGY"))
    if chosen is None:
        chosen = strategy_class(default) if isinstance(default, str) else default
    if chosen is None:
        chosen = strategy_class("breadth-first")
    def seeds() -> list[str] | None:
        return getattr(crawler.spider, "seed_urls", None) if crawler.spider is not None else None

    strategy: CrawlStrategy = chosen.from_settings(BuildContext(
        settings, topic, CrawlerFrontier(crawler), seeds=seeds,
        scope=lambda: getattr(crawler.spider, "crawl_scope", None),
    ))
    _share_experience(crawler, strategy)
    home = home_of(settings, strategy, seeds)
    return Focus(judge_for(settings, topic, strategy), strategy, home)


def home_of(
    settings: BaseSettings | None, strategy: CrawlStrategy, seeds: Callable[[], Iterable[str] | None] | None = None,
) -> HomeSites | None:
    """The crawl's one home (None: no site is home): its site-bound model's
    (HomeSites.of_model), else FOCUS_HOME's — whatever the strategy: the
    Focus binds only the strategies that learn what pages are worth, the
    scheduler's wait keeps every crawl home (SlotObjective.open)."""
    model = strategy.site_bound_model()
    home = HomeSites.of_model(model, settings, seeds) if model is not None else HomeSites.from_settings(settings)
    return home if home.bound else None


def judge_for(settings: BaseSettings, topic: Topic, strategy: CrawlStrategy) -> PageJudge | None:
    """The judge of a crawl with *strategy* (see crawlproject.judges)."""
    from crawlproject.judges import judge_from_settings
    from crawlproject.web.text import TermAnalyzer

    analyzer = TermAnalyzer(stem=config.get_bool(settings, "FOCUS_STEMMING"))
    return judge_from_settings(
        settings, topic.query, topic.model, topic.good, analyzer, f"the {strategy.name} crawler",
        own=strategy.own_judge(), required=strategy.needs_judge,
    )


def _share_experience(crawler: Crawler, strategy: CrawlStrategy) -> None:
    """With FOCUS_LEARNER_SHARED, the link learner (the strategy, or the one
    the focused crawler holds) learns every worker's verdicts through Redis."""
    if not config.get_bool(crawler.settings, "FOCUS_LEARNER_SHARED"):
        return  # before the import: the link learner costs a quarter of a second to import
    from crawlproject.strategies.link_learner import LinkLearnerStrategy

    learner = strategy if isinstance(strategy, LinkLearnerStrategy) else getattr(strategy, "links", None)
    if isinstance(learner, LinkLearnerStrategy):
        learner.share_through(crawler)
