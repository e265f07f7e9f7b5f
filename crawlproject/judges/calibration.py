"""What a judge's relevance means on the crawl's own pages: two calibrations.

* :class:`CrawlCalibration` — a query judge's cosine is no probability:
  a mixture fitted on the crawl's scores (below).
* :class:`PriorShift` — a model's probability is one under the share of
  relevant pages it was trained where (the pages near the seeds, the
  labels): re-estimated on the crawl's pages (further below).

Both answer the same four questions (:class:`Calibration`): take a score
(``observe``), fit on the whole crawl at its end (``settle``), the
probability of a score, and the relevance from which the judge calls a
page relevant (``threshold``).

The mixture on a query judge's scores:

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
an offline run over the crawls' histories. A better query judge is still to
be found.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
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


class Calibration(ABC):
    """Pr(relevant | a judge's score) where the crawl is."""

    #: fitted for the last time, on the whole crawl
    settled = False
    #: whether its probabilities are sound enough to state a precision from
    #: (a model's, moved to the crawl's prior) or not (a mixture on cosines:
    #: it stated 91 % where the labels measured 36 %)
    states_precision = True

    @abstractmethod
    def observe(self, score: float) -> None:
        """A fetched page's score (refits as the crawl goes)."""

    @abstractmethod
    def settle(self, scores: Iterable[float]) -> None:
        """The crawl is over: fit on *scores*, every page it met, and no more."""

    @abstractmethod
    def probability(self, score: float) -> float | None:
        """Pr(relevant | *score*); None while the calibration knows nothing."""

    @abstractmethod
    def threshold(self) -> float | None:
        """The score from which a page is called relevant now (probability
        ≥ 0.5). None when it calls no score it has seen relevant."""


class CrawlCalibration(Calibration):
    """Pr(relevant | score) from the scores of the pages the crawl fetched."""

    states_precision = False

    def __init__(self) -> None:
        self.scores: deque[float] = deque(maxlen=KEPT)
        self._since_fit = 0
        #: (weights, means, standard deviations) of the mixture on log scores; the top last
        self.mixture: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

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


    def threshold(self) -> float | None:
        """Where the probability crosses 0.5 between the least and the
        greatest score seen (bisection on the log scores); 0.5 before the
        first fit, when the judge calls at its fixed threshold."""
        if self.mixture is None or not self.scores:
            return 0.5
        low, high = min(self.scores), max(self.scores)
        if (self.probability(math.exp(high)) or 0.0) < 0.5:
            return None
        if (self.probability(math.exp(low)) or 0.0) >= 0.5:
            return math.exp(low)
        for _ in range(60):
            middle = (low + high) / 2
            low, high = (low, middle) if (self.probability(math.exp(middle)) or 0.0) >= 0.5 else (middle, high)
        return math.exp(high)


def _posterior(x: float, weights: np.ndarray, means: np.ndarray, deviations: np.ndarray) -> float:
    densities = weights * np.exp(-0.5 * ((x - means) / deviations) ** 2) / deviations
    total = float(densities.sum())
    return float(densities[-1] / total) if total > 0 else float(x >= means[-1])


#: the prior shift is estimated once this many fetched pages have a probability
PRIOR_MIN_PAGES = 30
#: and again after every this many more
PRIOR_REFIT_EVERY = 25
#: a probability is kept off 0 and 1 by this much (a model's 1.0 would never move)
EDGE = 1e-6
#: EM stops when the prior moves less than this, or after so many rounds
TOLERANCE, ROUNDS = 1e-6, 500


class FittedOnTheCrawl(Calibration):
    """A model's probabilities (its relevances) fitted again on the crawl's
    pages: every ``PRIOR_REFIT_EVERY`` pages once ``PRIOR_MIN_PAGES`` have
    one (before that: the model's own), and once more on every page met
    when the crawl ends."""

    def __init__(self) -> None:
        self.scores: list[float] = []
        self.fitted = False
        self._since_fit = 0
        self.settled = False

    def observe(self, score: float) -> None:
        if self.settled:
            return
        self.scores.append(score)
        self._since_fit += 1
        if len(self.scores) >= PRIOR_MIN_PAGES and (not self.fitted or self._since_fit >= PRIOR_REFIT_EVERY):
            self._fit()

    def settle(self, scores: Iterable[float]) -> None:
        self.scores = list(scores)
        if self.scores:
            self._fit()
        self.settled = True

    def _fit(self) -> None:
        self._since_fit = 0
        self.fit(np.asarray(self.scores, dtype=float))
        self.fitted = True

    @abstractmethod
    def fit(self, scores: np.ndarray) -> None:
        """Fit on the probabilities the model gave the crawl's pages."""


class PriorShift(FittedOnTheCrawl):
    """A model's probabilities moved to the share of relevant pages where the
    crawl is (Saerens, Latinne & Decaestecker 2002).

    A model that says Pr(relevant | page) = p learnt it where a share
    *trained* of the pages was relevant (a topic from examples: the pages
    near the seeds, ~2 % relevant; a judge taught by labels: its balanced
    classes). A focused crawl meets a different share — 64 % on one topic,
    where p under 2 % called 9 % of the relevant pages relevant. If only
    the share differs (what a page of each kind looks like does not), the
    probability where the share is π is

        p' = (π/π₀)·p / ((π/π₀)·p + ((1 − π)/(1 − π₀))·(1 − p))

    and π is found by EM on the crawl's own pages: π ← mean of p' over them,
    until it holds still.

    >>> shift = PriorShift(trained=0.02)
    >>> shift.settle([0.3] * 60 + [0.001] * 40)
    >>> round(shift.prior, 2), round(shift.probability(0.3), 2), round(shift.probability(0.001), 3)
    (0.61, 0.97, 0.072)
    """

    def __init__(self, trained: float, examples: np.ndarray | None = None, states_precision: bool = True):
        super().__init__()
        self.states_precision = states_precision
        self.trained = float(np.clip(trained, EDGE, 1 - EDGE))
        #: the held-out examples' probabilities, when the model kept them: π is then
        #: Scott's mixture proportion of the crawl's pages (:func:`scott_prior`), not EM's
        self.examples = examples
        self.prior: float | None = None  #: π where the crawl is, once estimated

    def fit(self, scores: np.ndarray) -> None:
        if self.examples is not None and len(self.examples):
            self.prior = scott_prior(self.examples, scores)
        else:
            self.prior = estimate_prior(scores, self.trained)

    def probability(self, score: float) -> float:
        """The model's probability *score*, moved to the crawl's prior (the
        model's own before the first estimate)."""
        return score if self.prior is None else shift_probability(score, self.trained, self.prior)

    def threshold(self) -> float:
        """The model's probability that the crawl's prior moves to 0.5."""
        if self.prior is None:
            return 0.5
        odds = (self.prior / self.trained) / ((1 - self.prior) / (1 - self.trained))
        return 1.0 / (1.0 + odds)


def shift_probability(probability: float, trained: float, prior: float) -> float:
    """*probability*, learnt where a share *trained* was relevant, where the share is *prior*.

    >>> round(shift_probability(0.5, 0.5, 0.9), 2), shift_probability(0.2, 0.3, 0.3)
    (0.9, 0.2)
    """
    p = min(max(probability, EDGE), 1 - EDGE)
    relevant = prior / trained * p
    irrelevant = (1 - prior) / (1 - trained) * (1 - p)
    return relevant / (relevant + irrelevant)


def estimate_prior(probabilities: np.ndarray, trained: float) -> float:
    """The share of relevant pages among those of these *probabilities*
    (each learnt where the share was *trained*), by Saerens et al.'s EM."""
    p = np.clip(probabilities, EDGE, 1 - EDGE)
    prior = trained
    for _ in range(ROUNDS):
        relevant = prior / trained * p
        shifted = relevant / (relevant + (1 - prior) / (1 - trained) * (1 - p))
        new = float(np.clip(shifted.mean(), EDGE, 1 - EDGE))
        if abs(new - prior) < TOLERANCE:
            return new
        prior = new
    return prior


def scott_prior(examples: np.ndarray, pages: np.ndarray) -> float:
    """The share of relevant pages among *pages*, from where the held-out
    *examples* score among them (Scott 2015's mixture proportion estimate,
    as the model's training estimates it on the pages near the seeds)."""
    from crawlproject.models.topic_page import mixture_proportion

    return float(np.clip(mixture_proportion(examples, pages), EDGE, 1 - EDGE))


class CrawlRefit(FittedOnTheCrawl):
    """A model's calibration fitted anew on the crawl's own pages: π by
    Scott's estimate from the held-out examples' probabilities among the
    crawl's, and Pr(relevant | p) = σ(a·logit p + b) fitted to telling the
    examples from the crawl's pages given π (the model's training, with the
    crawl's pages in place of those near the seeds)."""

    def __init__(self, examples: np.ndarray):
        super().__init__()
        self.examples = _logit(np.asarray(examples, dtype=float))
        self.logistic: tuple[float, float] | None = None  #: (a, b), once fitted

    def fit(self, scores: np.ndarray) -> None:
        from crawlproject.models.topic_page import fit_mixture, mixture_proportion

        pages = _logit(scores)
        prior = float(np.clip(mixture_proportion(self.examples, pages), EDGE, 1 - EDGE))
        self.logistic = fit_mixture(self.examples, pages, prior)

    def threshold(self) -> float:
        """The model's probability the refitted calibration takes to 0.5."""
        if self.logistic is None:
            return 0.5
        # imported here: scipy.special costs a crawl that never refits 0.2 s to import
        from scipy.special import expit

        slope, offset = self.logistic
        return float(expit(-offset / slope))  # a flat fit (the least slope): 0 or 1, not an overflow

    def probability(self, score: float) -> float:
        if self.logistic is None:
            return score
        from scipy.special import expit

        slope, offset = self.logistic
        return float(expit(slope * float(_logit(np.array([score]))[0]) + offset))


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, EDGE, 1 - EDGE)
    return np.asarray(np.log(p / (1 - p)), dtype=float)

