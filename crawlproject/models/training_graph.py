"""A training graph: pages with their text, which of them are targets (of
the good categories), and every outlink with its anchor and context words —
what the look-ahead models learn from.

It comes from a labelled corpus (a WARC plus labels.tsv), from a crawl
that wrote a WARC (FOCUS_WARC_OUTPUT) and labels for some of its pages, or —
for the context graph, as Diligenti et al. built it — from a search
engine's backlink queries (:func:`training_graph_from_index`). The
links of a page keep their targets whether or not the archive holds them:
a link to a page nobody archived is a link worth nothing, and a crawler on
a partial snapshot meets many.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from crawlproject.corpus.labels import is_relevant, load_labels
from crawlproject.corpus.reader import archived_pages
from crawlproject.disk_cache import cached, file_key
from crawlproject.models.graph import reverse
from crawlproject.policy.scope import site_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

_CACHE_VERSION = 3  # 2: revisit records read (corpus.archived_pages); 3: link contexts keep the words after a comment


@dataclass(frozen=True)
class LinkRecord:
    target: str  # canonical URL
    anchor: str
    context: str  # up to ``window`` words each side of the anchor


@dataclass
class TrainingGraph:
    text: dict[str, str] = field(default_factory=dict)
    links: dict[str, list[LinkRecord]] = field(default_factory=dict)
    targets: set[str] = field(default_factory=set)
    labels: dict[str, str] = field(default_factory=dict)
    window: int = 10

    def outlinks(self) -> dict[str, list[str]]:
        return {page: [link.target for link in links] for page, links in self.links.items()}

    def inlinks(self) -> dict[str, list[str]]:
        return reverse(self.outlinks())

    def links_between_pages(self, pages: Iterable[str]) -> Iterator[tuple[str, LinkRecord]]:
        """(page, link) for every link of *pages* to another page — the
        examples a link-value model learns from and is judged on."""
        for url in pages:
            for link in self.links.get(url, ()):
                if link.target != url:
                    yield url, link

    def restricted(self, keep: Callable[[str], bool]) -> TrainingGraph:
        """The graph of the pages *keep* accepts: their links still point
        anywhere, but only kept pages are targets or have text and links."""
        pages = [url for url in self.text if keep(url)]
        return TrainingGraph(
            text={url: self.text[url] for url in pages},
            links={url: self.links.get(url, []) for url in pages},
            targets={url for url in self.targets if keep(url)},
            labels={url: c for url, c in self.labels.items() if keep(url)},
            window=self.window,
        )

    def within_sites(self, scope: str) -> TrainingGraph:
        """The graph a crawl kept to its sites sees (crawlproject.policy.scope): only
        the links between pages of one site (registered domain or host, as
        *scope* says); ``any`` keeps every link."""
        if scope == "any":
            return self
        links = {}
        for url, records in self.links.items():
            site = site_of(url, scope)
            links[url] = [link for link in records if site_of(link.target, scope) == site]
        return TrainingGraph(self.text, links, self.targets, self.labels, self.window)

    def with_targets(self, good: Iterable[str]) -> TrainingGraph:
        """The same graph, its targets the labelled pages of the *good* categories."""
        good = tuple(good)
        targets = {url for url, category in self.labels.items() if url in self.text and is_relevant(category, good)}
        return TrainingGraph(self.text, self.links, targets, self.labels, self.window)


def link_graph(warc: str | Path, window: int = 10, cache_dir: str | Path | None = ".cache") -> TrainingGraph:
    """Text and outlinks (with anchor and context) of every page of *warc*;
    no labels or targets yet (see :func:`training_graph`). Cached."""
    warc = Path(warc)
    cache_file = None
    if cache_dir is not None:
        cache_file = Path(cache_dir) / f"linkgraph-{file_key(_CACHE_VERSION, warc, extra=str(window))}.pickle"
    return cached(cache_file, lambda: _read_link_graph(warc, window))


def _read_link_graph(warc: Path, window: int) -> TrainingGraph:
    graph = TrainingGraph(window=window)
    for url, page in archived_pages(warc):
        graph.text[url], graph.links[url] = "", []
        if page is None:
            continue  # not HTML: no text, no links
        graph.text[url] = page.text
        for link in page.links:
            found = page.link_context(link, window)
            graph.links[url].append(LinkRecord(link.key, found.anchor, found.context))
    return graph


def training_graph(
    warc: str | Path, labels: str | Path, good: Iterable[str], window: int = 10,
    cache_dir: str | Path | None = ".cache",
) -> TrainingGraph:
    """The link graph of *warc* with the labels of *labels*; targets = the
    labelled pages of the *good* categories (or below them)."""
    good = tuple(good)
    found = load_labels(labels)
    if not any(is_relevant(category, good) for category in found.values()):  # said before the WARC is read
        raise ValueError(
            f"no page of {labels} is labelled with a good category ({', '.join(good)}): nothing to learn from"
        )
    graph = link_graph(warc, window, cache_dir)
    graph.labels = found
    graph = graph.with_targets(good)
    if not graph.targets:
        raise ValueError(
            f"no page of {warc} is labelled with a good category ({', '.join(good)}) in {labels}: nothing to learn from"
        )
    return graph


def training_graph_from_index(
    index: str | Path, labels: str | Path, good: Iterable[str], depth: int
) -> TrainingGraph:
    """The context graph as Diligenti et al. built it: from the labelled
    pages of the *good* categories that the search index holds, backlink
    queries layer by layer (*depth* layers), every page's text from the
    index; every other indexed page is there too (the "other" class). Links
    carry no anchors (the index keeps the words near a link only as votes):
    enough for layers, not for the link-value model."""
    from crawlproject.search.collection import CollectionError, IndexedCollection
    from crawlproject.search.engine import collection_folder

    good = tuple(good)
    if not Path(index).is_dir():
        raise CollectionError(f"{index} is not a search index (no such folder)")
    collection = IndexedCollection(collection_folder(index))
    try:
        graph = TrainingGraph(labels=load_labels(labels))
        for key in collection.keys():  # noqa: SIM118 (a method, not a dict)
            found = collection.page(key)
            graph.text[key] = found["text"] if found else ""
        graph.targets = {
            url for url, category in graph.labels.items() if url in graph.text and is_relevant(category, good)
        }
        if not graph.targets:
            raise ValueError(
                f"no page of the index {index} is labelled with a good category ({', '.join(good)}) "
                f"in {labels}: nothing to learn from"
            )
        layer, seen = set(graph.targets), set(graph.targets)
        for _ in range(depth):
            following = set()
            for target in sorted(layer):
                for source in collection.backlinks(target):
                    graph.links.setdefault(source, []).append(LinkRecord(target, "", ""))
                    if source not in seen:
                        seen.add(source)
                        following.add(source)
            layer = following
    finally:
        collection.close()
    return graph
