"""The evaluation's floor and ceilings (docs/methods.md §3): a random crawler, and two
oracles that know the labels. They exist to measure real strategies against;
the path oracle also knows the whole corpus graph.

* Random: every link a random score (seeded: ``FOCUS_RANDOM_SEED``).
* One-step oracle: a link scores 1 if its target is relevant, else 0.
* Path oracle: a link scores −d, d the link distance from its target to the
  nearest relevant page not yet fetched; distances are recomputed when a
  relevant page is fetched, and the queued URLs re-scored (the practical
  upper bound: it looks ahead, which is what learning crawlers try to do).
"""

from __future__ import annotations

import random
from collections import deque
from typing import TYPE_CHECKING

from crawlproject import config
from crawlproject.config import SettingsError
from crawlproject.corpus.labels import is_relevant, load_labels, parse_categories
from crawlproject.judges.models import OracleJudge
from crawlproject.policy.scope import CrawlScope
from crawlproject.strategies.base import CrawlStrategy
from crawlproject.web.text import TermAnalyzer

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Self

    from scrapy.settings import BaseSettings

    from crawlproject.judges.base import PageJudge
    from crawlproject.strategies.base import BuildContext, Topic
    from crawlproject.strategies.ports import FrontierPort
    from crawlproject.web.page import Page

_UNREACHABLE = 1_000_000  # no relevant page can be reached from here


class RandomStrategy(CrawlStrategy):
    name = "random"
    explores = False

    def __init__(self, topic: Topic, analyzer: TermAnalyzer, seed: int = 0, frontier: FrontierPort | None = None):
        super().__init__(topic, analyzer, frontier)
        self.rng = random.Random(seed)

    @classmethod
    def from_settings(cls, context: BuildContext) -> Self:
        seed = config.get_int(context.settings, "FOCUS_RANDOM_SEED")
        return cls(context.topic, TermAnalyzer(stem=False), seed, context.frontier)

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float]:
        return [self.rng.random() for _ in page.links]


def _relevant_from_settings(settings: BaseSettings, strategy: str) -> tuple[dict[str, str], tuple[str, ...]]:
    labels_path = config.get_str(settings, "FOCUS_LABELS")
    relevant = config.get_str(settings, "FOCUS_RELEVANT")
    if not labels_path or not parse_categories(relevant):
        raise SettingsError(
            f"the {strategy} knows the labels: set FOCUS_LABELS (url<TAB>category file) "
            "and FOCUS_RELEVANT (relevant categories)"
        )
    labels = load_labels(labels_path)
    return labels, parse_categories(relevant, set(labels.values()))  # the labels keep a name with a comma whole


class OneStepOracleStrategy(CrawlStrategy):
    name = "oracle"
    explores = False

    def __init__(
        self, topic: Topic, analyzer: TermAnalyzer, relevant_urls: set[str], frontier: FrontierPort | None = None,
    ):
        super().__init__(topic, analyzer, frontier)
        self.relevant_urls = relevant_urls

    @classmethod
    def from_settings(cls, context: BuildContext) -> Self:
        labels, relevant = _relevant_from_settings(context.settings, "one-step oracle")
        urls = {url for url, category in labels.items() if is_relevant(category, relevant)}
        return cls(context.topic, TermAnalyzer(stem=False), urls, context.frontier)

    def own_judge(self) -> PageJudge:
        return OracleJudge(self.relevant_urls)

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float]:
        relevant = self.relevant_urls
        return [1.0 if link.key in relevant else 0.0 for link in page.links]


class PathOracleStrategy(CrawlStrategy):
    name = "path-oracle"
    explores = False

    def __init__(
        self,
        topic: Topic,
        analyzer: TermAnalyzer,
        relevant_urls: set[str],
        inlinks: dict[str, list[str]],
        frontier: FrontierPort | None = None,
        scope: Callable[[], CrawlScope | None] = lambda: None,
    ):
        super().__init__(topic, analyzer, frontier)
        self.relevant_urls = relevant_urls
        self.inlinks = inlinks
        self.scope = scope
        self.unfetched_relevant = set(relevant_urls) & set(inlinks)
        self._scope_cache: tuple[frozenset[str], set[str]] | None = None
        self.distance = self._distances()
        self._stale = False
        self._scope_seen = False  # the spider (and its scope) exists once the crawl runs

    @classmethod
    def from_settings(cls, context: BuildContext) -> Self:
        from crawlproject.corpus.reader import load_corpus

        settings = context.settings
        labels, relevant = _relevant_from_settings(settings, "path oracle")
        warc = config.get_str(settings, "FOCUS_ORACLE_WARC")
        if not warc:
            raise SettingsError("the path oracle knows the corpus graph: set FOCUS_ORACLE_WARC")
        corpus = load_corpus(
            warc, config.get_str(settings, "FOCUS_LABELS"), config.get_str(settings, "FOCUS_CACHE_DIR") or None,
        )
        urls = {url for url, category in labels.items() if is_relevant(category, relevant)}
        return cls(context.topic, TermAnalyzer(stem=False), urls, corpus.inlinks(), context.frontier, context.scope)

    def _distances(self) -> dict[str, int]:
        """Multi-source BFS over reversed links from the unfetched relevant
        pages, through pages the crawl's scope lets it fetch (a shortest path
        through another site is no path for a crawl that may not go there)."""
        allowed = self._in_scope()
        targets = [url for url in self.unfetched_relevant if allowed is None or url in allowed]
        distance = dict.fromkeys(targets, 0)
        queue = deque(targets)
        while queue:
            url = queue.popleft()
            next_distance = distance[url] + 1
            for source in self.inlinks.get(url, ()):
                if source not in distance and (allowed is None or source in allowed):
                    distance[source] = next_distance
                    queue.append(source)
        return distance

    def _score(self, url: str) -> float:
        return -float(self.distance.get(url, _UNREACHABLE))

    def _in_scope(self) -> set[str] | None:
        """The corpus pages inside the spider's scope (None: no bound), kept
        until a new seed widens the scope."""
        scope = self.scope()
        if not isinstance(scope, CrawlScope) or scope.unbounded:
            return None
        sites = frozenset(scope.sites)
        if self._scope_cache is None or self._scope_cache[0] != sites:
            self._scope_cache = (sites, {url for url in self.inlinks if scope.allows(url)})
        return self._scope_cache[1]

    def own_judge(self) -> PageJudge:
        return OracleJudge(self.relevant_urls)

    def page_arrived(self, page: Page, relevance: float | None) -> None:
        """A relevant page fetched: the distances to those left change."""
        if page.key in self.unfetched_relevant:
            self.unfetched_relevant.discard(page.key)
            self._stale = True

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float]:
        if not self._scope_seen:
            self._scope_seen = True
            self._stale = self._stale or self._in_scope() is not None
        if self._stale:
            self._stale = False
            self.distance = self._distances()
            self.frontier.rescore(lambda url, _score, _meta: self._score(url))
        return [self._score(link.key) for link in page.links]
