"""The strategy contract: scoring, kept apart from queueing (STYLE §4).

A strategy sees each fetched page once and returns a score for each of its
outlinks; the frontier orders by those scores. It never touches the queue,
so every strategy plugs into every frontier backend.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from crawlproject import config
from crawlproject.web.page import Promotion
from crawlproject.web.text import TermAnalyzer

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Self

    from scrapy.crawler import Crawler

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


def trained_model_path(crawler: Crawler, topic: Topic, strategy: str, kind: str) -> str:
    """The model file named by ``-a model=`` or FOCUS_MODEL, or a clear error
    naming the ``scrapy train --kind`` that makes one."""
    path = topic.model or config.get_str(crawler.settings, "FOCUS_MODEL")
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

    def __init__(self, topic: Topic, analyzer: TermAnalyzer):
        self.topic = topic
        self.analyzer = analyzer

    @classmethod
    def from_crawler(cls, crawler: Crawler, topic: Topic) -> Self:
        analyzer = TermAnalyzer(stem=config.get_bool(crawler.settings, "FOCUS_STEMMING"))
        return cls(topic, analyzer)

    def page_relevance(self, page: Page) -> float | None:
        """The strategy's estimate of how relevant *page* is, in [0, 1], or
        ``None`` for a blind strategy. Called once per fetched page, before
        :meth:`score_links`."""
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

    def user_label(self, key: str, relevant: bool) -> dict[str, Any]:
        """The user says the fetched page *key* is (not) relevant (the
        dashboard's labels): a strategy that learns takes it in and says
        what changed; the others ignore it."""
        return {"learnt": False}

    def describe_learning(self) -> dict[str, Any]:
        """What the strategy has learnt so far, for a person (the dashboard)."""
        return {}

    def after_page(self, page: Page, relevance: float | None) -> Sequence[Promotion]:
        """Called once per fetched page after its links were scored, for
        periodic work (distilling, learning); returns URLs to push with a
        raised score (usually none)."""
        return ()
