"""The distiller of the focused crawler (SPEC §2): a relevance-weighted HITS
over the crawled graph that finds hubs, whose unvisited outlinks are then
crawled first.

Chakrabarti et al. weight the forward edge u→v by the relevance of v for
the hub update and the backward edge by the relevance of u for the
authority update: h(u) = Σ_v R(v)·a(v), a(v) = Σ_u R(u)·h(u). With A the
adjacency matrix and D = diag(R) that is h = A·D·(D·Aᵀ)·h = (A·D)(A·D)ᵀ·h, so
the hub vector is exactly the HITS hub vector of the graph whose edge u→v
weighs R(v). networkx computes it (a sparse SVD); nothing here iterates by
hand. Links within one host are ignored (they are navigation, not
endorsement), and so are links to pages not fetched yet (R unknown, weight 0).
"""

from __future__ import annotations

import logging

import networkx as nx

from crawlproject.strategies.base import Promotion
from crawlproject.urls import host_of

logger = logging.getLogger(__name__)


class Distiller:
    """Keeps the crawled graph; every *every* pages, promotes the outlinks of
    the *top_hubs* best hubs to priority 1 + (hub score / best hub score),
    above any classifier relevance (which is at most 1)."""

    def __init__(self, every: int, top_hubs: int, same_host: bool = False):
        self.every = every
        self.top_hubs = top_hubs
        self.same_host = same_host  # count links within a host too (not Chakrabarti's rule)
        self.relevance: dict[str, float] = {}
        self.outlinks: dict[str, tuple[str, ...]] = {}
        self.runs = 0
        self._since_run = 0

    def add_page(self, url: str, relevance: float, outlinks: tuple[str, ...]) -> None:
        self.relevance[url] = relevance
        self.outlinks[url] = outlinks
        self._since_run += 1

    @property
    def due(self) -> bool:
        return self._since_run >= self.every

    def graph(self) -> nx.DiGraph:
        graph = nx.DiGraph()
        relevance = self.relevance
        for source, targets in self.outlinks.items():
            source_host = None if self.same_host else host_of(source)
            for target in targets:
                weight = relevance.get(target)
                if weight and target != source and host_of(target) != source_host:
                    graph.add_edge(source, target, weight=weight)
        return graph

    def hubs(self) -> list[tuple[str, float]]:
        """The top hubs, best first, with their (positive) hub scores."""
        graph = self.graph()
        if graph.number_of_edges() < 2:
            return []
        try:
            hub_scores, _ = nx.hits(graph, max_iter=1000, normalized=True)
        except (nx.PowerIterationFailedConvergence, ValueError):
            logger.warning("Distiller: HITS did not converge on %d pages", graph.number_of_nodes())
            return []
        ranked = sorted(
            ((url, score) for url, score in hub_scores.items() if score > 1e-12),
            key=lambda pair: (-pair[1], pair[0]),
        )
        return ranked[: self.top_hubs]

    def run(self) -> list[Promotion]:
        """Find the hubs now; their outlinks not fetched yet, to be raised."""
        self._since_run = 0
        self.runs += 1
        hubs = self.hubs()
        if not hubs:
            return []
        best = hubs[0][1]
        promotions: dict[str, Promotion] = {}
        for hub, score in hubs:
            priority = 1.0 + score / best
            for url in self.outlinks[hub]:
                if url not in self.relevance and url not in promotions:
                    promotions[url] = Promotion(url, priority, hub)
        logger.info(
            "Distiller: top hub %(hub)s; %(count)d unvisited outlinks of %(hubs)d hubs raised",
            {"hub": hubs[0][0], "count": len(promotions), "hubs": len(hubs)},
        )
        return list(promotions.values())
