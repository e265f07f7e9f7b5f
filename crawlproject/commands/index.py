"""``scrapy index CRAWL_DIR... --index DIR``: put finished crawls' page
repositories into a search index (created if DIR is new)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from scrapy.exceptions import UsageError

from crawlproject import config
from crawlproject.commands._cli import ProjectCommand

if TYPE_CHECKING:
    import argparse

    from crawlproject.web.text import TermAnalyzer


class Command(ProjectCommand):
    command_name = "index"
    requires_project = False
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012

    def syntax(self) -> str:
        return "CRAWL_DIR [CRAWL_DIR ...] --index DIR"

    def short_desc(self) -> str:
        return "Index finished crawls' pages (their page repositories) for the search engine"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--index", required=True, help="index folder (created if new)")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        from crawlproject.web.text import TermAnalyzer

        if not args:
            raise UsageError("name at least one crawl output folder to index")
        analyzer = TermAnalyzer(stem=config.get_bool(self.project_settings, "FOCUS_STEMMING"))
        window = config.get_int(self.project_settings, "FOCUS_INDEX_VOTE_WINDOW")
        every = config.get_int(self.project_settings, "FOCUS_INDEX_COMMIT_PAGES")
        from crawlproject.store_lock import lock_dir

        with lock_dir(opts.index, f"the index {opts.index!r}"):  # one writer: a night or another `index` waits
            self._index(opts.index, args, analyzer, window, every)

    @staticmethod
    def _index(index: str, args: list[str], analyzer: TermAnalyzer, window: int, every: int) -> None:
        from crawlproject.search.document import pages_from_crawl
        from crawlproject.search.engine import IndexHome

        collection = IndexHome(index).open_or_create()
        writer = collection.writer()
        started, added = time.monotonic(), 0
        try:
            for crawl in args:
                for page in pages_from_crawl(crawl, analyzer, window):
                    writer.add(page)
                    added += 1
                    if added % every == 0:
                        writer.commit(analyzer)
                        print(f"  {added} pages indexed ({added / (time.monotonic() - started):.0f}/s)", flush=True)
            writer.commit(analyzer)
        finally:
            writer.close()
        seconds = time.monotonic() - started
        print(f"Indexed {added} pages from {len(args)} crawl(s) in {seconds:.1f}s into {index}: "
              f"the collection holds {collection.page_count()} pages, {collection.size_bytes() / 1e6:.1f} MB")
        collection.close()
