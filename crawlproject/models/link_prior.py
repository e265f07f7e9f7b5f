"""A link model learnt across topics: the link learner's prior.

The online link learner (crawlproject.models.online_link_model) starts every
crawl from SharkSearch's score and learns its corrections from the crawl's
own verdicts — a few hundred fetches teach it little. This model is learnt
*before* the crawl, from many topics of labelled corpora, on features that
say how a link stands **relative to the topic** rather than which words it
has (raw tokens do not carry from one topic to the next):

* SharkSearch's own score of the link (docs/methods.md §2), the page's relevance (the
  judge's verdict), the similarity of the anchor and of the URL's words to
  the query;
* where the link points: links from the nearest seed (hops), the same host,
  directories above the file, a query string, a file that is not a web page
  (dead-link signs).

Each feature is standardised, and a logistic regression predicts how much a
link is worth: 1 if its page is relevant, ½ if the page links to a relevant
one (a relevant page within two links), 0 otherwise (a soft label, fitted
as two weighted rows). The result is the link learner's prior
(FOCUS_LEARNER_PRIOR); the crawl's path history and token corrections then
correct it online, as they corrected SharkSearch's score.

Training examples come from offline crawls of a labelled corpus
(:func:`topic_examples`): for each topic, a SharkSearch crawl of the link
graph from the topic's start pages, every link of every page it visits an
example — the links a crawl of that topic meets, not a uniform sample of
the web. ``scrapy train --kind link-prior`` trains one on a user's own
corpus; the package ships one trained on the bundled corpora
(:func:`shipped_prior`).
"""

from __future__ import annotations

import heapq
import math
import re
from dataclasses import dataclass
from functools import partial
from importlib import resources
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import numpy as np

from crawlproject.models.modelfile import load_model, save_model
from crawlproject.models.shark_score import SharkParameters
from crawlproject.web.text import TermAnalyzer, cosine

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path

    from crawlproject.models.training_graph import TrainingGraph

FORMAT = "crawlproject/link-prior/1"
TRAINER = "scrapy train --kind link-prior"
#: The features of a link, in the order of a row (docs/strategies.md lists
#: their weights). Similarities enter as log(0.01 + s): a multiplicative
#: model, so that a topic whose cosines run small is ranked as one whose run
#: large. Tried and left out, because they made the prior carry worse from
#: one corpus to another (bench.link_prior, on half of the topics): the
#: context's similarity, the inherited score alone, below the page's
#: directory, the page's out-degree, the link's position, an empty anchor.
FEATURES = (
    "shark_search", "page_relevance", "anchor", "url",
    "hops", "same_host", "path_depth", "query_string", "not_html",
)
SMALL = 0.01
#: What a link to a page that links to a relevant page is worth (its page itself: 1).
ONE_LINK_BEFORE = 0.5
_URL_WORD = re.compile(r"[a-zA-Z]+")
_EXTENSION = re.compile(r"\.([a-z0-9]{1,5})$")
#: Extensions of web pages (a link to anything else rarely leads on).
PAGE_EXTENSIONS = frozenset({"", "html", "htm", "shtml", "xhtml", "php", "asp", "aspx", "jsp", "cgi", "pl", "cfm"})


@dataclass(frozen=True)
class PageSide:
    """What a page tells about all of its links."""

    url: str
    relevance: float  # the judge's verdict
    inherited: float  # SharkSearch's inherited(url) of its links
    budget: int  # SharkSearch's depth budget of its links (≤ 0: it would not follow them)
    hops: int  # links from the nearest seed to the page's links' targets


def url_words(url: str) -> str:
    """The words of a URL's path and query, for the analyzer.

    >>> url_words("http://php.net/manual/en/function.array-map.php?x=1")
    'manual en function array map php x'
    """
    parts = urlsplit(url)
    return " ".join(_URL_WORD.findall(parts.path + " " + parts.query))


