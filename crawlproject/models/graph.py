"""Pure functions over a link graph: the layers of a context graph and the
discounted number of targets a link leads to.

A graph is ``outlinks: page → pages it links to`` (or the reverse,
``inlinks``); pages are any hashable keys (canonical URLs in practice).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence


def reverse(outlinks: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """target → the pages linking to it (self-links and repeats dropped).

    >>> reverse({"a": ["b", "b", "a"], "c": ["b"]})
    {'b': ['a', 'c']}
    """
    inlinks: dict[str, list[str]] = {}
    for source, targets in outlinks.items():
        for target in dict.fromkeys(targets):
            if target != source:
                inlinks.setdefault(target, []).append(source)
    return inlinks


def layers(targets: Iterable[str], inlinks: Mapping[str, Sequence[str]], depth: int) -> dict[str, int]:
    """The context graph (Diligenti et al. 2000; docs/methods.md §2): layer 0 = the
    targets, layer i = pages whose shortest path to a target has i links,
    for i ≤ *depth*; merged across targets (a page is in its nearest layer).

    >>> layers(["t"], {"t": ["a", "b"], "a": ["c"], "c": ["d"]}, depth=2)
    {'t': 0, 'a': 1, 'b': 1, 'c': 2}
    """
    layer = dict.fromkeys(targets, 0)
    queue = deque(layer)
    while queue:
        page = queue.popleft()
        if layer[page] == depth:
            continue
        for source in inlinks.get(page, ()):
            if source not in layer:
                layer[source] = layer[page] + 1
                queue.append(source)
    return layer


def discounted_targets(
    targets: Iterable[str], inlinks: Mapping[str, Sequence[str]], gamma: float, horizon: int
) -> dict[str, float]:
    """V(u) = Σ over targets t reachable from u of γ^d(u, t), d the number of
    links on the shortest path (0 when u is itself a target), up to *horizon*
    links: the value of following a link to u (Rennie & McCallum 1999, the
    "future reward" of a link, with the targets found nearest first).
    Pages from which no target is reachable within the horizon are absent.

    >>> v = discounted_targets(["t1", "t2"], {"t1": ["a"], "t2": ["a", "t1"], "a": ["r"]}, 0.5, 3)
    >>> v["t1"], v["a"], v["r"]
    (1.5, 1.0, 0.5)
    """
    value: dict[str, float] = {}
    for target in dict.fromkeys(targets):
        distance = {target: 0}
        queue = deque([target])
        while queue:
            page = queue.popleft()
            d = distance[page]
            value[page] = value.get(page, 0.0) + gamma**d
            if d == horizon:
                continue
            for source in inlinks.get(page, ()):
                if source not in distance:
                    distance[source] = d + 1
                    queue.append(source)
    return value


def discounted_targets_by_site(
    targets: Iterable[str], inlinks: Mapping[str, Sequence[str]], gamma: float, horizon: int,
    site: Callable[[str], str],
) -> dict[str, dict[str, float]]:
    """:func:`discounted_targets` once per site: site → V_site(u), counting
    only the targets on that site. For a topic bound to its sites (one
    university's course pages), the value of a link from a page on site S
    is V_S of the page it leads to: the course pages of another university
    are worth nothing to it.

    >>> inlinks = {"a/t": ["a/p"], "b/t": ["a/p"]}
    >>> by_site = discounted_targets_by_site(["a/t", "b/t"], inlinks, 0.5, 3, lambda u: u[0])
    >>> by_site["a"], by_site["b"]
    ({'a/t': 1.0, 'a/p': 0.5}, {'b/t': 1.0, 'a/p': 0.5})
    """
    on_site: dict[str, list[str]] = {}
    for target in dict.fromkeys(targets):
        on_site.setdefault(site(target), []).append(target)
    return {name: discounted_targets(found, inlinks, gamma, horizon) for name, found in on_site.items()}
