"""The strategy contract: scoring, kept apart from queueing.

A strategy is the link scorer of the three ports (crawlproject.strategies.ports):
it sees each fetched page once, with the crawl's judge's relevance (it never
judges a page itself: the judge is another port, chosen apart by
``FOCUS_JUDGE``), and returns a score for each of its outlinks; the
frontier orders by those scores. What it
may ask of the queue goes through the frontier port it was built with, so
every strategy plugs into every frontier backend, and runs in a test with
no crawl at all.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from crawlproject import config
from crawlproject.policy.scope import HomeSites
from crawlproject.strategies.ports import DetachedFrontier
from crawlproject.web.page import Promotion
from crawlproject.web.text import TermAnalyzer

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Self

    from scrapy.settings import BaseSettings

    from crawlproject.judges.base import PageJudge
    from crawlproject.policy.scope import CrawlScope, SiteBoundModel
    from crawlproject.strategies.ports import FrontierPort
    from crawlproject.web.page import Page


_K = TypeVar("_K")
_V = TypeVar("_V")


class RecentMemory(OrderedDict[_K, _V]):
    """What a learning strategy keeps about recent links (FOCUS_LEARN_MEMORY):
    at most *limit* items, the oldest forgotten first, so a long crawl
    learns from its recent links in bounded memory."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def keep(self, key: _K, value: _V, first_wins: bool = False) -> None:
        """Remember *value* under *key* (with *first_wins*, only if *key* is
        not remembered yet: the first link found to a page is the one queued)."""
        if self.limit == 0 or (first_wins and key in self):
            return
        self[key] = value
        if len(self) > self.limit:
            self.popitem(last=False)


@dataclass(frozen=True)
class Topic:
    """What the user wants crawled: keywords, and/or the good categories of
    a trained taxonomy model (``scrapy train``)."""

    query: str = ""
    model: str = ""
    good: tuple[str, ...] = ()


@dataclass(frozen=True)
class BuildContext:
    """What the strategy factory (crawlproject.strategies.factory) hands a
    strategy class to build one: the settings, the topic, the frontier port
    and the crawl's scope (never the judge: a strategy scores links from the
    verdicts it is handed)."""

    settings: BaseSettings
    topic: Topic
    frontier: FrontierPort
    #: the spider's seed URLs (None until the spider exists): a home of seeds' sites reads them
    seeds: Callable[[], Iterable[str] | None] = lambda: None
    #: the spider's scope (None until the spider exists, or unbounded): the path oracle's paths stay in it
    scope: Callable[[], CrawlScope | None] = lambda: None

    def analyzer(self) -> TermAnalyzer:
        return TermAnalyzer(stem=config.get_bool(self.settings, "FOCUS_STEMMING"))


def trained_model_path(settings: BaseSettings, topic: Topic, strategy: str, kind: str) -> str:
    """The model file named by ``-a model=`` or FOCUS_MODEL, or a clear error
    naming the ``scrapy train --kind`` that makes one."""
    path = topic.model or config.get_str(settings, "FOCUS_MODEL")
    if not path:
        raise config.SettingsError(
            f"the {strategy} crawler needs a model: -a model=FILE (from `scrapy train --kind {kind}`)"
        )
    return path


