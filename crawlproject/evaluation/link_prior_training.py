"""Training the link model learnt across topics (crawlproject.models.link_prior)
on a labelled corpus: every topic the labels give (the topics the quality
benchmark crawls, crawlproject.evaluation.topics), its links as an offline
crawl of it meets them, and one fit in which every topic weighs the same.
Used by ``scrapy train --kind link-prior`` and ``bench.link_prior``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from crawlproject.corpus.reader import load_corpus
from crawlproject.evaluation.topics import derive_topics, relevant_set
from crawlproject.models.link_prior import LinkPrior, TopicGraph, corpus_examples
from crawlproject.models.training_graph import link_graph

if TYPE_CHECKING:
    from pathlib import Path

Examples = list[tuple[np.ndarray, np.ndarray]]  # per topic: feature rows, what each link was worth


def corpus_link_examples(warc: str | Path, labels: str | Path, pages: int = 300,
                         cache_dir: str | Path | None = ".cache") -> Examples:
    """Every topic's link examples of the corpus *warc* labelled by *labels*
    (topics without a link met are left out)."""
    corpus = load_corpus(warc, labels, cache_dir)
    graph = link_graph(warc, cache_dir=cache_dir)
    topics = [
        TopicGraph(topic.query, topic.neighbors or topic.seeds, relevant_set(topic, corpus))
        for topic in derive_topics(corpus, rng_seed=1, query="seed-terms")
    ]
    return [pair for pair in corpus_examples(graph, topics, pages=pages) if len(pair[1])]


def fit_across_topics(parts: list[Examples], about: dict[str, object] | None = None) -> LinkPrior:
    """A prior from the topics of *parts*, each topic weighing the same (its
    links weighted 1/links: a topic with many links does not dominate)."""
    topics = [pair for part in parts for pair in part]
    if not topics:
        raise ValueError("no topic of the corpus met a link: nothing to learn a link prior from")
    rows = np.vstack([r for r, _ in topics])
    values = np.concatenate([v for _, v in topics])
    mean = len(values) / len(topics)
    weights = np.concatenate([np.full(len(v), mean / len(v)) for _, v in topics])
    return LinkPrior.fit(rows, values, weights, about=about)
