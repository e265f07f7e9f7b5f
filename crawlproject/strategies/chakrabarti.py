"""The focused crawler of Chakrabarti et al. (docs/methods.md §2).

A taxonomy classifier (``scrapy train``) gives Pr(c|p) for every category;
the user marks some categories good, and the relevance of a page is
R(p) = Σ_{c ∈ good} Pr(c|p).

* Learning (the default, ``FOCUS_FOCUSED_MODE=learn``): R(p) is the verdict
  of the online link learner (crawlproject.strategies.link_learner): each
  link's prior is SharkSearch's score with R in place of the query cosine,
  corrected by what the crawl learns of links, directories and dead ends.
* Soft focus: every outlink of p gets priority R(p).
* Hard focus: p's outlinks are followed (with priority R(p)) only if the
  best leaf c* of p, or one of its ancestors, is good. Seeds are always
  expanded: the user chose them. Strict hard focus runs out of links when
  no good page is left to expand; with a reserve, the links of the other
  pages are kept at priority R(p) − 1, below every link of a good page, and
  crawled only when none is left.
* Distiller (optional, crawlproject.models.distiller): every M pages, the
  unvisited outlinks of the top hubs of a relevance-weighted HITS are raised
  above everything else.
* Online learning (optional, crawlproject.models.online): every M pages the
  classifier learns from the crawl's confidently classified pages, and every
  queued URL is re-scored with its parent's new relevance.
* A topic bound to its sites (FOCUS_HOME, crawlproject.policy.scope.HomeSites,
  applied around every strategy by crawlproject.strategies.factory.Focus): a
  link that leaves home is queued at AWAY, below every link at home (its page
  is known to be worth 0), and the distiller's promotions off home are
  dropped. Here the classifier also calls a page away from home R(p) = 0 and
  never expands it under hard focus, whatever it says, and re-scoring after
  learning leaves links off home where they are.

Pages are classified in batches by the strategy's classifier
(crawlproject.judges.classifier.ClassifierJudge, the crawl's judge unless
FOCUS_JUDGE names another); the spider feeds it through a micro-batcher.
With another judge, soft focus and the link learner read that judge's
verdicts, and hard focus still expands by the classifier's best leaf; the
distiller weighs hubs by that judge's verdicts, and online learning learns
from the pages the classifier classifies (none under soft focus then).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from scrapy.utils.job import job_dir

from crawlproject import config
from crawlproject.config import SettingsError
from crawlproject.corpus.labels import parse_categories
from crawlproject.judges import model_good
from crawlproject.judges.classifier import ClassifierJudge
from crawlproject.models.distiller import Distiller
from crawlproject.models.online import OnlineLearner
from crawlproject.models.taxonomy import TaxonomyError
from crawlproject.models.taxonomy_classifier import ModelError, TaxonomyClassifier
from crawlproject.policy.scope import HomeSites
from crawlproject.strategies.base import CrawlStrategy, trained_model_path
from crawlproject.strategies.chakrabarti_state import ChakrabartiState
from crawlproject.strategies.link_learner import LinkLearnerStrategy
from crawlproject.web import meta as keys
from crawlproject.web.text import TermAnalyzer

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Self

    from crawlproject.judges.base import PageJudge
    from crawlproject.strategies.base import BuildContext, Topic
    from crawlproject.strategies.ports import FrontierPort
    from crawlproject.web.page import Page, Promotion

logger = logging.getLogger(__name__)
#: The score of a link that leaves a site-bound topic's home: below every
#: link at home (soft focus: R ∈ [0, 1]; hard focus's reserve: R − 1 ∈ [−1, 0]).
AWAY = -2.0


class ChakrabartiStrategy(CrawlStrategy):
    name = "focused"
    bound_by_home = True

    def __init__(
        self,
        topic: Topic,
        analyzer: TermAnalyzer,
        model: TaxonomyClassifier,
        hard: bool = False,
        reserve: bool = False,
        distiller: Distiller | None = None,
        learner: OnlineLearner | None = None,
        frontier: FrontierPort | None = None,
        links: LinkLearnerStrategy | None = None,
    ):
        super().__init__(topic, analyzer, frontier)
        self.model = model
        self.links = links  # the link learner, in the learn mode
        self.hard = hard
        self.reserve = reserve
        self.distiller = distiller
        self.learner = learner
        #: the taxonomy classifier's verdicts (R(p), c*), batched: hard focus and
        #: the distiller read them, and FOCUS_JUDGE=auto judges the crawl with it
        self.classifier = ClassifierJudge(model, topic.good, learner.add if learner is not None else None)
        self.good = self.classifier.good

    @classmethod
    def from_settings(cls, context: BuildContext) -> Self:
        settings, topic = context.settings, context.topic
        model_path = trained_model_path(settings, topic, "focused", "taxonomy")
        good = topic.good or parse_categories(config.get_str(settings, "FOCUS_GOOD"))
        # Every setting is checked, used or not, before the model is loaded.
        mode = config.get_choice(settings, "FOCUS_FOCUSED_MODE")
        reserve = config.get_bool(settings, "FOCUS_HARD_RESERVE")
        distill_every = config.get_int(settings, "FOCUS_DISTILL_EVERY")
        distill_hubs = config.get_int(settings, "FOCUS_DISTILL_HUBS")
        distill_same_host = config.get_bool(settings, "FOCUS_DISTILL_SAME_HOST")
        retrain_every = config.get_int(settings, "FOCUS_RETRAIN_EVERY")
        confidence = config.get_float(settings, "FOCUS_RETRAIN_CONFIDENCE")
        rescore_ratio = config.get_float(settings, "FOCUS_RETRAIN_RESCORE_RATIO")
        jobdir = job_dir(settings)
        state = ChakrabartiState(Path(jobdir) / "focused") if jobdir else None
        try:
            learned = state.saved_model() if state is not None and retrain_every else None
            model = learned or TaxonomyClassifier.load(model_path)
        except ModelError as exc:
            raise SettingsError(str(exc)) from None
        good = good or model_good(model)  # a model trained from examples names its own
        if not good:
            raise SettingsError("the focused crawler needs good categories: -a good=CATEGORY[,CATEGORY…]")
        distiller = Distiller(distill_every, distill_hubs, distill_same_host) if distill_every else None
        learner = OnlineLearner(model, retrain_every, confidence, rescore_ratio) if retrain_every else None
        if state is not None:
            resumed = [
                what for what, loaded in (
                    ("the classifier as online learning left it", learned is not None),
                    ("the learner's pages", learner is not None and state.load_learner(learner)),
                    ("the distiller's graph", distiller is not None and state.load_distiller(distiller)),
                ) if loaded
            ]
            if resumed:
                logger.info("Resuming the focused crawler with %s (%s)", ", ".join(resumed), state.folder)
        good = parse_categories(",".join(good), model.taxonomy.paths)  # a name with a comma, split, made whole
        topic = replace(topic, model=model_path, good=good)  # from settings when not arguments
        analyzer = TermAnalyzer(stem=model.settings.stem)
        links = LinkLearnerStrategy.from_settings(replace(context, topic=topic)) if mode == "learn" else None
        try:
            strategy = cls(
                topic, analyzer, model, mode == "hard", reserve, distiller, learner, context.frontier, links,
            )
        except TaxonomyError as exc:
            raise SettingsError(f"good categories {', '.join(good)}: {exc}") from None
        strategy.state = state
        if state is not None:
            context.frontier.on_close(strategy.save_state)
        return strategy

    state: ChakrabartiState | None = None

    def save_state(self) -> None:
        """Write what the crawl learned to JOBDIR (on close; and as it goes)."""
        if self.state is None:
            return
        if self.learner is not None:
            self.state.save_learner(self.learner)
        if self.distiller is not None:
            self.state.save_distiller(self.distiller)

    #: below every link at home, and the mark of a link the learner's re-scoring leaves alone
    OFF_HOME = AWAY

    def own_judge(self) -> PageJudge:
        """R(p) of the taxonomy classifier, 0 away from home."""
        return self.classifier

    def bind_home(self, home: HomeSites) -> None:
        """The classifier calls a page away from home worth 0 and never
        expands it; the learner's re-scoring reads the home too."""
        super().bind_home(home)
        self.classifier.home = home

    def page_arrived(self, page: Page, relevance: float | None) -> None:
        if self.links is not None:
            self.links.page_arrived(page, relevance)  # the link that led here learns the verdict

    def user_label(self, key: str, relevant: bool) -> dict[str, Any]:
        """A user's label reaches the link learner (learn mode)."""
        return self.links.user_label(key, relevant) if self.links is not None else {}

    def describe_learning(self) -> dict[str, Any]:
        return self.links.describe_learning() if self.links is not None else {"kind": "focused", "mode": "soft/hard"}

    def child_state(self, page: Page, relevance: float | None) -> dict[str, Any]:
        """The learn mode's SharkSearch prior hands its inheritance down."""
        return self.links.child_state(page, relevance) if self.links is not None else {}

    def dead_end(self, key: str, meta: Any, status: int | None) -> None:
        if self.links is not None:
            self.links.dead_end(key, meta, status)

    def fetching(self, key: str) -> None:
        if self.links is not None:
            self.links.fetching(key)

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float | None]:
        if self.links is not None:
            return self.links.score_links(page, relevance)
        score: float | None = relevance or 0.0
        if self.hard and not page.meta.get(keys.SEED) and not self.classifier.verdict(page).expand:
            if self.reserve:
                self.frontier.inc("focus/hard/reserved_pages")
                score = (relevance or 0.0) - 1.0
            else:
                self.frontier.inc("focus/hard/pruned_pages")
                return [None] * len(page.links)
        return [score] * len(page.links)

    # -- periodic work: distiller and online learning ------------------------------

    def after_page(self, page: Page, relevance: float | None) -> Sequence[Promotion]:
        """Feeds the distiller and the learner; returns what the distiller
        wants raised when it ran."""
        if relevance is None:
            return []
        if self.links is not None:
            self.links.after_page(page, relevance)
        promotions: list[Promotion] = []
        distiller = self.distiller
        if distiller is not None:
            distiller.add_page(
                page.key, relevance, [link.key for link in page.links],
                {link.key: link.url for link in page.links if link.url != link.key},
            )
            if distiller.due:
                promotions = list(distiller.run())  # those off home the Focus drops
                self.frontier.inc("focus/distiller/runs")
                self.frontier.inc("focus/distiller/promoted", len(promotions))
                if self.state is not None:
                    self.state.save_distiller(distiller)
        learner = self.learner
        if learner is not None and learner.due:
            learner.learn()
            self.frontier.inc("focus/learning/rounds")
            self.frontier.set("focus/learning/pages", learner.learned)
            if learner.reclassify_due:
                self._rescore_after_learning()
        return promotions

    def _rescore_after_learning(self) -> None:
        """Every queued URL gets its parent's relevance under the new model."""
        assert self.learner is not None
        probabilities = self.learner.reclassify()
        self.frontier.set("focus/learning/reclassified", self.learner.reclassified)
        if self.state is not None:
            self.state.save_learner(self.learner)  # as often as it re-scores: amortised
        relevance, leaves = self.classifier.relevance_and_leaves(probabilities)
        away = np.zeros(len(relevance), dtype=bool)
        if self.home.sites():  # no home, nothing is away: no URL to look at
            away = np.array([self.home.away(url) for url in self.learner.urls], dtype=bool)
            relevance[away] = 0.0
        if self.hard:  # a parent no longer classified good drops below the rest
            relevance -= ~self.classifier.expands[leaves] | away
        new_relevance = dict(zip(self.learner.urls, relevance.tolist(), strict=True))

        def scorer(url: str, score: float, meta: dict[str, Any] | None) -> float:
            if not meta or keys.PROMOTED_BY in meta or score == AWAY:
                return score  # seeds, distiller promotions and links off home keep their rank
            parent_relevance = new_relevance.get(meta.get(keys.PARENT, ""))
            return score if parent_relevance is None else parent_relevance

        self.frontier.rescore(scorer)