class CrawlStrategy(ABC):
    #: Short name used in logs, stats and reports.
    name: ClassVar[str]
    #: Whether the strategy ignores scores (a FIFO frontier serves it exactly).
    blind: ClassVar[bool] = False
    #: Whether its scores are made of the pages' verdicts: a crawl with it
    #: needs a judge (a topic: a query or a model); the others take one
    #: only when the topic names one (their items then carry verdicts).
    needs_judge: ClassVar[bool] = False
    #: Whether a topic bound to its sites (FOCUS_HOME, a site-bound model)
    #: binds the strategy: those that learn what pages are worth. The naive
    #: baselines do not: they stay what the literature measured.
    bound_by_home: ClassVar[bool] = False
    #: Whether the crawl explores the sites of its seeds before it commits
    #: (crawlproject.frontier.exploration): every strategy whose order the
    #: verdicts shape. The baselines keep theirs: a blind or random order, an
    #: oracle's ceiling.
    explores: ClassVar[bool] = True
    #: The score of a link that leaves a site-bound topic's home: below every
    #: score the strategy gives a link at home (the factory's Focus applies it).
    OFF_HOME: ClassVar[float | None] = -1000.0

    def __init__(self, topic: Topic, analyzer: TermAnalyzer, frontier: FrontierPort | None = None):
        self.topic = topic
        self.analyzer = analyzer
        self.frontier: FrontierPort = frontier if frontier is not None else DetachedFrontier()
        #: the crawl's home (crawlproject.policy.scope.HomeSites): nothing is away until the factory binds one
        self.home = HomeSites()

    @classmethod
    def from_settings(cls, context: BuildContext) -> Self:
        """A strategy of these settings (the factory calls it)."""
        return cls(context.topic, context.analyzer(), context.frontier)


    def own_judge(self) -> PageJudge | None:
        """The judge of the model this strategy was built with (a context
        graph's, a link-value model's, a taxonomy classifier's, the labels'
        for an oracle): ``FOCUS_JUDGE=auto`` judges the crawl with it. None:
        the topic's judge (crawlproject.judges.judge_from_settings)."""
        return None

    def site_bound_model(self) -> SiteBoundModel | None:
        """The trained model whose training named the crawl's home or counted
        only its home's targets (a context graph, a link-value model): the
        factory takes the crawl's home from it (HomeSites.of_model); None:
        the home is FOCUS_HOME's, if any."""
        return None

    def bind_home(self, home: HomeSites) -> None:
        """The crawl's one home, built by the factory. The rule itself (an
        away page is worth 0, a link off home ranks below every link at home)
        is applied around the strategy by the Focus; a strategy whose model
        reads the home (a classifier's verdict, a feature) keeps it."""
        self.home = home

    def off_home_score(self) -> float | None:
        """The score of a link off home (:attr:`OFF_HOME`); None: the
        strategy values such links itself (a model with a feature for it)."""
        return self.OFF_HOME

    def score_links_bound(self, page: Page, relevance: float | None, away: Sequence[bool]) -> Sequence[float | None]:
        """:meth:`score_links` for a topic bound to its home: ``away[i]`` says
        link i leaves home, and such a link scores :meth:`off_home_score`
        (a link not to be followed stays so). A strategy that would do needless
        work for such links (a net's prediction) overrides this."""
        scores = self.score_links(page, relevance)
        floor = self.off_home_score()
        if floor is None:
            return scores
        return [floor if off and score is not None else score for score, off in zip(scores, away, strict=True)]

    def page_arrived(self, page: Page, relevance: float | None) -> None:
        """The learning hook: *page* was fetched and judged *relevance* (None
        without a judge). Called once per fetched page, before
        :meth:`score_links`; a strategy that learns from verdicts (where
        links lead, which agent earns) learns here."""
        return None

    @abstractmethod
    def score_links(self, page: Page, relevance: float | None) -> Sequence[float | None]:
        """One score per link of ``page.links``, in order; higher is better.
        ``None`` means: do not follow this link."""

    def child_state(self, page: Page, relevance: float | None) -> dict[str, Any]:
        """Request meta every link of *page* carries to its own page (e.g. an
        inherited score, a depth budget); read back there from ``page.meta``.
        Must be small and picklable: it is stored in the frontier."""
        return {}

    def dead_end(self, key: str, meta: Mapping[str, Any], status: int | None) -> None:
        """The link queued under *key* (its request *meta*) led to no page:
        answered *status* (not 2xx), or ``None`` when the fetch failed. A
        strategy that learns where links lead counts it."""
        return None

    def fetching(self, key: str) -> None:
        """The link queued under *key* is being fetched now (its request
        reached the downloader); its verdict comes with :meth:`score_links`'
        page or :meth:`dead_end`. A strategy that learns from verdicts may
        count it as in flight."""
        return None

    def user_label(self, key: str, relevant: bool) -> dict[str, Any]:
        """The user says the fetched page *key* is (not) relevant (the
        dashboard's labels; the judge has taken it in already): a strategy
        that learns where links lead learns it too, and says what it did."""
        return {}

    def describe_learning(self) -> dict[str, Any]:
        """What the strategy has learnt so far, for a person (the dashboard)."""
        return {}

    def after_page(self, page: Page, relevance: float | None) -> Sequence[Promotion]:
        """Called once per fetched page after its links were scored, for
        periodic work (distilling, learning); returns URLs to push with a
        raised score (usually none)."""
        return ()
