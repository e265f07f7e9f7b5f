"""The distiller's relevance-weighted HITS, checked against Chakrabarti et al.'s
update rules written out by hand."""

from __future__ import annotations

import random

import pytest

from crawlproject.models.distiller import Distiller

Pages = dict[str, tuple[float, tuple[str, ...]]]


def _host(url: str) -> str:
    return url.split("/")[2]


def hand_hubs(pages: Pages, iterations: int = 500) -> dict[str, float]:
    """Power iteration of Chakrabarti et al. (1999), written from the paper:
    a(v) = Σ_{u→v} R(u)·h(u), then h(u) = Σ_{u→v} R(v)·a(v), normalised;
    only links between fetched pages of different hosts count."""
    edges = [
        (u, v) for u, (_, outlinks) in pages.items() for v in outlinks
        if v in pages and _host(u) != _host(v)
    ]
    hub = dict.fromkeys(pages, 1.0)
    for _ in range(iterations):
        authority = dict.fromkeys(pages, 0.0)
        for u, v in edges:
            authority[v] += pages[u][0] * hub[u]
        hub = dict.fromkeys(pages, 0.0)
        for u, v in edges:
            hub[u] += pages[v][0] * authority[v]
        total = sum(hub.values())
        hub = {u: h / total for u, h in hub.items()}
    return hub


def distiller_of(pages: Pages, top_hubs: int = 10) -> Distiller:
    distiller = Distiller(every=len(pages), top_hubs=top_hubs)
    for url, (relevance, outlinks) in pages.items():
        distiller.add_page(url, relevance, outlinks)
    return distiller


def test_the_hub_of_relevant_pages_wins_even_with_fewer_relevant_links() -> None:
    # h1 (R 0.1) links to one page of R 1.0; h2 (R 0.9) to two pages of R 0.5.
    # By the rules above, per iteration h1 ← R(a1)·R(h1)·h1 = 0.1·h1 and
    # h2 ← 2 · 0.5·0.9 · h2 = 0.9·h2: the principal eigenvector of A·D·Aᵀ·D
    # is all h2. (A·D²·Aᵀ, the old formula, gives h1 ← 1.0·h1, h2 ← 0.5·h2: h1.)
    pages: Pages = {
        "http://h1.edu/": (0.1, ("http://a1.edu/",)),
        "http://h2.edu/": (0.9, ("http://a2.edu/", "http://a3.edu/")),
        "http://a1.edu/": (1.0, ()),
        "http://a2.edu/": (0.5, ()),
        "http://a3.edu/": (0.5, ()),
    }
    hubs = dict(distiller_of(pages).hubs())
    assert next(iter(hubs)) == "http://h2.edu/"
    assert hubs["http://h2.edu/"] == pytest.approx(1.0, abs=1e-6)
    assert hubs.get("http://h1.edu/", 0.0) == pytest.approx(0.0, abs=1e-6)


PAGES: Pages = {  # url: (relevance, outlinks)
    "http://a.edu/hub": (0.2, ("http://b.edu/1", "http://c.edu/2", "http://e.edu/new")),
    "http://d.edu/hub": (0.1, ("http://b.edu/1", "http://f.edu/other-new")),
    "http://a.edu/nav": (0.9, ("http://a.edu/hub", "http://a.edu/x")),  # same host only
    "http://b.edu/1": (0.9, ("http://c.edu/2",)),
    "http://c.edu/2": (0.6, ("http://d.edu/hub", "http://b.edu/1")),
}


def test_hub_scores_equal_the_hand_written_iteration() -> None:
    expected = hand_hubs(PAGES)
    hubs = dict(distiller_of(PAGES).hubs())
    for url, value in expected.items():
        assert hubs.get(url, 0.0) == pytest.approx(value, abs=1e-6), url
    assert "http://a.edu/nav" not in hubs  # its links stay on its own host


def test_incremental_runs_agree_with_a_fresh_computation() -> None:
    rng = random.Random(7)
    urls = [f"http://h{i % 9}.edu/{i}" for i in range(60)]
    pages: Pages = {
        url: (rng.random(), tuple(rng.sample(urls, 5))) for url in urls
    }
    growing = Distiller(every=10, top_hubs=60)
    for count, (url, (relevance, outlinks)) in enumerate(pages.items(), 1):
        growing.add_page(url, relevance, outlinks)
        if growing.due:
            growing.run()
            seen = dict(list(pages.items())[:count])
            expected = hand_hubs(seen)
            got = dict(growing.hubs())
            for hub, value in expected.items():
                assert got.get(hub, 0.0) == pytest.approx(value, abs=1e-5), (count, hub)
    assert growing.runs == 6


def test_warm_start_needs_fewer_iterations_than_a_cold_start() -> None:
    rng = random.Random(3)
    urls = [f"http://h{i % 13}.edu/{i}" for i in range(400)]
    distiller = Distiller(every=1000, top_hubs=5)
    for url in urls:
        distiller.add_page(url, rng.random(), tuple(rng.sample(urls, 6)))
    distiller.hubs()
    cold = distiller.last_iterations
    distiller.add_page("http://new.edu/x", 0.5, tuple(rng.sample(urls, 6)))
    distiller.hubs()
    assert distiller.last_iterations < cold


def test_distiller_promotes_only_unvisited_outlinks_of_top_hubs_above_any_relevance() -> None:
    d = distiller_of(PAGES, top_hubs=1)
    top = d.hubs()[0][0]
    promotions = d.run()
    unvisited = {u for u in PAGES[top][1] if u not in PAGES}
    assert {p.url for p in promotions} == unvisited
    assert all(p.score > 1.0 and p.source == top for p in promotions)
    assert not d.due and d.runs == 1


def test_distiller_with_no_cross_host_links_promotes_nothing() -> None:
    d = Distiller(every=1, top_hubs=5)
    d.add_page("http://a.edu/1", 1.0, ("http://a.edu/2",))
    d.add_page("http://a.edu/2", 1.0, ("http://a.edu/1",))
    assert d.run() == []


def test_distiller_can_be_told_to_count_links_within_a_host() -> None:
    d = Distiller(every=1, top_hubs=5, same_host=True)
    d.add_page("http://a.edu/index", 0.1, ("http://a.edu/c1", "http://a.edu/c2", "http://a.edu/c3"))
    d.add_page("http://a.edu/c1", 0.9, ())
    d.add_page("http://a.edu/c2", 0.8, ())
    promotions = d.run()
    assert [(p.url, p.source) for p in promotions] == [("http://a.edu/c3", "http://a.edu/index")]
