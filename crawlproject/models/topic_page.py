"""A topic learnt from example pages: a score of relevance, with a
threshold and a precision estimated on pages like those the crawl will meet
(``scrapy train --examples``).

The user gives a few relevant pages (P), perhaps a few irrelevant ones (N),
and the command fetches pages near the seeds (U, unlabelled: some relevant,
most not — what a crawl from those seeds meets). Two-step
positive-unlabelled learning (Liu et al. 2003): the pages of U surely
unlike the examples — less similar to their centroid than any example is
to the others' — are the reliable negatives (all of U when none is); a
logistic regression tells P from N and them (the classes weigh alike).
Each page's score comes from a model trained without it (cross-fitting),
and the model kept is the average of those fold models, so its scores are
on the same scale.

Calibration: the examples were drawn apart from the pages near the seeds
(a case-control sample), so Pr(relevant | x) among those pages is
h = π·f_P(x)/f_U(x): π the share of relevant pages among them, f_P and f_U
the densities of the held-out examples' and the pages' scores. π is the
mixture proportion estimate of Scott (2015): no more pages near the seeds
score above a threshold than π times the examples that do — the least
ratio over the thresholds that half or more of the held-out examples pass
(fewer examples make a noisy ratio), and never below one page in all. h is
a logistic of the score, fitted by maximum likelihood to telling the
examples from the pages given π (the scores turned round where the
held-out examples score below the pages: a model that learnt the
examples' site). A page is called relevant at 0.5, and the report states
the expected share of relevant pages, and as precision the mean
probability of the pages near the seeds it calls relevant — an estimate on
crawl-like pages, not a cross-validation against easy negatives.
Elkan & Noto's (2008) c = mean Pr(labelled | example), used before, made π from how well the
model generalises to held-out examples: from 10 examples it estimated 64 %
relevant among pages of which 1 % were (docsweb, WebKB).
Without pages near the seeds, the irrelevant examples stand for them and
π is the examples' own balance.

Features: the crawl's terms (crawlproject.web.text, stemmed as configured)
hashed, sublinear TF-IDF with the IDF of all the training pages, rows
L2-normalised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import expit
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

from crawlproject.models.intervals import spanning, stated_interval, wilson
from crawlproject.models.modelfile import load_model, save_model
from crawlproject.web.text import TermAnalyzer

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from scipy.sparse import csr_matrix

FORMAT = "topic-page"
TRAINER = "scrapy train --examples URLS -o MODEL.npz"
HASH_FEATURES = 2**18
#: The logistic regression's inverse regularisation (scikit-learn's default).
C = 1.0


def _vectorizer(stem: bool) -> HashingVectorizer:
    analyzer = TermAnalyzer(stem=stem)
    return HashingVectorizer(
        analyzer=analyzer.terms, n_features=HASH_FEATURES, alternate_sign=False, norm=None, dtype=np.float32
    )


@dataclass
class Expectations:
    """What the model expects of its calls on the unlabelled (crawl-like) pages."""

    relevant_share: float  # the expected share of relevant pages among them
    precision: float
    recall: float
    called: float  # share of them it calls relevant
    precision_low: float = 0.0  # the interval of the precision (crawlproject.judges.base.stated_interval)
    precision_high: float = 1.0

    def as_dict(self) -> dict[str, Any]:
        return {k: round(v, 4) for k, v in self.__dict__.items()}


def reliable_negatives(relevant: csr_matrix, unlabelled: csr_matrix) -> np.ndarray:
    """The rows of *unlabelled* surely unlike the examples (Liu et al.
    2003's first step, by Rocchio): less similar to the examples' centroid
    than every example is to the centroid of the others."""
    count = relevant.shape[0]
    if count < 2 or unlabelled.shape[0] == 0:
        return np.zeros(0, dtype=int)
    total = np.asarray(relevant.sum(axis=0)).ravel()
    own = np.array([float((relevant[i] @ ((total - relevant[i].toarray().ravel()) / (count - 1)))[0])
                    for i in range(count)])
    similarity = unlabelled @ (total / count)
    return np.flatnonzero(similarity < own.min())


#: the least slope of Pr(relevant | score), oriented, on the scores' own scale: flat, but in order
MIN_SLOPE = 1e-3
#: π is estimated at thresholds that at least this share of the held-out examples pass
PASSING = 0.5


def mixture_proportion(positive: np.ndarray, unlabelled: np.ndarray) -> float:
    """π, the share of relevant pages among the *unlabelled* (Scott 2015's
    estimator): at each threshold t that ≥ PASSING of the examples' held-out
    scores reach, π ≤ share of pages ≥ t / share of examples ≥ t; the least
    of those bounds, at least one page in all."""
    if not len(positive) or not len(unlabelled):
        return 0.5
    ranked = np.sort(np.asarray(positive, dtype=float))[::-1]
    unlabelled = np.asarray(unlabelled, dtype=float)
    first = max(1, int(np.ceil(PASSING * len(ranked))))
    bounds = [float((unlabelled >= ranked[k - 1]).mean()) * len(ranked) / k for k in range(first, len(ranked) + 1)]
    return float(np.clip(min(bounds), 1.0 / len(unlabelled), 1.0))


def examples_precision(examples: np.ndarray, scores: np.ndarray, threshold: float) -> tuple[float, float, float] | None:
    """The precision of calling relevant the crawl's pages whose model
    probability (*scores*) is ≥ *threshold*, told by the held-out *examples*
    rather than by the probabilities (positive-unlabelled): π·N pages are
    relevant (π by :func:`mixture_proportion`), the share of them above the
    threshold is the share of the examples that are (their recall there,
    with Wilson's interval over so few), and the precision is that many over
    the pages called. (value, low, high); None when it calls none. How a crawl states its
    judge's precision (crawlproject.judges.classifier), and ``train`` its own.

    >>> [round(x, 2) for x in examples_precision(np.array([0.9, 0.8, 0.7, 0.2]), np.array([0.9] * 30 + [0.1] * 70), 0.5)]
    [0.75, 0.3, 0.95]
    """  # noqa: E501 (a doctest's output line)
    calls = int((scores >= threshold).sum())
    if not calls or not len(examples):
        return None
    relevant = mixture_proportion(examples, scores) * len(scores)
    passing = int((examples >= threshold).sum())
    low, high = wilson(passing, len(examples))
    return tuple(min(1.0, relevant * share / calls) for share in (passing / len(examples), low, high))  # type: ignore[return-value]


def examples_rank_higher(positive: np.ndarray, unlabelled: np.ndarray) -> bool:
    """Whether the held-out examples tend to score above the pages
    (Pr(an example's score > a page's) ≥ ½: the AUC of the two)."""
    if not len(positive) or not len(unlabelled):
        return True
    truth = np.r_[np.ones(len(positive)), np.zeros(len(unlabelled))]
    return bool(roc_auc_score(truth, np.r_[positive, unlabelled]) >= 0.5)


def fit_mixture(positive: np.ndarray, unlabelled: np.ndarray, prior: float) -> tuple[float, float]:
    """(slope, offset) of h(s) = σ(slope·s + offset), Pr(relevant | s) among
    the *unlabelled*, by maximum likelihood of telling the examples from
    them: Pr(example | s) = r/(1 + r) with r = f_P(s)/f_U(s) = h(s)/π, the
    two samples weighing alike. h saturates at 1 where only relevant pages
    score, as the odds of a plain logistic fit cannot."""
    from scipy.optimize import minimize

    scale = float(np.std(np.r_[positive, unlabelled])) or 1.0
    log_prior = np.log(prior)

    def loss(params: np.ndarray) -> float:
        slope, offset = params
        log_ratio_p = -np.logaddexp(0.0, -(slope * positive / scale + offset)) - log_prior  # log h/π
        log_ratio_u = -np.logaddexp(0.0, -(slope * unlabelled / scale + offset)) - log_prior
        examples = np.mean(log_ratio_p - np.logaddexp(0.0, log_ratio_p))  # log r/(1+r)
        pages = np.mean(-np.logaddexp(0.0, log_ratio_u))  # log 1/(1+r)
        return float(-(examples + pages) + 1e-4 * slope**2)

    start = np.array([1.0, float(np.log(prior / (1 - prior))) if prior < 1 else 0.0])
    # oriented (see calibrate): a higher score never less likely relevant
    found = minimize(loss, start, method="L-BFGS-B", bounds=[(MIN_SLOPE, None), (None, None)])
    return float(found.x[0] / scale), float(found.x[1])


class TopicPageModel:
    """Pr(relevant | page text), from examples and unlabelled pages."""

    def __init__(self, stem: bool = True):
        self.stem = stem
        self.vectorizer = _vectorizer(stem)
        self.tfidf = TfidfTransformer(sublinear_tf=True)
        self.classifier = LogisticRegression(C=C, max_iter=1000)
        self.slope, self.offset = 1.0, 0.0  # Pr(relevant | score) = σ(slope·score + offset), by calibrate()
        self.prior = 0.5  # π: the share of relevant pages among the pages near the seeds
        #: "logistic": Pr(relevant | score) = σ(slope·score + offset); "elkan-noto": models saved before
        self.calibration = "logistic"
        self.c = 1.0
        self.report: dict[str, Any] = {}
        #: Pr(relevant) of each page near the seeds, from a model trained without it (fit(): not saved)
        self.unlabelled_probabilities = np.zeros(0)
        #: Pr(relevant) of each relevant example, from a model trained without it: where a
        #: relevant page scores, for a crawl to estimate its own share of them (crawlproject.judges.calibration)
        self.example_probabilities = np.zeros(0)

    # -- training ---------------------------------------------------------------------

    def fit(
        self, relevant: Sequence[str], irrelevant: Sequence[str] = (), unlabelled: Sequence[str] = (), seed: int = 1
    ) -> TopicPageModel:
        """Learn from page texts; needs relevant pages and at least one
        irrelevant or unlabelled page."""
        if not relevant or not (irrelevant or unlabelled):
            raise ValueError("a topic model needs relevant examples and irrelevant or unlabelled pages")
        texts = [*relevant, *irrelevant, *unlabelled]
        counts = self.vectorizer.transform(texts)
        self.tfidf.fit(counts)
        features = self.tfidf.transform(counts)
        start = len(relevant) + len(irrelevant)
        negatives = reliable_negatives(features[: len(relevant)], features[start:]) + start
        if not len(negatives):  # no page near the seeds is surely unlike the examples: all of them
            negatives = np.arange(start, len(texts))
        rows = np.r_[np.arange(start), negatives]
        labelled = np.zeros(len(rows), dtype=bool)
        labelled[: len(relevant)] = True
        folds = int(min(5, len(relevant), (~labelled).sum()))
        models = []
        scores = np.full(len(texts), np.nan)
        if folds >= 2:
            for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(rows, labelled):
                model = LogisticRegression(C=C, max_iter=1000, class_weight="balanced")
                model.fit(features[rows[train]], labelled[train])
                scores[rows[test]] = model.decision_function(features[rows[test]])
                models.append(model)
        else:
            models = [LogisticRegression(C=C, max_iter=1000, class_weight="balanced").fit(features[rows], labelled)]
        self.classifier = models[0]
        self.classifier.coef_ = np.mean([m.coef_ for m in models], axis=0)
        self.classifier.intercept_ = np.mean([m.intercept_ for m in models], axis=0)
        unscored = np.isnan(scores)  # pages no fold model trained on (or no folds): the kept model's scores
        if unscored.any():
            scores[unscored] = self.classifier.decision_function(features[np.flatnonzero(unscored)])
        positive, rest = scores[: len(relevant)], scores[start:]
        self.calibrate(positive, rest if len(rest) else scores[len(relevant):], examples_only=not len(rest))
        self.example_probabilities = self._probability(positive)
        self.report = {
            "relevant": len(relevant), "irrelevant": len(irrelevant), "unlabelled": len(unlabelled), "folds": folds,
            "reliable_negatives": len(negatives) if len(unlabelled) else 0,
            "on_unlabelled": self.expectations(rest).as_dict() if len(unlabelled) else None,
            "irrelevant_called": round(float((self._probability(scores[len(relevant): start]) >= 0.5).mean()), 4)
            if irrelevant else None,
            "relevant_called": round(float((self.example_probabilities >= 0.5).mean()), 4),
        }
        return self

    def calibrate(self, positive: np.ndarray, unlabelled: np.ndarray, examples_only: bool = False) -> None:
        """Pr(relevant | score) = σ(slope·score + offset) among the pages near
        the seeds, fitted to the held-out examples' scores (*positive*) and
        theirs (*unlabelled*: or the irrelevant examples, *examples_only*),
        given π (see the module's docstring)."""
        if examples_only:
            self.prior = len(positive) / (len(positive) + len(unlabelled))
            x = np.r_[positive, unlabelled].reshape(-1, 1)
            y = np.r_[np.ones(len(positive)), np.zeros(len(unlabelled))]
            platt = LogisticRegression(C=1.0, max_iter=1000).fit(x, y)
            self.slope, self.offset = float(platt.coef_[0, 0]), float(platt.intercept_[0])
        else:
            # The examples may score *below* the pages near the seeds (a model that learnt the
            # examples' site, not their topic): then a lower score is the more example-like,
            # and π and the fit read the scores turned round.
            sign = 1.0 if examples_rank_higher(positive, unlabelled) else -1.0
            positive, unlabelled = sign * np.asarray(positive, float), sign * np.asarray(unlabelled, float)
            self.prior = mixture_proportion(positive, unlabelled)
            slope, self.offset = fit_mixture(positive, unlabelled, self.prior)
            self.slope = sign * slope
        self.calibration = "logistic"

    def _probability(self, scores: np.ndarray) -> np.ndarray:
        z = self.slope * np.asarray(scores, dtype=float) + self.offset
        if self.calibration == "logistic":
            return np.asarray(expit(z))
        return np.asarray(np.clip(expit(z) / self.c, 0.0, 1.0))  # saved before: Elkan & Noto's Pr(labelled | s) / c

    def expectations(self, unlabelled: np.ndarray) -> Expectations:
        """What the model expects of its calls (probability ≥ 0.5) on the
        unlabelled pages: their share of the expected relevant pages is its
        recall; its precision is told by the held-out examples
        (:func:`examples_precision`), with an interval spanning that and
        the probabilities' own (their mean over the calls stated 93 % where
        the labels measured 52 %), widened by ``PRECISION_MARGIN``."""
        probability = self._probability(unlabelled)
        self.unlabelled_probabilities = probability
        called = probability >= 0.5
        expected = float(probability.sum())
        told = examples_precision(self.example_probabilities, probability, 0.5)
        value, low, high = 0.0, 0.0, 1.0
        chosen = probability[called]
        if told is not None:  # the interval spans the probabilities' own estimate too
            value, *told_interval = told
            low, high = spanning([(told_interval[0], told_interval[1]), stated_interval(
                float(chosen.sum()), float((chosen * (1 - chosen)).sum()), len(chosen), 0.0)])
        return Expectations(
            relevant_share=expected / max(len(probability), 1),
            precision=value,
            recall=float(probability[called].sum() / expected) if expected else 0.0,
            called=float(called.mean()) if len(called) else 0.0,
            precision_low=low, precision_high=high,
        )

    # -- use --------------------------------------------------------------------------

    def features(self, texts: Sequence[str]) -> csr_matrix:
        return self.tfidf.transform(self.vectorizer.transform(texts))

    def relevance(self, texts: Sequence[str]) -> np.ndarray:
        """Pr(relevant | page) of each text: called relevant at 0.5."""
        return self.relevance_of_counts(self.vectorizer.transform(texts))

    def relevance_of_counts(self, counts: csr_matrix) -> np.ndarray:
        """:meth:`relevance` of pages whose hashed term counts are known
        (the vectorizer is the same for every model of one stemming)."""
        return self._probability(self.classifier.decision_function(self.tfidf.transform(counts)))

    def precision(self) -> float | None:
        """The precision the model expects of its calls on crawl-like pages."""
        found = (self.report.get("on_unlabelled") or {}).get("precision")
        return float(found) if found is not None else None

    # -- file ---------------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        meta = {"stem": self.stem, "slope": self.slope, "offset": self.offset, "prior": self.prior,
                "calibration": self.calibration, "c": self.c, "report": self.report,
                "example_probabilities": [float(p) for p in self.example_probabilities]}
        save_model(path, FORMAT, meta, {
            "idf": self.tfidf.idf_, "coef": self.classifier.coef_, "intercept": self.classifier.intercept_,
            "classes": self.classifier.classes_,
        })

    @classmethod
    def load(cls, path: str | Path) -> TopicPageModel:
        meta, arrays = load_model(path, FORMAT, TRAINER)
        model = cls(stem=bool(meta["stem"]))
        model.slope, model.offset, model.c = float(meta["slope"]), float(meta["offset"]), float(meta.get("c", 1.0))
        model.prior = float(meta.get("prior", 0.5))
        model.calibration = str(meta.get("calibration", "elkan-noto"))  # a model saved before: as it was trained
        model.report = meta.get("report") or {}
        model.example_probabilities = np.asarray(meta.get("example_probabilities") or [], dtype=float)
        model.tfidf.idf_ = arrays["idf"]
        model.classifier.coef_ = arrays["coef"]
        model.classifier.intercept_ = arrays["intercept"]
        model.classifier.classes_ = arrays["classes"]
        model.classifier.n_features_in_ = arrays["coef"].shape[1]
        return model



def _precision(estimate: dict[str, Any]) -> str:
    """A stated precision with its interval ("unknown" when it calls nothing)."""
    if not estimate.get("called"):
        return "unknown (it calls none of them relevant)"
    low, high = estimate.get("precision_low"), estimate.get("precision_high")
    interval = f" ({low:.0%}–{high:.0%})" if low is not None and high is not None else ""
    return f"{estimate['precision']:.0%}{interval}"


#: Held out, the model should call at most this share of the irrelevant
#: examples relevant, and at least this share of the relevant ones.
MOST_IRRELEVANT_CALLED, LEAST_RELEVANT_CALLED = 0.2, 0.8


def example_warnings(report: dict[str, Any]) -> list[str]:
    """One line each when the model, held out, calls too many of the user's
    irrelevant examples relevant or too few of the relevant ones, and what
    to add. (The examples themselves are the user's word in every crawl.)

    >>> example_warnings({"irrelevant_called": 0.8, "irrelevant": 9, "relevant_called": 0.9})[0][:60]
    'WARNING: held out, it calls 80% of your irrelevant examples '
    """
    lines = []
    wrong = report.get("irrelevant_called")
    if wrong is not None and wrong > MOST_IRRELEVANT_CALLED:
        lines.append(f"WARNING: held out, it calls {wrong:.0%} of your irrelevant examples relevant: it cannot tell "
                     "them from the topic yet. Add irrelevant examples (--negatives) from the sites you will crawl — "
                     f"pages a crawl meets that are not the topic, {max(10, report.get('irrelevant', 0))} or more — "
                     "and relevant ones from every site the topic is on.")
    found = report.get("relevant_called")
    if found is not None and found < LEAST_RELEVANT_CALLED:
        lines.append(f"WARNING: held out, it calls only {found:.0%} of your relevant examples relevant: add relevant "
                     "examples (--examples), as varied as the topic is — 20 or more from each site it is on.")
    return lines


def format_report(report: dict[str, Any]) -> str:
    """What ``scrapy train --examples`` prints: what the model expects of
    itself on pages like the crawl's (the pages near the seeds)."""
    lines = [f"Trained on {report['relevant']} relevant and {report['irrelevant']} irrelevant examples and "
             f"{report['unlabelled']} pages near the seeds ({report.get('reliable_negatives', 0)} of them surely "
             "unlike the examples: negatives)."]
    estimate = report.get("on_unlabelled")
    if estimate:
        lines.append(
            f"On the pages near the seeds — what a crawl from them meets — it expects about "
            f"{estimate['relevant_share']:.0%} to be relevant and calls {estimate['called']:.0%} relevant: "
            f"estimated precision {_precision(estimate)}, recall {estimate['recall']:.0%} "
            "(positive-unlabelled estimates; label pages on the dashboard to measure them)."
        )
        lines.append("A crawl meets another share of relevant pages than the pages near its seeds: it re-estimates "
                     "the share on its own pages and calls them by it (its summary states its own precision).")
    else:
        lines.append("WARNING: no page near the seeds: the model's precision on a crawl's pages cannot be estimated")
    if report.get("irrelevant_called") is not None:
        lines.append(f"Irrelevant examples it would call relevant: {report['irrelevant_called']:.0%}.")
    lines += example_warnings(report)
    if report["relevant"] < 10 or (report["irrelevant"] + report["unlabelled"]) < 10:
        lines.append("WARNING: too few pages to trust "
                     "(give at least 10 relevant examples and fetch pages near the seeds)")
    return "\n".join(lines)
