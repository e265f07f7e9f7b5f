"""The symbiotic loop (docs/methods.md §4): the engine's users' queries refocus the
collection overnight.

    new_collection = {}
    for query in representative_queries:
        repeat up to MAX_ITER times, or until overlap(old_seeds, seeds) > THETA:
            old_seeds = seeds
            seeds = engine.search(query, N_HITS) + pages linking to those hits
            pages = best_first_crawl(query, seeds, MAX_PAGES)
            engine.index(pages); new_collection += pages
    engine.clear(); engine.index(new_collection)

MAX_PAGES = MAX_INDEX / |queries|, and the new collection holds at most
MAX_INDEX pages (the queries' pages taken in turn past it). A query no page
of the collection matches still steers: its seeds are the pages the
collection links to with its words near the link (the votes), else the
collection's hubs — a new interest can enter.

**Safe nights.** The new collection replaces the current one only when the
night went well: it holds pages, at least FLOOR × the current collection's
(or MAX_INDEX's, were that less), and most of the night's fetches were
answered. Else the current collection stays, the night says why in one
line and the command exits 1 (the report says so too). The previous good
collection is kept for ``--rollback``; the staging collection is removed on
every way out. Each night leaves ``DIR/nights/<time>/``:
``report.json`` (per query: seeds, overlap and pages of every iteration) and
every crawl's output folder. The night works on a copy of the current
collection (the *staging* collection: later queries' searches see the
night's pages); the current collection keeps answering users until the new
one — exactly the pages of ``new_collection``, with the votes they cast —
is swapped in atomically (crawlproject.search.engine.IndexHome.swap).

overlap(old, new) = |old ∩ new| / |new|: the share of this iteration's seeds
that the previous iteration started from too.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.utils.defer import deferred_from_coro

from crawlproject.items import PageItem
from crawlproject.search.collection import IndexedCollection, copy_pages
from crawlproject.search.engine import IndexHome, QueryError, SearchEngine
from crawlproject.web.content import is_html_content_type

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import CrawlerRunner

    from crawlproject.web.text import TermAnalyzer

logger = logging.getLogger(__name__)
#: A night's crawl stops after this many times MAX_PAGES fetches even if few were pages.
ERROR_GUARD = 4


@dataclass
class SymbiosisOptions:
    n_hits: int = 25
    max_iter: int = 3
    theta: float = 0.8
    max_index: int = 100_000
    spider: str = "bestfirst"
    tfidf: bool = False  #: the crawler weighs terms by the index's IDF (FOCUS_IDF_INDEX)
    #: the new collection must hold at least this share of the current one (or of MAX_INDEX, were it less)
    floor: float = 0.5
    #: and at most this share of the night's fetches may have failed (no answer, or a server error)
    max_failed: float = 0.5

    def check(self) -> None:
        if self.n_hits < 1 or self.max_iter < 1 or self.max_index < 1:
            raise ValueError("--n-hits, --max-iter and --max-index must be at least 1")
        if not 0 <= self.theta <= 1:
            raise ValueError(f"--theta must be between 0 and 1, got {self.theta}")
        if not 0 <= self.floor <= 1 or not 0 <= self.max_failed <= 1:
            raise ValueError("--floor and --max-failed are shares, from 0 to 1")


@dataclass
class Iteration:
    seeds: int
    overlap: float | None
    fetched: int


@dataclass
class QueryRun:
    query: str
    iterations: list[Iteration] = field(default_factory=list)
    skipped: str = ""
    #: where its seeds came from: "hits" (the engine's answers and the pages linking to them),
    #: "votes" (no hit: pages the collection links to with its words near), "hubs" (nor those)
    seeded_from: str = "hits"


@dataclass
class NightReport:
    queries: list[QueryRun]
    old_pages: int
    new_pages: int
    max_pages_per_crawl: int
    seconds: float
    collection: str
    swapped: bool = True
    #: why the current collection was kept ("" when swapped)
    kept_because: str = ""
    fetches: int = 0
    failed: int = 0


def overlap(old: set[str], new: set[str]) -> float:
    """|old ∩ new| / |new|.

    >>> overlap({"a", "b"}, {"b", "c", "d", "e"})
    0.25
    """
    return len(old & new) / len(new) if new else 1.0


def read_queries(path: str | Path) -> list[str]:
    """One query per line; blank lines and ``#`` comments skipped."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    queries = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not queries:
        raise ValueError(f"{path} holds no query (one per line)")
    return queries


