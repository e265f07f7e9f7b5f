"""Calibrating a query judge on the crawl's own pages (issue 50 §2).

A query judge's relevance is a cosine: its scale depends on the query and
the web (on docsweb's gnuplot topic the relevant pages score 0.2–0.43, so a
fixed 0.5 called none of 109 relevant pages relevant). What the crawl does
know is the shape of its scores: most pages it meets hold few of the
query's terms, a few hold many. The scores above 0 of the pages fetched so
far, on a log scale, are fitted with a mixture of three Gaussians; the
posterior of the highest component is the probability that a page of that
score is relevant, and the judge calls relevant a page whose probability is
≥ 0.5. Refitted every ``REFIT_EVERY`` pages once ``MIN_PAGES`` have a score
above 0; before that the judge knows no probability and calls as before (its
fixed threshold). When the crawl ends it is fitted once more, on every page
met (:meth:`CrawlCalibration.settle`), and the crawl's files take its final
calls (crawlproject.corpus.collection): a crawl meets the pages near its
seeds first, often before the first fit.

Chosen on the WebKB and PHP-manual crawls of bench.quality (best-first,
Task 2, 300 fetches) against a fixed threshold, a two-component mixture
(raw and log scores) and Otsu's split, then measured once on docsweb's:
median precision / recall of the call 0.64 / 0.71 on the PHP manual, 0.26 /
0.40 on docsweb (the fixed threshold: 0 / 0 on both), and no better than
chance on WebKB, whose query judge ranks its pages little better than
chance (AUC 0.68) — each mixture fitted on all the pages its crawl met, in
an offline run over the crawls' histories. A better query judge is the
rest of issue 50.
"""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

import numpy as np

#: fitted once this many fetched pages scored above 0
MIN_PAGES = 30
#: and again after every this many more
REFIT_EVERY = 50
#: the scores fitted: the most recent this many
KEPT = 5000
COMPONENTS = 3


class CrawlCalibration:
    """Pr(relevant | score) from the scores of the pages the crawl fetched."""

    def __init__(self) -> None:
        self.scores: deque[float] = deque(maxlen=KEPT)
        self._since_fit = 0
        #: (weights, means, standard deviations) of the mixture on log scores; the top last
        self.mixture: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.settled = False  #: fitted for the last time, on the whole crawl

    def settle(self, scores: Iterable[float]) -> None:
        """The crawl is over: fit on *scores*, every page it met, and no more."""
        self.scores = deque((math.log(score) for score in scores if score > 0), maxlen=None)
        if len(self.scores) >= MIN_PAGES:
            self._fit()
        self.settled = True

    def observe(self, score: float) -> None:
        if score <= 0 or self.settled:
            return
        self.scores.append(math.log(score))
        self._since_fit += 1
        if len(self.scores) >= MIN_PAGES and (self.mixture is None or self._since_fit >= REFIT_EVERY):
            self._fit()

    def _fit(self) -> None:
        from sklearn.mixture import GaussianMixture

        self._since_fit = 0
        values = np.fromiter(self.scores, dtype=float).reshape(-1, 1)
        if len(np.unique(values)) < 2 * COMPONENTS:
            return  # too few distinct scores to tell kinds of page apart
        model = GaussianMixture(COMPONENTS, random_state=0, reg_covar=1e-4).fit(values)
        order = np.argsort(model.means_.ravel())
        self.mixture = (model.weights_[order], model.means_.ravel()[order], np.sqrt(model.covariances_.ravel()[order]))

    def probability(self, score: float) -> float | None:
        """The posterior of the top component at *score* (0 for a score of
        0; None before the first fit). Made monotone: past the top
        component's mean a higher score is never less likely relevant."""
        if self.mixture is None:
            return None
        if score <= 0:
            return 0.0
        weights, means, deviations = self.mixture
        x = math.log(score)
        return max(_posterior(x, weights, means, deviations), _posterior(min(x, means[-1]), weights, means, deviations))


def _posterior(x: float, weights: np.ndarray, means: np.ndarray, deviations: np.ndarray) -> float:
    densities = weights * np.exp(-0.5 * ((x - means) / deviations) ** 2) / deviations
    total = float(densities.sum())
    return float(densities[-1] / total) if total > 0 else float(x >= means[-1])
