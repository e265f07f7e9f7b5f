"""The context graph's layer classifier (Diligenti et al. 2000; docs/methods.md §2).

Layer 0 holds the target examples, layer i the pages i links before them
(:func:`crawlproject.models.graph.layers`), up to L layers; every other
page of the training graph is "other". Features are the terms of highest
TF-IDF over the layers' pages (feature selection, as the paper); one naive
Bayes class per layer plus "other", with uniform priors (the classes compete
on what the page says, not on how many pages each has). A page is put in
the layer of highest posterior, or "other" when that posterior is below a
threshold. A page with none of the selected terms says nothing about its
layer: it is "other", with confidence 0 (with uniform priors the classes
would tie, and a tie must not rank a page of no known words first).

For a topic bound to its sites ("the course pages of this university";
``value_scope`` domain or host, as the link value's) the layers count only
the targets of a page's own site — a page's distance to them along links
inside its site — so the layers learnt from other universities say how far
a page is from its own site's targets. While crawling, a page away from
home (crawlproject.policy.scope.HomeSites: ``home``, FOCUS_HOME or the seeds') is
"other", whatever it says: its site holds none of the topic's targets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.naive_bayes import MultinomialNB

from crawlproject.models.graph import layers
from crawlproject.models.modelfile import load_model, nb_arrays, nb_from_arrays, save_model
from crawlproject.policy.scope import SCOPES
from crawlproject.web.text import TermAnalyzer

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from crawlproject.models.training_graph import TrainingGraph

FORMAT = "crawlproject/context-graph/1"
TRAINER = "scrapy train --kind context-graph"


@dataclass(frozen=True)
class Placement:
    layer: int  # 0 … depth, or depth + 1 for "other"
    confidence: float  # the posterior of that class
    target: float  # Pr(layer 0 | page): how much the page looks like the targets


class ContextGraphModel:
    def __init__(
        self, depth: int = 3, features: int = 5000, threshold: float = 0.0, alpha: float = 1.0,
        value_scope: str = "any",
    ):
        if depth < 1:
            raise ValueError(f"a context graph needs at least 1 layer before the targets, got depth={depth}")
        if value_scope not in SCOPES:
            raise ValueError(f"value_scope must be one of {', '.join(SCOPES)}, got {value_scope!r}")
        self.depth, self.features, self.threshold, self.alpha = depth, features, threshold, alpha
        self.value_scope = value_scope
        self.home: list[str] = []  # a site-bound model's home sites (URLs), when training named them
        self.vectorizer = CountVectorizer(analyzer=TermAnalyzer(stem=True).terms)
        self.classifier = MultinomialNB(alpha=alpha, fit_prior=False)
        self.report: dict[str, Any] = {}

    @property
    def other(self) -> int:
        return self.depth + 1

    def fit(self, graph: TrainingGraph) -> ContextGraphModel:
        layer_of = layers(graph.targets, graph.within_sites(self.value_scope).inlinks(), self.depth)
        pages = [url for url in graph.text if graph.text[url].strip()]
        classes = [layer_of.get(url, self.other) for url in pages]
        in_layers = [graph.text[u] for u, c in zip(pages, classes, strict=True) if c != self.other]
        if not in_layers or all(c == self.other for c in classes):
            raise ValueError("the training graph has no target page with text: no layer to learn")
        selector = TfidfVectorizer(analyzer=TermAnalyzer(stem=True).terms, sublinear_tf=True)
        weights = selector.fit_transform(in_layers)
        totals = np.asarray(weights.sum(axis=0)).ravel()
        names = selector.get_feature_names_out()
        chosen = sorted(str(names[i]) for i in totals.argsort()[::-1][: self.features])
        self.vectorizer = CountVectorizer(analyzer=TermAnalyzer(stem=True).terms, vocabulary=chosen)
        counts = self.vectorizer.transform(graph.text[u] for u in pages)
        self.classifier.fit(counts, classes)
        sizes = {str(c): classes.count(c) for c in range(self.other + 1)}
        self.report = {"pages_per_layer": sizes, "features": len(chosen), "targets": len(graph.targets)}
        return self

    def place(self, texts: Sequence[str]) -> list[Placement]:
        """The layer of each page (or "other"), with its posterior."""
        features = self.vectorizer.transform(texts)
        posterior = self.classifier.predict_proba(features)
        known = np.asarray(features.sum(axis=1)).ravel() > 0
        classes = self.classifier.classes_
        zero = np.flatnonzero(classes == 0)
        placements = []
        for row, any_known in zip(posterior, known, strict=True):
            if not any_known:
                placements.append(Placement(self.other, 0.0, 0.0))
                continue
            best = int(row.argmax())
            layer, confidence = int(classes[best]), float(row[best])
            if confidence < self.threshold:
                layer = self.other
            placements.append(Placement(layer, confidence, float(row[zero[0]]) if zero.size else 0.0))
        return placements

    def save(self, path: str | Path) -> None:
        meta = {
            "depth": self.depth, "features": self.features, "threshold": self.threshold, "alpha": self.alpha,
            "vocabulary": list(self.vectorizer.vocabulary), "report": self.report,
            "value_scope": self.value_scope, "home": self.home,
        }
        save_model(path, FORMAT, meta, nb_arrays("layers", self.classifier))

    @classmethod
    def load(cls, path: str | Path) -> ContextGraphModel:
        meta, arrays = load_model(path, FORMAT, TRAINER)
        model = cls(meta["depth"], meta["features"], meta["threshold"], meta["alpha"], meta.get("value_scope", "any"))
        model.home = list(meta.get("home", []))
        model.vectorizer = CountVectorizer(analyzer=TermAnalyzer(stem=True).terms, vocabulary=meta["vocabulary"])
        model.vectorizer.fit([])  # fixed vocabulary: nothing to learn, but sklearn wants it "fitted"
        model.classifier = nb_from_arrays("layers", arrays, model.alpha, fit_prior=False)
        model.report = meta["report"]
        return model
