"""Judges backed by a trained model: a taxonomy classifier with good
categories (docs/methods.md §2's R(p)), and a topic learnt from example pages
(crawlproject.models.topic_page: calibrated, so it knows its precision).

Both models' probabilities hold where they were trained: the taxonomy's
labelled pages, the pages near the seeds. A focused crawl meets another
share of relevant pages, so each judge moves them to the share it
re-estimates on the crawl's own pages (crawlproject.judges.calibration,
:class:`PriorShift`) — during the crawl, and once more at its end."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from crawlproject.judges.base import PageJudge, PrecisionEstimate
from crawlproject.judges.calibration import Calibration, CrawlRefit, FittedOnTheCrawl, PriorShift
from crawlproject.models.intervals import spanning

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from crawlproject.models.taxonomy_classifier import TaxonomyClassifier
    from crawlproject.models.topic_page import TopicPageModel
    from crawlproject.policy.scope import HomeSites
    from crawlproject.web.page import Page


@dataclass(frozen=True)
class Verdict:
    """What a taxonomy classifier says of one page."""

    relevance: float  #: R(p) = Σ_{c ∈ good} Pr(c | p) (docs/methods.md §2)
    leaf: int  #: the best leaf c*
    expand: bool  #: hard focus: c* or an ancestor is good


class ClassifierJudge(PageJudge):
    """R(p) = Σ_{c ∈ good} Pr(c | p) of a taxonomy classifier (docs/methods.md §2), 0
    away from a site-bound topic's *home*; pages are classified in batches
    (:meth:`classify`: the spider's micro-batcher feeds it) and each page's
    :class:`Verdict` (its best leaf too, which hard focus reads) is kept
    until its links are scored. *on_classified* sees every page's features,
    leaf and the leaf's probability (the focused crawler's online learner)."""

    name: ClassVar[str] = "classifier"
    #: verdicts kept for pages whose links are not scored yet
    KEPT = 10_000

    def __init__(
        self, model: TaxonomyClassifier, good: Sequence[str],
        on_classified: Callable[[str, Any, int, float], None] | None = None,
    ):
        super().__init__()
        self.model = model
        self.good = model.good_nodes(good)
        self._good_array = np.array(self.good)
        good_nodes = set(self.good)
        #: c* expands under hard focus when it lies in the subtree of a good node
        self.expands = np.array(
            [any(a in good_nodes for a in model.taxonomy.ancestors(node)) for node in range(len(model.taxonomy))]
        )
        #: a site-bound topic's home (the crawl's, bound by the focused crawler); None: no home
        self.home: HomeSites | None = None
        self.on_classified = on_classified
        self._verdicts: OrderedDict[str, Verdict] = OrderedDict()
        try:  # naive Bayes's posteriors sit near 0 and 1: moved, but no precision is stated from them
            # (their mean over the calls stated 0.98 where the labels measured 0.15: bench.judges, examples-nb)
            self.calibration = PriorShift(model.prior_of(self.good), states_precision=False)
        except ValueError:  # a model that cannot classify: every page will say so (focus/classify/errors)
            self.calibration = None

    def classify(self, pages: Sequence[Page]) -> list[Verdict]:
        """Classify *pages* together; each page's verdict is kept for its links."""
        features = self.model.features([page.text for page in pages])
        probabilities = self.model.proba(features)
        relevance, leaves = self.relevance_and_leaves(probabilities)
        verdicts = []
        for row, page in enumerate(pages):
            leaf = int(leaves[row])
            if self.home is not None and self.home.away(page.key):
                verdict = Verdict(0.0, leaf, False)
            else:
                verdict = Verdict(float(relevance[row]), leaf, bool(self.expands[leaf]))
            self.assume(page, verdict)
            verdicts.append(verdict)
            if self.on_classified is not None:  # keyed by the URL fetched: what its links carry as their parent
                self.on_classified(page.url, features[row], leaf, float(probabilities[row, leaf]))
        return verdicts

    def relevance_and_leaves(self, probabilities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """R(p) and the best leaf c* of each page of these class probabilities."""
        return probabilities[:, self._good_array].sum(axis=1), self.model.best_leaves(probabilities)

    def verdict(self, page: Page) -> Verdict:
        """The page's verdict: kept from its batch, else classified now."""
        verdict = self._verdicts.get(page.key)
        return verdict if verdict is not None else self.classify([page])[0]

    def assume(self, page: Page, verdict: Verdict) -> None:
        """Use *verdict* for *page* (its batch's, or when classifying it failed)."""
        self._verdicts[page.key] = verdict
        self._verdicts.move_to_end(page.key)
        if len(self._verdicts) > self.KEPT:
            self._verdicts.popitem(last=False)

    batches = True

    def prepare(self, pages: Sequence[Page]) -> None:
        self.classify(pages)

    def prepare_failed(self, page: Page) -> None:
        """Classifying *page* failed: relevance 0, its links last."""
        self.assume(page, Verdict(0.0, 0, expand=False))

    def score(self, page: Page) -> float:
        return self.verdict(page).relevance


#: How a topic from examples learns what its probabilities mean on the
#: crawl's pages (crawlproject.judges.calibration): "scott" (the share of
#: relevant pages by where the held-out examples score among the crawl's, the
#: probabilities moved to it), "em" (Saerens et al.'s EM on the probabilities),
#: "refit" (the model's calibration fitted anew on the crawl's pages), "none"
#: (the pages near the seeds' probabilities). Chosen leaving one corpus out
#: (bench.judges; docs/strategies.md, "How sure a judge is").
EXAMPLES_CALIBRATION = "scott"


def examples_calibration(model: TopicPageModel, kind: str = EXAMPLES_CALIBRATION) -> Calibration | None:
    """The calibration *kind* for a topic from examples (a model saved
    before it kept its examples' probabilities: EM)."""
    examples = model.example_probabilities if len(model.example_probabilities) else None
    if kind == "none":
        return None
    if kind == "refit" and examples is not None:
        return CrawlRefit(examples)
    return PriorShift(model.prior, examples if kind == "scott" else None)


class ExamplesJudge(PageJudge):
    """A topic learnt from example pages: Pr(relevant | page) among the pages
    near the seeds, moved to the share of relevant pages the crawl meets."""

    name: ClassVar[str] = "examples"

    def __init__(self, model: TopicPageModel, calibration: str = EXAMPLES_CALIBRATION):
        super().__init__()
        self.model = model
        self.calibration = examples_calibration(model, calibration)
        # the user's examples are the user's word: an irrelevant one is never called relevant
        examples = model.report.get("examples") or {}
        self.word.update({url: True for url in examples.get("relevant", ())})
        self.word.update({url: False for url in examples.get("irrelevant", ())})

    def score(self, page: Page) -> float:
        return float(self.model.relevance([page.text])[0])

    def precision(self) -> PrecisionEstimate | None:
        """The user's labels of its calls once there are enough; else told
        by its held-out examples among the crawl's pages (crawlproject.models.
        topic_page.examples_precision: its probabilities' own mean stated
        0.93 where the labels measured 0.52), the interval spanning both
        estimates' and widened by ``PRECISION_MARGIN``; a model saved before
        it kept its examples' probabilities: their mean."""
        from crawlproject.models.topic_page import examples_precision

        examples = self.model.example_probabilities
        threshold = self.threshold_in_force()
        if self.tally.labelled_calls >= self.tally.ENOUGH_LABELS or not len(examples) or threshold is None:
            return super().precision()
        calibration = self.calibration
        scores = calibration.scores if isinstance(calibration, FittedOnTheCrawl) else list(self.recent.values())
        told = examples_precision(examples, np.asarray(scores, dtype=float), threshold)
        if told is None:
            return None
        value, low, high = told
        by_probabilities = self.tally.estimate(0.0)  # the interval spans both estimates
        low, high = spanning([(low, high)] + ([] if by_probabilities is None else
                                              [(by_probabilities.low, by_probabilities.high)]))
        return PrecisionEstimate(value, low, high, "examples", self.tally.calls)
