"""The online link learner as a strategy (issue 28; the model is
crawlproject.models.link_learner): SharkSearch's score is each link's prior,
and the crawl's own verdicts teach the correction.

* **Verdicts.** A page's relevance comes from the topic as the user gave it:
  the cosine of the query and the page (:class:`QueryJudge`, SharkSearch's
  own sim(q, p)), or R(p) of a taxonomy classifier with good categories
  (:class:`ClassifierJudge`: ``-a model=… -a good=…``, a model trained on
  example pages by ``scrapy train --examples``). Never evaluation labels.
* **Prior.** SPEC §2's SharkSearch score with the verdict as its relevance:
  γ·inherited + (1−γ)·(β·anchor + (1−β)·context). Where SharkSearch would
  stop (its depth budget spent) the prior is 0: such a link is queued last,
  and followed only when what was learnt raises it.
* **Learning.** When a page arrives, the link that led to it is an example
  of its relevance; a link that led to a dead end (4xx/5xx, a failed fetch)
  an example of a dead end. Examples are learnt in mini-batches
  (FOCUS_LEARNER_BATCH), and every FOCUS_LEARNER_RESCORE_EVERY pages — at
  least a hundredth of the queue apart, so that the cost per page stays flat
  as the queue grows — every queued link the learner still remembers is
  re-scored with what was learnt since (its directory's history included):
  raised *or* lowered.
* **Exploration.** A fixed share of links (FOCUS_LEARNER_EXPLORE, chosen by
  a hash of the URL and FOCUS_RANDOM_SEED, so a crawl is repeatable) keep
  their prior on the learnt scale, ignoring the correction and the dead-end
  model: links the learner has written off still get fetched now and then,
  and what they turn out to be corrects it.
* **Distributed.** With FOCUS_LEARNER_SHARED, each worker publishes its
  examples to a Redis stream and learns every worker's
  (crawlproject.distributed.experience): one model per crawl.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import xxhash
from scrapy import signals
from scrapy.utils.job import job_dir

from crawlproject import config
from crawlproject import signals as focus_signals
from crawlproject.config import SettingsError
from crawlproject.corpus.labels import parse_categories
from crawlproject.models.link_learner import (
    Experience,
    LinkFeatures,
    LinkLearner,
    link_tokens,
    path_cells,
)
from crawlproject.models.taxonomy import TaxonomyError
from crawlproject.models.taxonomy_classifier import ModelError, TaxonomyClassifier
from crawlproject.strategies.base import RecentMemory
from crawlproject.strategies.shark_search import SharkSearchStrategy
from crawlproject.web import meta as keys
from crawlproject.web.text import TermAnalyzer, cosine

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Self

    from scrapy.crawler import Crawler

    from crawlproject.distributed.experience import SharedExperience
    from crawlproject.strategies.base import Topic
    from crawlproject.web.page import Page

logger = logging.getLogger(__name__)
#: How much the prior adds to a link's score: it orders links the learner
#: scores alike (those it expects nothing of), and nothing else.
PRIOR_TIE = 1e-6
#: Verdicts between two re-scorings of their siblings: with a few downloads
#: in flight a verdict waits a moment anyway, and siblings fetched one after
#: another (a directory being crawled) re-score their queued siblings once.
SIBLINGS_EVERY = 4


class RelevanceJudge(Protocol):
    """Where a crawl's verdicts come from: the relevance of a fetched page."""

    name: str

    def relevance(self, page: Page) -> float:
        """How relevant *page* is, in [0, 1]."""
        ...


class QueryJudge:
    """The cosine of the topic query and the page (SPEC §2's sim(q, p))."""

    name = "query"

    def __init__(self, query: Mapping[str, float], analyzer: TermAnalyzer):
        self.query, self.analyzer = query, analyzer

    def relevance(self, page: Page) -> float:
        return cosine(self.query, page.vector(self.analyzer))