class Symbiosis:
    def __init__(
        self,
        runner: CrawlerRunner,
        index: str | Path,
        queries: list[str],
        options: SymbiosisOptions,
        analyzer: TermAnalyzer,
        weights: dict[str, float] | None = None,
        say: Callable[[str], None] = print,
    ):
        options.check()
        self.runner = runner
        self.home = IndexHome(index)
        self.queries = queries
        self.options = options
        self.analyzer = analyzer
        self.weights = weights
        self.say = say
        self.max_pages = max(1, options.max_index // len(queries))

    async def run(self) -> NightReport:
        started = time.monotonic()
        current = IndexedCollection(self.home.current())
        old_pages = current.page_count()
        staging = self.home.new_collection("staging")
        try:
            copy_pages(current, staging, current.keys())
            current.close()
            self._commit(staging)
            return await self._night(staging, old_pages, started)
        finally:
            shutil.rmtree(staging.folder, ignore_errors=True)  # every way out: never a staging folder left

    async def _night(self, staging: IndexedCollection, old_pages: int, started: float) -> NightReport:
        night = self.home.folder / "nights" / time.strftime("%Y%m%dT%H%M%S")
        work = night / "crawls"
        engine = SearchEngine(staging.folder, self.weights, stem=self.analyzer.stem)
        gathered: list[list[str]] = []  # each query's pages, in the order its crawls fetched them
        runs, fetches, failed = [], 0, 0
        self.say(f"Night of {len(self.queries)} queries on {old_pages} pages: up to {self.options.max_iter} "
                 f"crawls of {self.max_pages} pages per query")
        for number, query in enumerate(self.queries, 1):
            run = QueryRun(query)
            runs.append(run)
            pages: list[str] = []
            gathered.append(pages)
            old_seeds: set[str] | None = None
            seeds: set[str] = set()
            for iteration in range(1, self.options.max_iter + 1):
                if old_seeds is not None and overlap(old_seeds, seeds) > self.options.theta:
                    break
                old_seeds = seeds
                engine.collection.reload()
                try:
                    seeds, run.seeded_from = self._seeds(engine, query)
                except QueryError as exc:
                    run.skipped = str(exc)
                    self.say(f"query {number}/{len(self.queries)} {query!r}: skipped ({exc})")
                    break
                if not seeds:
                    run.skipped = run.skipped or "no page of the collection matches it, links to it or is a hub"
                    self.say(f"query {number}/{len(self.queries)} {query!r}: nothing to crawl from")
                    break
                crawl = await self._crawl(query, seeds, work / f"q{number:03d}-{iteration}", staging.folder)
                fetches, failed = fetches + crawl.fetches, failed + crawl.failed
                known = set(pages)
                pages.extend(page for page in crawl.pages if page not in known)
                share = overlap(old_seeds, seeds) if old_seeds else None
                run.iterations.append(Iteration(len(seeds), share, len(crawl.pages)))
                self.say(
                    f"query {number}/{len(self.queries)} {query!r} · iteration {iteration}/{self.options.max_iter}: "
                    f"{len(seeds)} seeds{' (' + run.seeded_from + ')' if run.seeded_from != 'hits' else ''}"
                    + (f" (overlap {share:.0%})" if share is not None else "")
                    + f", {len(crawl.pages)} pages ({crawl.failed} of {crawl.fetches} fetches failed)"
                )
        engine.collection.close()
        new_collection = capped(gathered, self.options.max_index)
        kept_because = self._unsafe(len(new_collection), old_pages, fetches, failed)
        report = NightReport(runs, old_pages, len(new_collection), self.max_pages, 0.0, str(self.home.current()),
                             swapped=not kept_because, kept_because=kept_because, fetches=fetches, failed=failed)
        if not kept_because:
            final = self.home.new_collection()
            copy_pages(staging, final, new_collection)
            self._commit(final)
            report.new_pages, report.collection = final.page_count(), str(final.folder)
            final.close()
            self.home.swap(final.folder)  # users now search the new collection
        report.seconds = time.monotonic() - started
        night.mkdir(parents=True, exist_ok=True)
        (night / "report.json").write_text(json.dumps(asdict(report), indent=1), encoding="utf-8")
        return report

    def _seeds(self, engine: SearchEngine, query: str) -> tuple[set[str], str]:
        """The seeds of a crawl of *query*: the engine's best answers and the
        pages linking to them; with none, the pages the collection links to
        with the query's words near the link, then its hubs."""
        hits = engine.search(query, limit=self.options.n_hits).hits
        seeds = {hit.url for hit in hits} | {source for hit in hits for source in engine.backlinks(hit.key)}
        if seeds:
            return seeds, "hits"
        collection = engine.collection
        voted = set(collection.linked_with(engine.query_terms(query), self.options.n_hits))
        if voted:
            return voted, "votes"
        return set(collection.hubs(self.options.n_hits)), "hubs"

    def _unsafe(self, new_pages: int, old_pages: int, fetches: int, failed: int) -> str:
        """Why the night's collection must not replace the current one ("" if it may)."""
        floor = math.ceil(self.options.floor * min(old_pages, self.options.max_index))
        if fetches and failed > self.options.max_failed * fetches:
            return (f"{failed} of the night's {fetches} fetches failed — no answer, or a server error "
                    f"(more than {self.options.max_failed:.0%})")
        if new_pages == 0:
            return "the night's crawls brought no page"
        if new_pages < floor:
            return (f"the new collection would hold {new_pages} pages, below the floor of {floor} "
                    f"({self.options.floor:.0%} of the current {old_pages})")
        return ""

    def _commit(self, collection: IndexedCollection) -> None:
        writer = collection.writer()
        writer.commit(self.analyzer)
        writer.close()

    async def _crawl(self, query: str, seeds: set[str], folder: Path, staging: Path) -> CrawlResult:
        """A best-first crawl of MAX_PAGES from *seeds*, indexed into the
        staging collection as it runs: the keys of the HTML pages fetched, in
        order, and how many fetches there were and failed."""
        folder.mkdir(parents=True, exist_ok=True)
        seeds_file = folder / "seeds.txt"
        seeds_file.write_text("".join(f"{url}\n" for url in sorted(seeds)), encoding="utf-8")
        settings = self.runner.settings.copy()
        settings.setdict({
            # MAX_PAGES counts pages for the collection (HTML, 2xx): dead links do not eat the
            # budget; a crawl that finds only errors still ends, after ERROR_GUARD × MAX_PAGES fetches.
            "CLOSESPIDER_ITEMCOUNT": ERROR_GUARD * self.max_pages, "FOCUS_INDEX_DIR": str(staging),
            "FOCUS_OUTPUT_DIR": str(folder / "crawl"), "FOCUS_STORE_PAGES": False,
            "FOCUS_IDF_INDEX": str(staging) if self.options.tfidf else "",
        }, priority="cmdline")
        spider = self.runner.spider_loader.load(self.options.spider)
        crawler = Crawler(spider, settings)
        result = CrawlResult()

        def collect(item: Any, **kwargs: Any) -> None:
            if not isinstance(item, PageItem):
                return
            status = item.get("status")
            result.fetches += 1
            result.failed += status is None or status >= 500  # a dead link (404) is the web as usual
            if status is not None and 200 <= status < 300 and is_html_content_type(item.get("content_type")):
                if item["canonical_url"] not in result.seen:
                    result.seen.add(item["canonical_url"])
                    result.pages.append(item["canonical_url"])
                if len(result.pages) == self.max_pages and crawler.engine is not None:
                    deferred_from_coro(crawler.engine.close_spider_async(reason="symbiosis_max_pages"))

        crawler.signals.connect(collect, signal=signals.item_scraped)
        # The loop runs as a Twisted coroutine (ensureDeferred): it awaits the Deferred itself.
        await self.runner.crawl(crawler, query=query, seeds=str(seeds_file))
        return result


@dataclass
class CrawlResult:
    pages: list[str] = field(default_factory=list)  #: HTML pages fetched (2xx), in order
    fetches: int = 0
    failed: int = 0  #: no answer, or a server error (5xx)
    seen: set[str] = field(default_factory=set, repr=False)


def capped(gathered: list[list[str]], most: int) -> list[str]:
    """The night's pages, at most *most*: each query's pages taken in turn,
    in the order its crawls fetched them (no query's crowds out the others').

    >>> capped([["a", "b", "c"], ["d"], ["a", "e"]], 4)
    ['a', 'd', 'b', 'e']
    """
    chosen: dict[str, None] = {}
    depth = 0
    while len(chosen) < most and any(depth < len(pages) for pages in gathered):
        for pages in gathered:
            if depth < len(pages) and len(chosen) < most:
                chosen.setdefault(pages[depth])
        depth += 1
    return list(chosen)
