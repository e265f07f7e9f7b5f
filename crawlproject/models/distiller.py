"""The distiller of the focused crawler (docs/methods.md §2): a relevance-weighted HITS
over the crawled graph that finds hubs, whose unvisited outlinks are then
crawled first.

Chakrabarti, van den Berg & Dom (1999) weight each endpoint of a link by its
relevance R: an authority is endorsed by relevant hubs, a hub by the
relevant authorities it points to,

    a(v) = Σ_{u→v} R(u)·h(u)        h(u) = Σ_{u→v} R(v)·a(v),

i.e. a = Aᵀ·D·h and h = A·D·a with A the adjacency matrix and D = diag(R),
so h is the principal eigenvector of A·D·Aᵀ·D. Links within one host are
ignored (navigation, not endorsement), and so are links to pages not
fetched yet (R unknown: weight 0 until they are).

The graph is kept between runs (appended edge arrays, one sparse matrix
built per run) and each run's power iteration starts from the last run's
hub vector, so a run costs a few sparse products over the cross-host links.
"""

from __future__ import annotations

import logging
from array import array
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from crawlproject.web.page import Promotion
from crawlproject.web.urls import host_of

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

logger = logging.getLogger(__name__)

_TOLERANCE = 1e-10  # L1 change of the normalised hub vector
_MAX_ITERATIONS = 1000
_WARM_FLOOR = 1e-3


