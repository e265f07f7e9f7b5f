"""The online link learner as a strategy (the model is
crawlproject.models.online_link_model): SharkSearch's score is each link's prior,
and the crawl's own verdicts teach the correction.

* **Verdicts.** A page's relevance is its judge's (the page-judge port,
  crawlproject.judges): the query's (SharkSearch's own sim(q, p)), R(p) of a
  taxonomy classifier with good categories (``-a model=… -a good=…``), or a
  topic learnt from example pages (``scrapy train --examples``). Never
  evaluation labels.
* **Prior** (crawlproject.strategies.link_priors): SharkSearch's score with
  the verdict as its relevance, 0 past its depth budget (such a link is queued
  last, and followed only when what was learnt raises it); or a link model.
* **Learning.** When a page arrives, the link that led to it is an example
  of its relevance; a link that led to a dead end (4xx/5xx, a failed fetch)
  an example of a dead end. Examples are learnt in mini-batches
  (FOCUS_LEARNER_BATCH), and every FOCUS_LEARNER_RESCORE_EVERY pages — at
  least queue ÷ FOCUS_LEARNER_RESCORE_LINKS fetches apart, so that the cost
  per page stays flat as the queue grows — every queued link the learner still remembers is
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
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xxhash
from scrapy.utils.job import job_dir

from crawlproject import config
from crawlproject.config import DEFAULTS, SettingsError
from crawlproject.models.link_features import LinkFeatures, link_tokens, path_cells
from crawlproject.models.modelfile import ModelError
from crawlproject.models.online_link_model import Experience, LinkLearner
from crawlproject.models.shark_score import SharkParameters
from crawlproject.strategies.base import CrawlStrategy, RecentMemory
from crawlproject.strategies.link_priors import PRIOR_TIE, LinkPriors, prior_from_setting
from crawlproject.strategies.shark_search import shark_settings
from crawlproject.strategies.sibling_groups import DirectoryProbes, SiblingGroups
from crawlproject.web import meta as keys

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Self

    from scrapy.crawler import Crawler

    from crawlproject.distributed.experience import SharedExperience
    from crawlproject.models.link_prior import LinkPrior
    from crawlproject.strategies.base import BuildContext, Topic
    from crawlproject.strategies.ports import FrontierPort
    from crawlproject.web.page import Page
    from crawlproject.web.text import TermAnalyzer

logger = logging.getLogger(__name__)


class LinkLearnerStrategy(CrawlStrategy):
    name = "link-learner"
    needs_judge = True  # the verdicts it learns from

    def __init__(
        self,
        topic: Topic,
        analyzer: TermAnalyzer,
        learner: LinkLearner | None = None,
        explore: float = DEFAULTS["FOCUS_LEARNER_EXPLORE"],
        seed: int = DEFAULTS["FOCUS_RANDOM_SEED"],
        rescore_every: int = DEFAULTS["FOCUS_LEARNER_RESCORE_EVERY"],
        rescore_links: int = DEFAULTS["FOCUS_LEARNER_RESCORE_LINKS"],
        siblings_moved: float = DEFAULTS["FOCUS_LEARNER_SIBLINGS_MOVED"],
        siblings_every: int = DEFAULTS["FOCUS_LEARNER_SIBLINGS_EVERY"],
        probe_hold: float = DEFAULTS["FOCUS_LEARNER_PROBE_HOLD"],
        in_flight: float = DEFAULTS["FOCUS_LEARNER_IN_FLIGHT"],
        memory: int = DEFAULTS["FOCUS_LEARN_MEMORY"],
        frontier: FrontierPort | None = None,
        prior: LinkPrior | None = None,
        gamma: float = DEFAULTS["FOCUS_SHARK_GAMMA"],
        delta: float = DEFAULTS["FOCUS_SHARK_DELTA"],
        beta: float = DEFAULTS["FOCUS_SHARK_BETA"],
        depth: int = DEFAULTS["FOCUS_SHARK_DEPTH"],
        context_words: int = DEFAULTS["FOCUS_CONTEXT_WORDS"],
    ):
        super().__init__(topic, analyzer, frontier)
        #: SharkSearch's formula, the prior's and its inheritance (crawlproject.models.shark_score)
        self.shark = SharkParameters(gamma, delta, beta, depth)
        #: what a link is worth before learning: SharkSearch's score, or the model FOCUS_LEARNER_PRIOR names
        self.priors = LinkPriors(topic, analyzer, self.shark, context_words, prior)
        self.learner = learner or LinkLearner()
        self.explore, self.seed = explore, seed
        self.rescore_every = rescore_every
        #: queued links re-scored per fetch on average: the whole queue every queue/this fetches
        self.rescore_links = rescore_links
        #: queued links by their closest sibling groups, re-scored when a sibling's fetch tells something
        self.siblings = SiblingGroups(siblings_moved, siblings_every)
        #: an unexplored directory's queued links held at a share of their score but its probe's (1: none)
        self.probes = DirectoryProbes(probe_hold, memory)
        #: how much of what is expected of a link in flight its sibling groups count as not
        #: shown until its verdict (PathHistory.hold; 0: none)
        self.in_flight = in_flight
        #: links in flight → what their hold added to the history
        self._held: RecentMemory[str, list[tuple[int, float]]] = RecentMemory(memory)
        #: the features (and score) of each queued link, until its page arrives
        self.pending: RecentMemory[str, tuple[LinkFeatures, float]] = RecentMemory(memory)
        #: the features and verdict of fetched pages' links, for a user's label
        self.fetched: RecentMemory[str, tuple[LinkFeatures, float]] = RecentMemory(memory)
        #: pages whose fetch told its verdict: a link to one is never queued again
        self.done: RecentMemory[str, None] = RecentMemory(memory)
        self._since_rescore = 0
        self._rescores = 0
        self.pages = 0

    @classmethod
    def from_settings(cls, context: BuildContext) -> Self:
        settings = context.settings
        learner = LinkLearner(
            rate=config.get_float(settings, "FOCUS_LEARNER_RATE"),
            batch=config.get_int(settings, "FOCUS_LEARNER_BATCH"),
            history_strength=config.get_float(settings, "FOCUS_LEARNER_STRENGTH"),
        )
        strategy = cls(
            context.topic, context.analyzer(), learner,
            explore=config.get_float(settings, "FOCUS_LEARNER_EXPLORE"),
            seed=config.get_int(settings, "FOCUS_RANDOM_SEED"),
            rescore_every=config.get_int(settings, "FOCUS_LEARNER_RESCORE_EVERY"),
            rescore_links=config.get_int(settings, "FOCUS_LEARNER_RESCORE_LINKS"),
            siblings_moved=config.get_float(settings, "FOCUS_LEARNER_SIBLINGS_MOVED"),
            siblings_every=config.get_int(settings, "FOCUS_LEARNER_SIBLINGS_EVERY"),
            probe_hold=config.get_float(settings, "FOCUS_LEARNER_PROBE_HOLD"),
            in_flight=config.get_float(settings, "FOCUS_LEARNER_IN_FLIGHT"),
            memory=config.get_int(settings, "FOCUS_LEARN_MEMORY"),
            frontier=context.frontier,
            prior=prior_from_setting(config.get_str(settings, "FOCUS_LEARNER_PRIOR")),
            **shark_settings(settings),
        )
        context.frontier.on_close(strategy.report)
        jobdir = job_dir(settings)
        if jobdir:
            strategy.resume_from(jobdir)
            context.frontier.on_close(lambda: strategy.save_to(jobdir))
        return strategy

    # -- state (JOBDIR) --------------------------------------------------------------

    def resume_from(self, jobdir: str) -> None:
        path = Path(jobdir) / "link-learner.npz"
        if path.exists():
            try:
                self.learner = LinkLearner.load(path)
            except ModelError as exc:
                raise SettingsError(f"{exc} (start a new JOBDIR)") from None
            logger.info("Resuming the link learner (%d examples learnt) from %s", self.learner.learned, path)

    def save_to(self, jobdir: str) -> None:
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

    def page_arrived(self, page: Page, relevance: float | None) -> None:
        """The link that led here learns the page's verdict."""
        self._learn(page.key, relevance or 0.0)

    def dead_end(self, key: str, meta: Mapping[str, Any], status: int | None) -> None:
        self._learn(key, None)
        self.frontier.inc("focus/learner/dead_ends")
        self._outcome()

    def fetching(self, key: str) -> None:
        """A queued link is being fetched: with FOCUS_LEARNER_IN_FLIGHT its
        sibling groups hold a share of what is expected of it until its
        verdict (PathHistory.hold), and their queued links are re-scored
        with the next sibling re-score."""
        if not self.in_flight or key in self._held:
            return
        remembered = self.pending.get(key)
        if remembered is not None:
            features = remembered[0]
            self._held.keep(key, self.learner.history.hold(features.prior, features.cells, self.in_flight))
            self.siblings.touched(features.cells)

    def _learn(self, key: str, relevance: float | None) -> None:
        self.done.keep(key, None)
        held = self._held.pop(key, None)
        if held is not None:
            self.learner.history.release(held)
        remembered = self.pending.pop(key, None)
        if remembered is not None:
            experience = Experience(remembered[0], relevance)
            self.learner.add(experience)
            if relevance is not None:
                self.fetched.keep(key, (remembered[0], relevance))
            self.frontier.inc("focus/learner/examples")
            if self.shared is not None:
                self.shared.share(experience)
            self.siblings.touched(remembered[0].cells)
            directory = remembered[0].cells[-2]
            if self.probes.answered(directory, key):  # the directory's first verdict: its held links are re-scored
                self.siblings.forget_said(directory)
        elif self.shared is not None:
            self.shared.forward(key, relevance)  # another worker queued it: it holds the features

    def _rescore_siblings(self, cells: Iterable[int], moved_only: bool = False) -> int:
        """The queued links of the same directory and page as a link just
        fetched, re-scored now (SiblingGroups.to_rescore)."""
        affected = self.siblings.to_rescore(cells, self._group_says, self.pending, moved_only,
                                            lambda: self.frontier.inc("focus/learner/sibling_rescores_skipped"))
        if affected:
            self._send_rescore(affected, keys_only=True)
        return len(affected)

    def _group_says(self, chain: tuple[int, ...]) -> float:
        """What a sibling group's history (its own and its coarser groups',
        *chain*) makes of a link of prior 1, over the crawl's scale:
        E[relevance] · Pr(alive) ÷ relevance per unit of prior."""
        history = self.learner.history
        relevance, alive = history.estimate(1.0, chain)
        return relevance * alive / history.scale

    def user_label(self, key: str, relevant: bool) -> dict[str, Any]:
        """A user's label of a fetched page: its verdict is replaced by the
        label in the path history and learnt once more by the corrections;
        its siblings are re-scored now, the rest of the queue with the next
        periodic re-score."""
        remembered = self.fetched.get(key)
        if remembered is None:
            return {"learnt": False,
                    "why": "the link learner does not remember this page (a seed, or long ago)"}
        features, verdict = remembered
        label = 1.0 if relevant else 0.0
        before = self.learner.history.estimate(features.prior, features.cells)[0]
        self.learner.relabel(features, verdict, label)
        self.fetched.keep(key, (features, label))
        after = self.learner.history.estimate(features.prior, features.cells)[0]
        moved = self._rescore_siblings(features.cells[-2:])
        self._since_rescore = max(self._since_rescore, self.rescore_every - 1)  # the whole queue soon
        self.frontier.inc("focus/learner/user_labels")
        return {"learnt": True, "verdict_was": round(verdict, 3), "label": label,
                "sibling_estimate": [round(before, 4), round(after, 4)], "links_rescored": moved}

    def describe_learning(self) -> dict[str, Any]:
        learner = self.learner
        history = learner.history
        return {
            "kind": "link learner", "examples": learner.learned,
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

    def share_through(self, crawler: Crawler) -> None:
        """Learn every worker's verdicts, and share this one's, through the
        crawl's Redis (FOCUS_LEARNER_SHARED); a last exchange when the spider closes."""
        from scrapy import signals

        from crawlproject.distributed.experience import SharedExperience

        spider_name = str(getattr(crawler.spidercls, "name", "crawl"))
        self.shared = SharedExperience.from_crawler(crawler, self.learn_from_others, spider_name, self.learn_forwarded)
        crawler.signals.connect(self.shared.final_exchange, signals.spider_closed)

    def learn_from_others(self, experiences: list[Experience]) -> None:
        """Another worker's verdicts: learnt as this worker's own are."""
        for experience in experiences:
            self.learner.add(experience)
        self.frontier.inc("focus/learner/examples_from_workers", len(experiences))

    def learn_forwarded(self, verdicts: list[tuple[str, float | None]]) -> None:
        """Verdicts another worker forwarded on links this one may have
        queued: those it holds are learnt (and shared) as its own."""
        learnt = 0
        for key, relevance in verdicts:
            if key in self.pending:
                self._learn(key, relevance)
                learnt += 1
        if learnt:
            self.frontier.inc("focus/learner/verdicts_from_workers", learnt)
            self._outcome()

    # -- scores ---------------------------------------------------------------------

    def child_state(self, page: Page, relevance: float | None) -> dict[str, Any]:
        """SharkSearch's inheritance and depth budget, handed down for the prior."""
        return self.shark.child_meta(relevance or 0.0, page.meta)

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float | None]:
        sim = relevance or 0.0
        described = self.priors.terms(page)
        priors = self.priors.of(page, sim, described)
        depth = page.depth + 1
        tokens = [link_tokens(anchor, context, link.key, page.url, sim, depth) for link, anchor, context in described]
        cells = [path_cells(link.key, page.key) for link in page.links]
        features = self.learner.featurizer.featurize_many(tokens, priors, sim, cells)
        scores = self._scores([link.key for link in page.links], features)
        for link, found, score in zip(page.links, features, scores, strict=True):
            if link.key in self.done:
                continue  # fetched already: the frontier will not queue it, nothing to wait for
            kept = self.pending.get(link.key)
            if kept is None or score > kept[1]:  # the frontier keeps the better of two finds
                self.pending.keep(link.key, (found, float(score)))
                self.siblings.add(link.key, found.cells)
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
        scores += PRIOR_TIE * priors
        self.probes.apply(link_keys, [found.cells[-2] for found in features], scores, self.learner.history.cells,
                          self.pending)
        return scores

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
        touched = self.siblings.due()
        if self.shared is not None and self.shared.waiting() >= self.learner.batch:
            self.shared.exchange()
        due = max(self.rescore_every, len(self.pending) // self.rescore_links)
        if self.rescore_every and self._since_rescore >= due:
            self.rescore()
        elif touched:
            self._rescore_siblings(touched, moved_only=True)

    def rescore(self) -> None:
        """Every remembered queued link gets its score from what was learnt
        since it was queued (its directories' and host's history included)."""
        self.learner.flush()
        self._since_rescore = 0
        self.siblings.all_rescored()  # the whole queue includes them
        if not self.pending:
            return
        self._send_rescore(list(self.pending), keys_only=True)  # only they can change: no scan of the queue
        self._rescores += 1
        self.frontier.inc("focus/learner/rescores")

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

        self.frontier.rescore(scorer, link_keys if keys_only else None)