def link_features(
    query: Mapping[str, float], analyzer: TermAnalyzer, page: PageSide,
    links: Sequence[tuple[str, Mapping[str, float], Mapping[str, float]]], shark: SharkParameters,
) -> np.ndarray:
    """One row of :data:`FEATURES` for each of *links* — (target URL, the
    anchor's and the context's term vectors) — of *page*, for the topic of
    *query*."""
    rows = np.zeros((len(links), len(FEATURES)))
    page_host = urlsplit(page.url.lower()).hostname
    page_relevance = math.log(SMALL + page.relevance)
    for row, (url, anchor, context) in enumerate(links):
        anchor_sim = cosine(query, anchor)
        neighborhood = shark.neighborhood(anchor_sim, partial(cosine, query, context))
        score = shark.score(page.inherited, neighborhood) if page.budget > 0 else 0.0
        parts = urlsplit(url.lower())
        extension = _EXTENSION.search(parts.path.rsplit("/", 1)[-1])
        rows[row] = (
            math.log(SMALL + score), page_relevance, math.log(SMALL + anchor_sim),
            math.log(SMALL + cosine(query, analyzer.vector(url_words(url)))),
            min(page.hops, 5) / 5, parts.hostname == page_host,
            min(max(parts.path.count("/") - 1, 0), 6) / 6, bool(parts.query),
            (extension.group(1) if extension else "") not in PAGE_EXTENSIONS,
        )
    return rows


class LinkPrior:
    """A logistic regression over standardised :data:`FEATURES`: what a link
    is worth before the crawl has learnt anything."""

    def __init__(self, weights: np.ndarray, intercept: float, means: np.ndarray, scales: np.ndarray,
                 about: dict[str, object] | None = None):
        if len(weights) != len(FEATURES) or len(means) != len(FEATURES) or len(scales) != len(FEATURES):
            raise ValueError(f"a link prior has {len(FEATURES)} weights, means and scales")
        self.weights, self.intercept = np.asarray(weights, float), float(intercept)
        self.means, self.scales = np.asarray(means, float), np.asarray(scales, float)
        self.about = about or {}

    @classmethod
    def fit(cls, rows: np.ndarray, values: np.ndarray, weights: np.ndarray | None = None, c: float = 1.0,
            about: dict[str, object] | None = None) -> LinkPrior:
        """Fit to *rows* whose links are worth *values* in [0, 1] (each a
        positive row of weight w·v and a negative row of weight w·(1 − v),
        w from *weights*, 1 by default)."""
        from sklearn.linear_model import LogisticRegression

        if len(rows) == 0 or not (values > 0).any() or not (values < 1).any():
            raise ValueError("a link prior needs links worth something and links worth nothing")
        means = rows.mean(axis=0)
        scales = rows.std(axis=0)
        scales[scales == 0] = 1.0
        standard = (rows - means) / scales
        both = np.vstack([standard, standard])
        targets = np.concatenate([np.ones(len(rows)), np.zeros(len(rows))])
        each = np.ones(len(rows)) if weights is None else np.asarray(weights, float)
        sample = np.concatenate([each * values, each * (1 - values)])
        keep = sample > 0
        model = LogisticRegression(C=c, max_iter=1000)
        model.fit(both[keep], targets[keep], sample_weight=sample[keep])
        return cls(model.coef_[0], float(model.intercept_[0]), means, scales, about)

    def predict(self, rows: np.ndarray) -> np.ndarray:
        """What each link of *rows* is worth, in (0, 1)."""
        if len(rows) == 0:
            return np.zeros(0)
        raw = ((rows - self.means) / self.scales) @ self.weights + self.intercept
        return np.asarray(1 / (1 + np.exp(-np.clip(raw, -30, 30))))

    def named_weights(self) -> list[tuple[str, float]]:
        """(feature, weight per standard deviation), the largest first."""
        return sorted(zip(FEATURES, self.weights.tolist(), strict=True), key=lambda item: -abs(item[1]))

    def save(self, path: str | Path) -> None:
        save_model(path, FORMAT, {"features": list(FEATURES), "intercept": self.intercept, "about": self.about},
                   {"weights": self.weights, "means": self.means, "scales": self.scales})

    @classmethod
    def load(cls, path: str | Path) -> LinkPrior:
        from crawlproject.models.modelfile import ModelError

        meta, arrays = load_model(path, FORMAT, TRAINER)
        if meta.get("features") != list(FEATURES):
            raise ModelError(f"{path} was trained on other link features ({meta.get('features')}); retrain it "
                             f"with `{TRAINER}`")
        return cls(arrays["weights"], meta["intercept"], arrays["means"], arrays["scales"], meta.get("about"))


