"""Judges backed by a trained model: a taxonomy classifier with good
categories (SPEC §2's R(p)), and a topic learnt from example pages
(crawlproject.models.topic_page: calibrated, so it knows its precision)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from crawlproject.judges.base import PageJudge, PrecisionEstimate, wilson

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from crawlproject.models.taxonomy_classifier import TaxonomyClassifier
    from crawlproject.models.topic_page import TopicPageModel
    from crawlproject.policy.scope import HomeSites
    from crawlproject.web.page import Page


@dataclass(frozen=True)
class Verdict:
    """What a taxonomy classifier says of one page."""

    relevance: float  #: R(p) = Σ_{c ∈ good} Pr(c | p) (SPEC §2)
    leaf: int  #: the best leaf c*
    expand: bool  #: hard focus: c* or an ancestor is good


class ClassifierJudge(PageJudge):
    """R(p) = Σ_{c ∈ good} Pr(c | p) of a taxonomy classifier (SPEC §2), 0
    away from a site-bound topic's *home*; pages are classified in batches
    (:meth:`classify`: the spider's micro-batcher feeds it) and each page's
    :class:`Verdict` (its best leaf too, which hard focus reads) is kept
    until its links are scored. *on_classified* sees every page's features,
    leaf and the leaf's probability (the focused crawler's online learner)."""

    name: ClassVar[str] = "classifier"
    #: verdicts kept for pages whose links are not scored yet
    KEPT = 10_000

    def __init__(
        self, model: TaxonomyClassifier, good: Sequence[str], home: HomeSites | None = None,
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
        self.home = home
        self.on_classified = on_classified
        self._verdicts: OrderedDict[str, Verdict] = OrderedDict()

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


class ExamplesJudge(PageJudge):
    """A topic learnt from example pages (0.5 at its threshold); its
    precision is the one its training estimated on pages near the seeds,
    until the user's labels of its calls measure it."""

    name: ClassVar[str] = "examples"

    def __init__(self, model: TopicPageModel):
        super().__init__()
        self.model = model

    def score(self, page: Page) -> float:
        return float(self.model.relevance([page.text])[0])

    def precision(self) -> PrecisionEstimate | None:
        measured = super().precision()
        estimate = self.model.report.get("on_unlabelled") or {}
        if measured is not None or estimate.get("precision") is None:
            return measured
        value = float(estimate["precision"])
        pages = int(self.model.report.get("unlabelled", 0))
        low, high = wilson(value * pages, pages)
        return PrecisionEstimate(value, low, high, "training (pages near the seeds)", self.tally.calls)
