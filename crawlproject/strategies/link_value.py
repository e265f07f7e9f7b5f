"""Learned link value (Rennie & McCallum 1999; docs/methods.md §2): every
link scores the discounted number of targets it is predicted to lead to
(crawlproject.models.link_value_model, trained by
``scrapy train --kind link-value``), and the model keeps learning
from the crawl's own fetches (FOCUS_LINK_VALUE_ONLINE): when a page arrives,
the link that led to it learns reward(page) + γ · max value of its links.

The crawl's home (crawlproject.policy.scope.HomeSites.of_model, as the context
graph's): the sites the model's training named (``home``), else FOCUS_HOME's,
else — for a model that counts only its home's targets (``value_scope``, a
topic bound to its sites) — the seeds'. A link that leads off a site-bound
model's home carries ``s:out``, and online, a link that led to a page away
from home learns the value 0.

Links the model values alike are ranked as best-first ranks them, by the
cosine of the topic query and the page they sit on (weighted by QUERY_TIE,
far below any difference of learned values): a model that learnt nothing
(a training graph whose links all lead nowhere, as a topic spanning every
training site leaves under host-disjoint training) still follows the
user's query instead of the order links were found in.

Siblings (FOCUS_LINK_VALUE_SIBLINGS): the links of one page share its
fate — a department's course index lists course pages side by side — and
the crawl learns that faster than a model of anchors and URLs can. Once
some of a page's links have arrived, the mean of the rewards they showed
(a target or not: what they proved, not the TD targets above, whose
γ · max over a page's links is a guess — taken as evidence, a student list
whose every page links to something the model likes raised itself page
after page while no page proved anything) is evidence about the links
still queued there: each is re-estimated as (Σ shown + k · predicted) / (n + k), with
k = SIBLING_PRIOR, the model's prediction weighing as much as k arrived
siblings, and pushed again (a promotion) when that is above its score.
A link away from home (site-bound models) is never raised: its page will
show the value 0, whatever its siblings at home showed.
Only raised: a queued score is never lowered (the frontier keeps the
higher of two pushes).

The features of a queued link wait in memory until its page arrives, the
links of fetched pages until their siblings arrive, and the keys of
arrived pages so that no sibling list raises them again (each at most
FOCUS_LEARN_MEMORY; the oldest are forgotten first, so a long crawl learns
from its recent links).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import TYPE_CHECKING

from crawlproject import config
from crawlproject.config import SettingsError
from crawlproject.judges.models import LinkValueJudge
from crawlproject.models.link_value_model import LinkValueModel
from crawlproject.models.taxonomy_classifier import ModelError
from crawlproject.policy.scope import HomeSites
from crawlproject.strategies.base import CrawlStrategy, RecentMemory, trained_model_path
from crawlproject.web.page import Promotion
from crawlproject.web.text import TermAnalyzer, cosine

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Self

    from crawlproject.judges.base import PageJudge
    from crawlproject.strategies.base import BuildContext, Topic
    from crawlproject.strategies.ports import FrontierPort
    from crawlproject.web.page import Page

logger = logging.getLogger(__name__)
#: How much the query's cosine adds to a link's value: it orders links the
#: model values alike and nothing else (learned values differ by far more).
QUERY_TIE = 1e-6
#: How many arrived siblings weigh as much as the model's prediction of a
#: queued link (fixed before any measurement, never tuned on a topic).
SIBLING_PRIOR = 1.0


class _Siblings:
    """The queued links of one fetched page and what its arrived links
    showed: ``n`` arrivals, ``shown`` the sum of their rewards."""

    __slots__ = ("n", "queued", "shown", "tie")

    def __init__(self, tie: float):
        self.queued: dict[str, tuple[str, float, float]] = {}  # key → (url, predicted value, score pushed)
        self.tie = tie
        self.n = 0
        self.shown = 0.0


class LinkValueStrategy(CrawlStrategy):
    name = "link-value"
    bound_by_home = True

    def __init__(
        self, topic: Topic, analyzer: TermAnalyzer, model: LinkValueModel, online: bool = True, memory: int = 200000,
        frontier: FrontierPort | None = None, siblings: bool = True,
    ):
        super().__init__(topic, analyzer, frontier)
        self.model, self.online, self.memory = model, online, memory
        self.siblings = online and siblings
        self._pending: RecentMemory[str, list[str]] = RecentMemory(memory)  # queued links' features
        self._pages: OrderedDict[str, _Siblings] = OrderedDict()  # fetched page URL → its links' siblings
        self._sibling_links = 0  # queued links held in _pages
        self._arrived: RecentMemory[str, None] = RecentMemory(memory)  # recent pages: no sibling list raises them again
        self._promotions: list[Promotion] = []
        #: the model's home until the factory binds the crawl's (its links' ``s:out`` reads it)
        self.home = HomeSites.of_model(model, None)
        self.query_vector = analyzer.vector(topic.query)

    @classmethod
    def from_settings(cls, context: BuildContext) -> Self:
        settings, topic = context.settings, context.topic
        online = config.get_bool(settings, "FOCUS_LINK_VALUE_ONLINE")
        siblings = config.get_bool(settings, "FOCUS_LINK_VALUE_SIBLINGS")
        memory = config.get_int(settings, "FOCUS_LEARN_MEMORY")
        path = trained_model_path(settings, topic, "link-value", "link-value")
        try:
            model = LinkValueModel.load(path)
        except ModelError as exc:
            raise SettingsError(str(exc)) from None
        if model.links is None:
            logger.warning(
                "The link-value model %s learnt no link values (every training link led to no target): links are "
                "ranked by the topic query alone, as best-first ranks them%s", path,
                "" if topic.query else " — and no query was given, so in the order they are found",
            )
        return cls(topic, TermAnalyzer(stem=True), model, online, memory, context.frontier, siblings)

    def own_judge(self) -> PageJudge:
        """Pr(target | page) by the model's page classifier: the reward."""
        return LinkValueJudge(self.model, self.analyzer)

    def site_bound_model(self) -> LinkValueModel:
        return self.model

    def off_home_score(self) -> None:
        """A link off home is valued by the model itself (its ``s:out``)."""
        return None

    def page_arrived(self, page: Page, relevance: float | None) -> None:
        """The page's verdict is its link's reward: a page without links
        teaches its link now (nothing lies beyond it); one with links, once
        they are valued (:meth:`score_links`)."""
        if self.online and not page.links:
            self._learn(page, float((relevance or 0.0) > 0.5), 0.0)

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float]:
        good = (relevance or 0.0) > 0.5  # as likely a target as not
        window = self.model.window
        home = self.model.link_home(page.key, self.home.sites())
        tokens = []
        for link in page.links:
            context = page.link_context(link, window)
            tokens.append(self.model.features(context.anchor, context.context, link.key, good, home))
        values = self.model.predict(tokens)
        if self.online:
            self._learn(page, float(good), float(values.max()) if len(values) else 0.0)
            for link, features in zip(page.links, tokens, strict=True):
                self._pending.keep(link.key, features, first_wins=True)
        tie = QUERY_TIE * cosine(self.query_vector, page.vector(self.analyzer)) if self.query_vector else 0.0
        if self.siblings:
            self._hold_siblings(page, values, tie)
        return [float(v) + tie for v in values]

    def after_page(self, page: Page, relevance: float | None) -> Sequence[Promotion]:
        """The queued siblings this page's arrival raised."""
        promotions, self._promotions = self._promotions, []
        return promotions

    def _learn(self, page: Page, reward: float, best_next: float) -> None:
        if self.home.away(page.key):  # the Focus made its reward 0; what lies beyond it is worth 0 to the topic too
            reward = best_next = 0.0
        features = self._pending.pop(page.key, None)
        if features is not None:
            self.model.learn(features, reward + self.model.gamma * best_next)
            self.frontier.inc("focus/link_value/learned")
        if self.siblings:
            self._siblings_learn(page, reward)

    def _siblings_learn(self, page: Page, reward: float) -> None:
        """*page* arrived and proved *reward* (target or not; its links'
        values are guesses, not evidence): its queued siblings on the page it
        was found on are re-estimated, and raised where that is higher."""
        self._arrived.keep(page.key, None)
        parent = page.parent_url
        if parent is None or (siblings := self._pages.get(parent)) is None:
            return
        siblings.n += 1
        siblings.shown += reward
        for key in [key for key in siblings.queued if key in self._arrived]:  # this page, or found first elsewhere
            del siblings.queued[key]
            self._sibling_links -= 1
        raised = []
        for key, (url, predicted, pushed) in siblings.queued.items():
            score = (siblings.shown + SIBLING_PRIOR * predicted) / (siblings.n + SIBLING_PRIOR) + siblings.tie
            if score > pushed:
                siblings.queued[key] = (url, predicted, score)
                raised.append(Promotion(url, score, parent, key))
        if raised:
            self._promotions.extend(raised)
            self.frontier.inc("focus/link_value/sibling_raises", len(raised))

    def _hold_siblings(self, page: Page, values: Iterable[float], tie: float) -> None:
        """Keep *page*'s links, queued with these values, until they arrive."""
        siblings = _Siblings(tie)
        for link, value in zip(page.links, values, strict=True):
            if not self.home.away(link.key):  # a page away from home shows 0 (above): its siblings say nothing of it
                siblings.queued[link.key] = (link.url, float(value), float(value) + tie)
        old = self._pages.pop(page.url, None)
        self._sibling_links += len(siblings.queued) - (len(old.queued) if old is not None else 0)
        self._pages[page.url] = siblings
        while self._sibling_links > self.memory and self._pages:
            self._sibling_links -= len(self._pages.popitem(last=False)[1].queued)