SHIPPED = "link-prior.npz"


def shipped_prior() -> LinkPrior:
    """The prior the package ships (trained on the bundled corpora:
    ``python -m bench.link_prior --ship``)."""
    with resources.as_file(resources.files("crawlproject.models") / SHIPPED) as path:
        return LinkPrior.load(path)


@dataclass
class TopicGraph:
    """A topic as training needs it: its query, where its crawl starts, and
    which pages of the graph are relevant."""

    query: str
    start: list[str]
    relevant: set[str]


def topic_examples(
    graph: TrainingGraph, topic: TopicGraph, analyzer: TermAnalyzer, shark: SharkParameters,
    pages: int = 300,
) -> tuple[np.ndarray, np.ndarray]:
    """The links an offline SharkSearch crawl of *topic* meets in *graph*
    (*pages* pages from its start, best link first) as rows of
    :data:`FEATURES`, and what each is worth (1: a relevant page, ½: a page
    one link before one, 0: neither, or not in the graph)."""
    query = analyzer.vector(topic.query)
    relevant = topic.relevant
    before = {url for url, links in graph.links.items() if any(link.target in relevant for link in links)}
    queue: list[tuple[float, int, str, float, int, int]] = []  # (−score, order, url, inherited, budget, hops)
    order = 0
    for url in topic.start:
        queue.append((-1.0, order, url, 0.0, shark.depth, 0))
        order += 1
    heapq.heapify(queue)
    seen: set[str] = set()
    found_rows: list[np.ndarray] = []
    found_values: list[np.ndarray] = []
    while queue and len(seen) < pages:
        _, _, url, inherited, budget, hops = heapq.heappop(queue)
        if url in seen or url not in graph.text:
            continue
        seen.add(url)
        relevance = cosine(query, analyzer.vector(graph.text[url]))
        child_inherited, child_budget = shark.inheritance(relevance, inherited, budget)
        links = list({link.target: link for link in graph.links.get(url, ()) if link.target != url}.values())
        if not links:
            continue
        side = PageSide(url, relevance, child_inherited, child_budget, hops + 1)
        described = [(link.target, analyzer.vector(link.anchor), analyzer.vector(link.context)) for link in links]
        rows = link_features(query, analyzer, side, described, shark)
        values = np.array([
            1.0 if link.target in relevant else ONE_LINK_BEFORE if link.target in before else 0.0
            for link in links
        ])
        found_rows.append(rows)
        found_values.append(values)
        for link, row in zip(links, rows, strict=True):
            if link.target not in seen:
                heapq.heappush(queue, (-row[0], order, link.target, child_inherited, child_budget, hops + 1))
                order += 1
    if not found_rows:
        return np.zeros((0, len(FEATURES))), np.zeros(0)
    return np.vstack(found_rows), np.concatenate(found_values)


def corpus_examples(
    graph: TrainingGraph, topics: Iterable[TopicGraph], shark: SharkParameters | None = None,
    pages: int = 300, stem: bool = True,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`topic_examples` of each of *topics* (one pair per topic)."""
    analyzer = TermAnalyzer(stem=stem)
    return [topic_examples(graph, topic, analyzer, shark or SharkParameters(), pages) for topic in topics]