class ClassifierJudge:
    """R(p) = Σ_{c ∈ good} Pr(c | p) of a taxonomy classifier (SPEC §2)."""

    name = "classifier"

    def __init__(self, model: TaxonomyClassifier, good: Sequence[str]):
        self.model = model
        self.good = np.array(model.good_nodes(good))

    def relevance(self, page: Page) -> float:
        probabilities = self.model.proba(self.model.features([page.text]))
        return float(probabilities[0, self.good].sum())


def judge_of(crawler: Crawler, topic: Topic, analyzer: TermAnalyzer) -> RelevanceJudge:
    """A classifier when the topic names a model (``-a model=``, FOCUS_MODEL)
    and good categories; else the query."""
    path = topic.model or config.get_str(crawler.settings, "FOCUS_MODEL")
    if not path:
        return QueryJudge(analyzer.vector(topic.query), analyzer)
    good = topic.good or parse_categories(config.get_str(crawler.settings, "FOCUS_GOOD"))
    try:
        model = TaxonomyClassifier.load(path)
        good = good or model_good(model)
        if not good:
            raise SettingsError("a link learner with a model needs good categories: -a good=CATEGORY[,CATEGORY…]")
        good = parse_categories(",".join(good), model.taxonomy.paths)
        return ClassifierJudge(model, good)
    except ModelError as exc:
        raise SettingsError(str(exc)) from None
    except TaxonomyError as exc:
        raise SettingsError(f"good categories {', '.join(good)}: {exc}") from None


class VerdictJudge:
    """Verdicts another strategy has already reached (the focused crawler's
    batched classifications)."""

    name = "classifier"

    def __init__(self, relevance: Callable[[Page], float]):
        self.relevance = relevance  # type: ignore[method-assign]


def model_good(model: TaxonomyClassifier) -> tuple[str, ...]:
    """The good category a model trained from examples names for itself."""
    good = model.report.get("good") if isinstance(model.report, dict) else None
    return (good,) if isinstance(good, str) and good else ()


