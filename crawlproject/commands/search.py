"""``scrapy search --index DIR "query"``: ranked pages with title, URL,
snippet and the votes that matched; ``--backlinks URL`` lists the pages of
the collection that link to a page."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from crawlproject import config
from crawlproject.commands._cli import ProjectCommand

if TYPE_CHECKING:
    import argparse


class Command(ProjectCommand):
    command_name = "search"
    requires_project = False
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012

    def syntax(self) -> str:
        return '--index DIR "query" [-n 10] [--page N] [--json] | --index DIR --backlinks URL'

    def short_desc(self) -> str:
        return "Search an index of crawled pages"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--index", required=True, help="index folder (scrapy index, or a crawl's FOCUS_INDEX_DIR)")
        parser.add_argument("-n", type=int, default=10, help="results per page")
        parser.add_argument("--page", type=int, default=1, help="which page of results")
        parser.add_argument("--json", action="store_true", help="print the results as JSON")
        parser.add_argument("--backlinks", metavar="URL", help="the pages linking to URL")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        from crawlproject.search.engine import SearchEngine, parse_weights
        from crawlproject.web.urls import canonicalize

        if opts.n < 1 or opts.page < 1:
            raise ValueError("-n and --page must be at least 1")
        engine = SearchEngine(opts.index, parse_weights(config.get_str(self.project_settings, "FOCUS_SEARCH_WEIGHTS")),
                              stem=config.get_bool(self.project_settings, "FOCUS_STEMMING"))
        if opts.backlinks:
            sources = engine.backlinks(canonicalize(opts.backlinks))
            print(json.dumps(sources, indent=1) if opts.json else "\n".join(sources) or "(no page links to it)")
            return
        query = " ".join(args)
        results = engine.search(query, limit=opts.n, offset=(opts.page - 1) * opts.n)
        if opts.json:
            print(json.dumps({"query": query, "terms": results.terms, "total": results.total,
                              "results": [hit.as_json() for hit in results.hits]}, indent=1, ensure_ascii=False))
            return
        first = results.offset + 1
        print(f"{results.total} pages match {query!r} (terms: {', '.join(results.terms)}); "
              f"{first}–{results.offset + len(results.hits)}:" if results.hits else f"no page matches {query!r}")
        for rank, hit in enumerate(results.hits, first):
            votes = ", ".join(f"{term} ×{count}" for term, count in hit.votes.items())
            print(f"\n{rank:>3}. {hit.title or '(no title)'}\n     {hit.url}\n     {hit.snippet_text(('[', ']'))}")
            print(
                f"     score {hit.score:.3f}; {hit.referrers} referring pages" + (f"; votes {votes}" if votes else "")
            )