class Distiller:
    """Keeps the crawled graph; every *every* pages, promotes the outlinks of
    the *top_hubs* best hubs to priority 1 + (hub score / best hub score),
    above any classifier relevance (which is at most 1)."""

    def __init__(self, every: int, top_hubs: int, same_host: bool = False):
        self.every = every
        self.top_hubs = top_hubs
        self.same_host = same_host  # count links within a host too (not Chakrabarti's rule)
        self.runs = 0
        self.last_iterations = 0
        self._since_run = 0
        self._ids: dict[str, int] = {}
        self._keys: list[str] = []
        self._relevance = array("d")  # 0 for pages not fetched yet
        self._fetched: set[int] = set()
        self._outlinks: dict[int, array[int]] = {}  # fetched page → its counted outlinks
        self._found: dict[int, str] = {}  # URL as found, where it differs from the key
        self._sources, self._targets = array("i"), array("i")
        self._hubs = np.zeros(0)

    def add_page(
        self,
        url: str,
        relevance: float,
        outlinks: Iterable[str],
        found: Mapping[str, str] | None = None,
    ) -> None:
        """A fetched page: its key, R(p), its outlinks' keys, and for those
        whose URL as found differs from the key, that URL."""
        source = self._id(url)
        self._relevance[source] = relevance
        self._fetched.add(source)
        source_host = None if self.same_host else host_of(url)
        counted = array("i")
        for key in dict.fromkeys(outlinks):
            if key == url or host_of(key) == source_host:
                continue
            target = self._id(key)
            counted.append(target)
            if found and key in found:
                self._found[target] = found[key]
        self._outlinks[source] = counted
        self._sources.extend([source] * len(counted))
        self._targets.extend(counted)
        self._since_run += 1

    def state(self) -> dict[str, Any]:
        """Everything a resumed crawl needs (crawlproject.strategies.chakrabarti_state)."""
        return {
            "keys": self._keys,
            "relevance": self._relevance,
            "fetched": np.fromiter(self._fetched, dtype=np.int64, count=len(self._fetched)),
            "outlink_sources": np.repeat(
                np.fromiter(self._outlinks, dtype=np.int64, count=len(self._outlinks)),
                [len(targets) for targets in self._outlinks.values()],
            ),
            "outlink_targets": np.concatenate(
                [np.frombuffer(t, dtype=np.int32) for t in self._outlinks.values()] or [np.zeros(0, np.int32)]
            ),
            "found": {str(node): url for node, url in self._found.items()},
            "sources": self._sources,
            "targets": self._targets,
            "hubs": self._hubs,
            "runs": self.runs,
            "since_run": self._since_run,
        }

    def restore(self, state: dict[str, Any]) -> None:
        self._keys = list(state["keys"])
        self._ids = {key: node for node, key in enumerate(self._keys)}
        self._relevance = array("d", np.asarray(state["relevance"], dtype=np.float64).tolist())
        self._fetched = {int(node) for node in state["fetched"]}
        self._outlinks = {}
        for source, target in zip(state["outlink_sources"].tolist(), state["outlink_targets"].tolist()):
            self._outlinks.setdefault(int(source), array("i")).append(int(target))
        for node in self._fetched:
            self._outlinks.setdefault(node, array("i"))
        self._found = {int(node): url for node, url in state["found"].items()}
        self._sources = array("i", np.asarray(state["sources"], dtype=np.int32).tolist())
        self._targets = array("i", np.asarray(state["targets"], dtype=np.int32).tolist())
        self._hubs = np.asarray(state["hubs"], dtype=np.float64)
        self.runs, self._since_run = int(state["runs"]), int(state["since_run"])

    def _id(self, key: str) -> int:
        node = self._ids.get(key)
        if node is None:
            node = self._ids[key] = len(self._keys)
            self._keys.append(key)
            self._relevance.append(0.0)
        return node

    @property
    def due(self) -> bool:
        return self._since_run >= self.every

    def hub_vector(self) -> np.ndarray:
        """h, normalised to sum 1 (zeros when no link counts), warm-started."""
        n = len(self._keys)
        if not self._sources:
            self.last_iterations = 0
            return np.zeros(n)
        relevance = np.frombuffer(self._relevance, dtype=np.float64)
        sources = np.frombuffer(self._sources, dtype=np.int32)
        targets = np.frombuffer(self._targets, dtype=np.int32)
        weighted = relevance[sources] * relevance[targets] > 0
        if not weighted.any():
            self.last_iterations = 0
            return np.zeros(n)
        adjacency = sp.csr_matrix(
            (np.ones(int(weighted.sum())), (sources[weighted], targets[weighted])), shape=(n, n)
        )
        transposed = adjacency.T.tocsr()
        # Warm start: the last run's answer, plus a little of everything so a
        # part of the graph it gave nothing to can still rise.
        hubs = np.full(n, _WARM_FLOOR / n)
        hubs[: len(self._hubs)] += self._hubs
        hubs /= hubs.sum()
        iteration = 0
        while iteration < _MAX_ITERATIONS:
            iteration += 1
            authorities = transposed @ (relevance * hubs)
            new = adjacency @ (relevance * authorities)
            total = new.sum()
            if total <= 0:
                new = np.zeros(n)
                break
            new /= total
            change = np.abs(new - hubs).sum()
            hubs = new
            if change < _TOLERANCE:
                break
        else:
            logger.warning("Distiller: HITS did not converge in %d iterations", _MAX_ITERATIONS)
        self.last_iterations = iteration
        self._hubs = hubs
        return hubs

    def hubs(self) -> list[tuple[str, float]]:
        """The top hubs, best first, with their (positive) hub scores."""
        vector = self.hub_vector()
        best = np.argsort(-vector, kind="stable")[: self.top_hubs]
        return [(self._keys[i], float(vector[i])) for i in best if vector[i] > 1e-12]

    def run(self) -> list[Promotion]:
        """Find the hubs now; their outlinks not fetched yet, to be raised."""
        self._since_run = 0
        self.runs += 1
        hubs = self.hubs()
        if not hubs:
            return []
        best = hubs[0][1]
        promotions: dict[int, Promotion] = {}
        for hub, score in hubs:
            priority = 1.0 + score / best
            for target in self._outlinks[self._ids[hub]]:
                if target not in self._fetched and target not in promotions:
                    key = self._keys[target]
                    promotions[target] = Promotion(self._found.get(target, key), priority, hub, key)
        logger.info(
            "Distiller: top hub %(hub)s; %(count)d unvisited outlinks of %(hubs)d hubs raised",
            {"hub": hubs[0][0], "count": len(promotions), "hubs": len(hubs)},
        )
        return list(promotions.values())
