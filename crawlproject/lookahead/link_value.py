"""A learned link value (Rennie & McCallum 1999; Chakrabarti et al. 2002's
"apprentice"): the discounted number of target pages a link leads to,
Q(link) = Σ_t γ^d(t) over the targets t reachable through it
(:func:`crawlproject.lookahead.graph.discounted_targets`), predicted from
the link's own features:

* ``a:`` the anchor's terms, ``c:`` the terms of its context window,
* ``u:`` the tokens of its URL (host and path words),
* ``p:`` the class of the page it sits on (target-like or not, by a page
  classifier trained on the same graph).

As Rennie & McCallum, the values are cut into bins (no value, then the
positive values' terciles) and a naive Bayes classifier learns the bin from
the features; the predicted value is Σ_bin Pr(bin | link) · mean(bin).
Features are hashed, so a term first met while crawling counts too.

Online (:meth:`LinkValueModel.learn`): once the page a link led to is
fetched, its own reward (the page classifier's verdict) plus γ times the
best predicted value of its links is a new example of that link's value —
temporal-difference learning of Q from the crawl's own fetches.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.naive_bayes import MultinomialNB

from crawlproject.lookahead.graph import discounted_targets
from crawlproject.modelfile import load_model, nb_arrays, nb_from_arrays, save_model
from crawlproject.text import TermAnalyzer

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from crawlproject.lookahead.training import TrainingGraph

FORMAT = "crawlproject/link-value/1"
TRAINER = "scrapy train --kind link-value"
N_FEATURES = 2**18
_URL_WORD = re.compile(r"[a-z]+|\d+")
_ANALYZER = TermAnalyzer(stem=True)


def link_tokens(anchor: str, context: str, url: str, parent_good: bool) -> list[str]:
    """The features of one link.

    >>> link_tokens("CS 414 homework", "due Friday", "http://www.cs.cornell.edu/cs414/hw.html", True)
    ['a:c', 'a:414', 'a:homework', 'c:fridai', 'u:www', 'u:cs', 'u:cornell', 'u:edu', 'u:cs', 'u:414', 'u:hw', 'u:html', 'p:good']
    """
    parts = urlsplit(url.lower())
    url_words = _URL_WORD.findall(parts.netloc) + _URL_WORD.findall(parts.path + " " + parts.query)
    return (
        [f"a:{t}" for t in _ANALYZER.terms(anchor)]
        + [f"c:{t}" for t in _ANALYZER.terms(context)]
        + [f"u:{w}" for w in url_words]
        + ["p:good" if parent_good else "p:other"]
    )


def _identity(tokens: list[str]) -> list[str]:
    return tokens


def _hasher() -> HashingVectorizer:
    return HashingVectorizer(analyzer=_identity, n_features=N_FEATURES, alternate_sign=False, norm=None)


def value_bins(values: Sequence[float], positive_bins: int = 3) -> np.ndarray:
    """Upper edges of the bins: 0 (no value), then the positive values'
    quantiles (terciles by default).

    >>> value_bins([0, 0, 1, 2, 3, 4, 5, 6])
    array([0., 2., 4., 6.])
    """
    positive = np.sort(np.asarray([v for v in values if v > 0], dtype=float))
    if positive.size == 0:
        return np.array([0.0])
    quantiles = np.quantile(positive, [(i + 1) / positive_bins for i in range(positive_bins)], method="inverted_cdf")
    return np.concatenate(([0.0], np.unique(quantiles)))


class LinkValueModel:
    def __init__(self, gamma: float = 0.5, horizon: int = 6, window: int = 10, alpha: float = 1.0):
        if not 0 <= gamma < 1:
            raise ValueError(f"gamma must be in [0, 1), got {gamma}")
        self.gamma, self.horizon, self.window, self.alpha = gamma, horizon, window, alpha
        self.hasher = _hasher()
        self.pages = MultinomialNB(alpha=alpha)  # target-like (1) or not (0)
        self.links = MultinomialNB(alpha=alpha)  # the value bin of a link
        self.edges = np.array([0.0])
        self.bin_values = np.array([0.0])
        self.report: dict[str, Any] = {}
        self.learned = 0

    # -- offline ---------------------------------------------------------------

    def fit(self, graph: TrainingGraph) -> LinkValueModel:
        pages = [url for url in graph.text if graph.text[url].strip()]
        if not any(url in graph.targets for url in pages):
            raise ValueError("the training graph has no target page with text: no value to learn")
        page_features = self.hasher.transform(_ANALYZER.terms(graph.text[u]) for u in pages)
        page_classes = np.array([int(u in graph.targets) for u in pages])
        self.pages.fit(page_features, page_classes)
        good = dict(zip(pages, self.pages.predict(page_features).astype(bool), strict=True))
        value = discounted_targets(graph.targets, graph.inlinks(), self.gamma, self.horizon)
        tokens, values = [], []
        for url in pages:
            for link in graph.links.get(url, ()):
                if link.target == url:
                    continue
                tokens.append(link_tokens(link.anchor, link.context, link.target, good[url]))
                values.append(value.get(link.target, 0.0))
        if not tokens:
            raise ValueError("the training graph has no links: no value to learn")
        self.edges = value_bins(values)
        bins = self.bin_of(np.asarray(values))
        self.bin_values = np.array([np.asarray(values)[bins == b].mean() for b in range(len(self.edges))])
        self.links.fit(self.hasher.transform(tokens), bins)
        self._fill_missing_bins()
        self.report = {
            "links": len(tokens), "targets": len(graph.targets), "pages": len(pages),
            "bin_edges": self.edges.tolist(), "bin_values": self.bin_values.tolist(),
            "links_per_bin": np.bincount(bins, minlength=len(self.edges)).tolist(),
        }
        return self

    def _fill_missing_bins(self) -> None:
        """A bin no training link fell in is still a class, so online
        learning can add to it."""
        classes = np.arange(len(self.edges))
        if len(self.links.classes_) == len(classes):
            return
        count = np.zeros((len(classes), N_FEATURES))
        class_count = np.zeros(len(classes))
        count[self.links.classes_] = self.links.feature_count_
        class_count[self.links.classes_] = self.links.class_count_
        self.links.classes_, self.links.feature_count_, self.links.class_count_ = classes, count, class_count
        self.links.feature_log_prob_ = np.zeros_like(count)
        self._refresh(range(len(classes)))

    def bin_of(self, values: np.ndarray) -> np.ndarray:
        """The bin of each value: 0 for none, else the first edge ≥ it."""
        bins: np.ndarray = np.minimum(np.searchsorted(self.edges, values, side="left"), len(self.edges) - 1)
        return bins

    # -- crawling --------------------------------------------------------------

    def page_probability(self, text: str) -> float:
        """Pr(target | page) by the page classifier."""
        row = self.pages.predict_proba(self.hasher.transform([_ANALYZER.terms(text)]))[0]
        return float(row[list(self.pages.classes_).index(1)]) if 1 in self.pages.classes_ else 0.0

    def predict(self, tokens: Sequence[list[str]]) -> np.ndarray:
        """Expected value of each link: Σ_bin Pr(bin | link) · mean(bin)."""
        if not tokens:
            return np.zeros(0)
        posterior = self.links.predict_proba(self.hasher.transform(tokens))
        values: np.ndarray = posterior @ self.bin_values[self.links.classes_]
        return values

    def learn(self, tokens: list[str], value: float) -> None:
        """One more example: this link is worth *value* (the TD target: the
        reward of its page + γ · the best predicted value of its links). It
        counts in the bin *value* falls in; the bins' values stay those of
        the training graph."""
        b = int(self.bin_of(np.array([value]))[0])
        row = self.hasher.transform([tokens])
        self.links.feature_count_[b, row.indices] += row.data
        self.links.class_count_[b] += 1
        self._refresh([b])
        self.learned += 1

    def _refresh(self, rows: Any) -> None:
        nb = self.links
        for b in rows:
            smoothed = nb.feature_count_[b] + self.alpha
            nb.feature_log_prob_[b] = np.log(smoothed) - np.log(smoothed.sum())
        nb.class_log_prior_ = np.log(nb.class_count_ + 1e-12) - np.log(nb.class_count_.sum())

    # -- files -----------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        meta = {
            "gamma": self.gamma, "horizon": self.horizon, "window": self.window, "alpha": self.alpha,
            "report": self.report,
        }
        arrays = {**nb_arrays("pages", self.pages), **nb_arrays("links", self.links),
                  "edges": self.edges, "bin_values": self.bin_values}
        save_model(path, FORMAT, meta, arrays)

    @classmethod
    def load(cls, path: str | Path) -> LinkValueModel:
        meta, arrays = load_model(path, FORMAT, TRAINER)
        model = cls(meta["gamma"], meta["horizon"], meta["window"], meta["alpha"])
        model.pages = nb_from_arrays("pages", arrays, model.alpha)
        model.links = nb_from_arrays("links", arrays, model.alpha)
        model.edges, model.bin_values = arrays["edges"], arrays["bin_values"].astype(float)
        model.report = meta["report"]
        return model
