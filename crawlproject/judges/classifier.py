"""Judges backed by a trained model: a taxonomy classifier with good
categories (SPEC §2's R(p)), and a topic learnt from example pages
(crawlproject.models.topic_page: calibrated, so it knows its precision)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from crawlproject.judges.base import PageJudge, PrecisionEstimate, wilson

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from crawlproject.models.taxonomy_classifier import TaxonomyClassifier
    from crawlproject.models.topic_page import TopicPageModel
    from crawlproject.web.page import Page


class ClassifierJudge(PageJudge):
    """R(p) = Σ_{c ∈ good} Pr(c | p) of a taxonomy classifier (SPEC §2)."""

    name: ClassVar[str] = "classifier"

    def __init__(self, model: TaxonomyClassifier, good: Sequence[str]):
        super().__init__()
        self.model = model
        self.good = np.array(model.good_nodes(good))

    def score(self, page: Page) -> float:
        return self.scores([page])[0]

    def scores(self, pages: Sequence[Page]) -> list[float]:
        probabilities = self.model.proba(self.model.features([page.text for page in pages]))
        found: list[float] = probabilities[:, self.good].sum(axis=1).tolist()
        return found

    def relevances(self, pages: Sequence[Page]) -> list[float]:
        found = self.scores(pages)
        for page, relevance in zip(pages, found, strict=True):
            self._count(page.key, relevance)
        return found


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


class VerdictJudge(PageJudge):
    """Verdicts another component has already reached (the focused
    crawler's batched classifications), seen through the port."""

    def __init__(self, name: str, relevance: Callable[[Page], float]):
        super().__init__()
        self.name = name  # type: ignore[misc]
        self._relevance = relevance

    def score(self, page: Page) -> float:
        return self._relevance(page)