class LinkLearnerStrategy(SharkSearchStrategy):
    name = "link-learner"
    needs_query = False  # a classifier judge needs none (from_crawler checks the topic)

    def __init__(
        self,
        topic: Topic,
        analyzer: TermAnalyzer,
        judge: RelevanceJudge,
        learner: LinkLearner | None = None,
        explore: float = 0.1,
        seed: int = 0,
        rescore_every: int = 10,
        memory: int = 200_000,
        crawler: Crawler | None = None,
        **shark: Any,
    ):
        # SharkSearch's anchor and context terms, when there is a query: a
        # classifier topic without one has no neighbourhood, only inheritance.
        super().__init__(topic, analyzer, **shark)
        self.judge = judge
        self.learner = learner or LinkLearner()
        self.explore, self.seed = explore, seed
        self.rescore_every = rescore_every
        self.crawler = crawler
        #: the features (and score) of each queued link, until its page arrives
        self.pending: RecentMemory[str, tuple[LinkFeatures, float]] = RecentMemory(memory)
        #: the features and verdict of fetched pages' links, for a user's label
        self.fetched: RecentMemory[str, tuple[LinkFeatures, float]] = RecentMemory(memory)
        #: pages whose fetch told its verdict: a link to one is never queued again
        self.done: RecentMemory[str, None] = RecentMemory(memory)
        #: queued links by their closest sibling groups (own directory, page):
        #: re-scored every few verdicts (SIBLINGS_EVERY) when a sibling's fetch tells something
        self.siblings: dict[int, set[str]] = {}
        self._since_rescore = 0
        #: sibling groups whose history changed since their links were last re-scored
        self._sibling_cells: set[int] = set()
        self._since_siblings = 0
        self._rescores = 0
        self.pages = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler, topic: Topic) -> Self:
        analyzer = TermAnalyzer(stem=config.get_bool(crawler.settings, "FOCUS_STEMMING"))
        judge = judge_of(crawler, topic, analyzer)
        if isinstance(judge, QueryJudge) and not judge.query:
            raise SettingsError(
                f"the link learner needs a topic: a query with at least one non-stopword term (-a query=\"…\"), "
                f"or a model and good categories (-a model=FILE -a good=CATEGORY); got query={topic.query!r}"
            )
        return cls.with_judge(crawler, topic, analyzer, judge)

    @classmethod
    def with_judge(cls, crawler: Crawler, topic: Topic, analyzer: TermAnalyzer, judge: RelevanceJudge) -> Self:
        """A link learner of this crawl's settings, judging pages by *judge*."""
        settings = crawler.settings
        learner = LinkLearner(
            rate=config.get_float(settings, "FOCUS_LEARNER_RATE"),
            batch=config.get_int(settings, "FOCUS_LEARNER_BATCH"),
            history_strength=config.get_float(settings, "FOCUS_LEARNER_STRENGTH"),
        )
        strategy = cls(
            topic, analyzer, judge, learner,
            explore=config.get_float(settings, "FOCUS_LEARNER_EXPLORE"),
            seed=config.get_int(settings, "FOCUS_RANDOM_SEED"),
            rescore_every=config.get_int(settings, "FOCUS_LEARNER_RESCORE_EVERY"),
            memory=config.get_int(settings, "FOCUS_LEARN_MEMORY"),
            crawler=crawler,
            **cls.parameters(settings),
        )
        crawler.signals.connect(strategy.report, signals.spider_closed)
        if config.get_bool(settings, "FOCUS_LEARNER_SHARED"):
            from crawlproject.distributed.experience import SharedExperience

            spider_name = str(getattr(crawler.spidercls, "name", "crawl"))
            strategy.shared = SharedExperience.from_crawler(
                crawler, strategy.learn_from_others, spider_name, strategy.learn_forwarded
            )
            crawler.signals.connect(strategy.shared.final_exchange, signals.spider_closed)
        jobdir = job_dir(settings)
        if jobdir:
            strategy.resume_from(jobdir)
            crawler.signals.connect(lambda: strategy.save_to(jobdir), signals.spider_closed, weak=False)
        return strategy

    # -- state (JOBDIR) --------------------------------------------------------------

    def resume_from(self, jobdir: str) -> None:
        from pathlib import Path

        path = Path(jobdir) / "link-learner.npz"
        if path.exists():
            try:
                self.learner = LinkLearner.load(path)
            except ModelError as exc:
                raise SettingsError(f"{exc} (start a new JOBDIR)") from None
            logger.info("Resuming the link learner (%d examples learnt) from %s", self.learner.learned, path)

    def save_to(self, jobdir: str) -> None:
        from pathlib import Path

        self.learner.save(Path(jobdir) / "link-learner.npz")

    def report(self) -> None:
        """What was learnt, in the log at the end."""
        learner = self.learner
        learner.flush()
        history = learner.history
        logger.info(
            "Link learner: %d examples (%d dead ends), %d re-scores; relevance per unit of prior %.3g, "
            "alive rate %.3g, %d sibling groups; the token corrections trusted %.2f (relevance), %.2f (alive)",
            learner.learned, learner.dead_ends, self._rescores, history.scale, history.alive_rate,
            len(history.cells), learner.relevance.trust, learner.alive.trust,
        )

    # -- verdicts -------------------------------------------------------------------

    def page_relevance(self, page: Page) -> float:
        """The judge's verdict; the link that led here learns it."""
        relevance = self.judge.relevance(page)
        self._learn(page.key, relevance)
        return relevance

    def dead_end(self, key: str, meta: Mapping[str, Any], status: int | None) -> None:
        self._learn(key, None)
        self._inc("focus/learner/dead_ends")
        self._outcome()

    def _learn(self, key: str, relevance: float | None) -> None:
        self.done.keep(key, None)
        remembered = self.pending.pop(key, None)
        if remembered is not None:
            experience = Experience(remembered[0], relevance)
            self.learner.add(experience)
            if relevance is not None:
                self.fetched.keep(key, (remembered[0], relevance))
            self._inc("focus/learner/examples")
            if self.shared is not None:
                self.shared.share(experience)
            self._sibling_cells.update(remembered[0].cells[-2:])
        elif self.shared is not None:
            self.shared.forward(key, relevance)  # another worker queued it: it holds the features

    def _rescore_siblings(self, cells: Iterable[int]) -> int:
        """The queued links of the same directory and page as a link just
        fetched, re-scored now: a dead end or a relevant page says most of
        its closest siblings."""
        affected: set[str] = set()
        for cell in cells:
            keys = self.siblings.get(cell)
            if keys:
                # Forget what was fetched or forgotten: a look-up per sibling (an
                # intersection with the pending mapping would walk all of it).
                keys.difference_update([key for key in keys if key not in self.pending])
                affected |= keys
                if not keys:
                    del self.siblings[cell]
        if affected and self.crawler is not None:
            self._send_rescore(sorted(affected), keys_only=True)  # sorted: a repeatable crawl (FOCUS_REPEATABLE)
        return len(affected)

    def user_label(self, key: str, relevant: bool) -> dict[str, Any]:
        """A user's label of a fetched page: its verdict is replaced by the
        label in the path history and learnt once more by the corrections;
        its siblings are re-scored now, the rest of the queue with the next
        periodic re-score."""
        remembered = self.fetched.get(key)
        if remembered is None:
            return {"learnt": False, "why": "the link learner does not remember this page (a seed, or long ago)"}
        features, verdict = remembered
        label = 1.0 if relevant else 0.0
        before = self.learner.history.estimate(features.prior, features.cells)[0]
        self.learner.relabel(features, verdict, label)
        self.fetched.keep(key, (features, label))
        after = self.learner.history.estimate(features.prior, features.cells)[0]
        moved = self._rescore_siblings(features.cells[-2:])
        self._since_rescore = max(self._since_rescore, self.rescore_every - 1)  # the whole queue soon
        self._inc("focus/learner/user_labels")
        return {"learnt": True, "verdict_was": round(verdict, 3), "label": label,
                "sibling_estimate": [round(before, 4), round(after, 4)], "links_rescored": moved}

    def describe_learning(self) -> dict[str, Any]:
        learner = self.learner
        history = learner.history
        return {
            "kind": "link learner", "judge": self.judge.name, "examples": learner.learned,
            "dead_ends": learner.dead_ends, "rescores": self._rescores,
            "trust": {"relevance": round(learner.relevance.trust, 3), "alive": round(learner.alive.trust, 3)},
            "relevance_per_prior": round(history.scale, 4), "alive_rate": round(history.alive_rate, 4),
            "sibling_groups": len(history.cells),
            "top_features": [
                {"token": token, "relevance": round(r, 4), "alive": round(a, 4)}
                for token, r, a in learner.top_features(learner.featurizer.names, 12)
            ],
        }

    #: Other workers' experiences through Redis (FOCUS_LEARNER_SHARED).
    shared: SharedExperience | None = None

    def learn_from_others(self, experiences: list[Experience]) -> None:
        """Another worker's verdicts: learnt as this worker's own are."""
        for experience in experiences:
            self.learner.add(experience)
        self._inc("focus/learner/examples_from_workers", len(experiences))

    def learn_forwarded(self, verdicts: list[tuple[str, float | None]]) -> None:
        """Verdicts another worker forwarded on links this one may have
        queued: those it holds are learnt (and shared) as its own."""
        learnt = 0
        for key, relevance in verdicts:
            if key in self.pending:
                self._learn(key, relevance)
                learnt += 1
        if learnt:
            self._inc("focus/learner/verdicts_from_workers", learnt)
            self._outcome()

    # -- scores ---------------------------------------------------------------------

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float | None]:
        sim = relevance if relevance is not None else self.page_relevance(page)
        inherited, depth = self._inheritance(page, sim)
        features = []
        for link in page.links:
            context = page.link_context(link, self.context_words)
            anchor_terms = self.analyzer.terms(context.anchor)
            context_terms = self.analyzer.terms(context.context)
            prior = 0.0
            if depth > 0:  # SharkSearch follows it: its score is the prior
                around = self.neighborhood(Counter(anchor_terms), Counter(context_terms))
                prior = self.gamma * inherited + (1 - self.gamma) * around
            tokens = link_tokens(anchor_terms, context_terms, link.key, page.url, sim, page.depth + 1)
            features.append(self.learner.featurizer.featurize(tokens, prior, sim, path_cells(link.key, page.key)))
        scores = self._scores([link.key for link in page.links], features)
        for link, found, score in zip(page.links, features, scores, strict=True):
            if link.key in self.done:
                continue  # fetched already: the frontier will not queue it, nothing to wait for
            kept = self.pending.get(link.key)
            if kept is None or score > kept[1]:  # the frontier keeps the better of two finds
                self.pending.keep(link.key, (found, float(score)))
                for cell in found.cells[-2:]:
                    if cell:
                        self.siblings.setdefault(cell, set()).add(link.key)
        return [float(score) for score in scores]

    def _scores(self, link_keys: Sequence[str], features: Sequence[LinkFeatures]) -> np.ndarray:
        """The learner's scores, the exploring links' their calibrated prior."""
        if not features:
            return np.zeros(0)
        scores = self.learner.scores(features)
        exploring = self.exploring(link_keys)
        if exploring.any():
            scores[exploring] = self.learner.calibrated_priors(features)[exploring]
        priors = np.array([f.prior for f in features])
        return scores + PRIOR_TIE * priors

    def exploring(self, link_keys: Sequence[str]) -> np.ndarray:
        """Which links explore: a fixed share, by a hash of the URL and seed."""
        if self.explore <= 0:
            return np.zeros(len(link_keys), dtype=bool)
        cut = self.explore * 2**64
        return np.array([xxhash.xxh3_64_intdigest(key.encode(), seed=self.seed) < cut for key in link_keys])

    def after_page(self, page: Page, relevance: float | None) -> Sequence[Any]:
        self.pages += 1
        self._outcome()
        return ()

    def _outcome(self) -> None:
        """Every so many fetches (pages and dead ends), the queued links are
        re-scored (and a shared learner exchanges what it learnt)."""
        self._since_rescore += 1
        self._since_siblings += 1
        if self.shared is not None and self.shared.waiting() >= self.learner.batch:
            self.shared.exchange()
        if self.rescore_every and self._since_rescore >= max(self.rescore_every, len(self.pending) // 100):
            self.rescore()
        elif self._since_siblings >= SIBLINGS_EVERY:
            self._since_siblings = 0
            cells, self._sibling_cells = self._sibling_cells, set()
            self._rescore_siblings(sorted(cells))  # sorted: a repeatable crawl (FOCUS_REPEATABLE)

    def rescore(self) -> None:
        """Every remembered queued link gets its score from what was learnt
        since it was queued (its directories' and host's history included)."""
        self.learner.flush()
        self._since_rescore = self._since_siblings = 0
        self._sibling_cells.clear()  # the whole queue includes them
        if not self.pending or self.crawler is None:
            return
        self._send_rescore(list(self.pending), keys_only=True)  # only they can change: no scan of the queue
        self._rescores += 1
        self._inc("focus/learner/rescores")

    def _send_rescore(self, link_keys: list[str], keys_only: bool) -> None:
        """New scores for *link_keys* (remembered queued links) to the
        frontier: those links only, or the whole queue looked through."""
        features = [self.pending[key][0] for key in link_keys]
        scores = self._scores(link_keys, features)
        new = dict(zip(link_keys, scores.tolist(), strict=True))
        for key, score in new.items():
            self.pending[key] = (self.pending[key][0], score)

        def scorer(key: str, score: float, meta: dict[str, Any] | None) -> float:
            if meta and meta.get(keys.SEED):
                return score
            return float(new.get(key, score))

        assert self.crawler is not None
        self.crawler.signals.send_catch_log(
            focus_signals.frontier_rescore, scorer=scorer, keys=link_keys if keys_only else None
        )

    def _inc(self, stat: str, count: int = 1) -> None:
        if self.crawler is not None and self.crawler.stats is not None:
            self.crawler.stats.inc_value(stat, count)
