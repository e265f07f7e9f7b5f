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

MAX_PAGES = MAX_INDEX / |queries|. Each night leaves ``DIR/nights/<time>/``:
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

    def check(self) -> None:
        if self.n_hits < 1 or self.max_iter < 1 or self.max_index < 1:
            raise ValueError("--n-hits, --max-iter and --max-index must be at least 1")
        if not 0 <= self.theta <= 1:
            raise ValueError(f"--theta must be between 0 and 1, got {self.theta}")


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


@dataclass
class NightReport:
    queries: list[QueryRun]
    old_pages: int
    new_pages: int
    max_pages_per_crawl: int
    seconds: float
    collection: str


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
        copy_pages(current, staging, current.keys())
        current.close()
        self._commit(staging)
        night = self.home.folder / "nights" / time.strftime("%Y%m%dT%H%M%S")
        work = night / "crawls"
        engine = SearchEngine(staging.folder, self.weights, stem=self.analyzer.stem)
        new_collection: set[str] = set()
        runs = []
        self.say(f"Night of {len(self.queries)} queries on {old_pages} pages: up to {self.options.max_iter} "
                 f"crawls of {self.max_pages} pages per query")
        for number, query in enumerate(self.queries, 1):
            run = QueryRun(query)
            runs.append(run)
            old_seeds: set[str] | None = None
            seeds: set[str] = set()
            for iteration in range(1, self.options.max_iter + 1):
                if old_seeds is not None and overlap(old_seeds, seeds) > self.options.theta:
                    break
                old_seeds = seeds
                engine.collection.reload()
                try:
                    hits = engine.search(query, limit=self.options.n_hits).hits
                except QueryError as exc:
                    run.skipped = str(exc)
                    self.say(f"query {number}/{len(self.queries)} {query!r}: skipped ({exc})")
                    break
                seeds = {hit.url for hit in hits} | {source for hit in hits for source in engine.backlinks(hit.key)}
                if not seeds:
                    run.skipped = run.skipped or "no page of the collection matches it"
                    self.say(f"query {number}/{len(self.queries)} {query!r}: no hit, nothing to crawl from")
                    break
                fetched = await self._crawl(query, seeds, work / f"q{number:03d}-{iteration}", staging.folder)
                new_collection |= fetched
                share = overlap(old_seeds, seeds) if old_seeds else None
                run.iterations.append(Iteration(len(seeds), share, len(fetched)))
                self.say(
                    f"query {number}/{len(self.queries)} {query!r} · iteration {iteration}/{self.options.max_iter}: "
                    f"{len(seeds)} seeds" + (f" (overlap {share:.0%})" if share is not None else "")
                    + f", {len(fetched)} pages · new collection {len(new_collection)} pages"
                )
        engine.collection.close()
        final = self.home.new_collection()
        copy_pages(staging, final, new_collection)
        self._commit(final)
        new_pages = final.page_count()
        final.close()
        self.home.swap(final.folder)  # users now search the new collection
        shutil.rmtree(staging.folder, ignore_errors=True)
        report = NightReport(runs, old_pages, new_pages, self.max_pages, time.monotonic() - started, str(final.folder))
        night.mkdir(parents=True, exist_ok=True)
        (night / "report.json").write_text(json.dumps(asdict(report), indent=1), encoding="utf-8")
        return report

    def _commit(self, collection: IndexedCollection) -> None:
        writer = collection.writer()
        writer.commit(self.analyzer)
        writer.close()

    async def _crawl(self, query: str, seeds: set[str], folder: Path, staging: Path) -> set[str]:
        """A best-first crawl of MAX_PAGES from *seeds*, indexed into the
        staging collection as it runs; the keys of the HTML pages fetched."""
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
        fetched: set[str] = set()

        def collect(item: Any, **kwargs: Any) -> None:
            status = item.get("status") if isinstance(item, PageItem) else None
            if status is not None and 200 <= status < 300 and is_html_content_type(item.get("content_type")):
                fetched.add(item["canonical_url"])
                if len(fetched) == self.max_pages and crawler.engine is not None:
                    deferred_from_coro(crawler.engine.close_spider_async(reason="symbiosis_max_pages"))

        crawler.signals.connect(collect, signal=signals.item_scraped)
        # The loop runs as a Twisted coroutine (ensureDeferred): it awaits the Deferred itself.
        await self.runner.crawl(crawler, query=query, seeds=str(seeds_file))
        return fetched
