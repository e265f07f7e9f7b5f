"""``scrapy symbiosis --index DIR --queries FILE``: one night of docs/methods.md §4's
loop — the queries pick seeds from the index, best-first crawls refocus the
collection, and the new collection replaces the old one atomically."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from crawlproject import config
from crawlproject.commands._cli import ProjectCommand

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import Settings

    from crawlproject.search.symbiosis import SymbiosisOptions


class Command(ProjectCommand):
    command_name = "symbiosis"
    requires_project = True
    requires_crawler_process = False  # it runs many crawls, one after another, in one reactor

    def syntax(self) -> str:
        return "--index DIR --queries FILE [--n-hits 25] [--max-iter 3] [--theta 0.8] [--max-index N] [--tfidf]"

    def short_desc(self) -> str:
        return "Refocus an index's collection on its users' queries (search engine–crawler symbiosis)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--index", required=True, help="index folder whose collection is refocused")
        parser.add_argument("--queries", required=True, help="representative queries, one per line")
        parser.add_argument("--n-hits", type=int, default=25, help="top results used as seeds (N_HITS)")
        parser.add_argument("--max-iter", type=int, default=3, help="crawls per query at most (MAX_ITER)")
        parser.add_argument("--theta", type=float, default=0.8,
                            help="stop a query's crawls when two iterations' seeds overlap more (THETA)")
        parser.add_argument("--max-index", type=int, default=100_000,
                            help="collection budget; MAX_PAGES per crawl = MAX_INDEX / queries")
        parser.add_argument("--spider", default="bestfirst", help="the crawl's spider (a best-first one)")
        parser.add_argument("--tfidf", action="store_true", help="the crawler weighs terms by the index's IDF")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        from scrapy.settings import SETTINGS_PRIORITIES

        from crawlproject.search.engine import IndexHome
        from crawlproject.search.symbiosis import SymbiosisOptions, read_queries

        settings = self.project_settings
        if (settings.getpriority("LOG_LEVEL") or 0) < SETTINGS_PRIORITIES["cmdline"]:
            # The night prints its own progress; the crawls' INFO logs would bury it (-L INFO shows them).
            settings.set("LOG_LEVEL", "WARNING", priority="cmdline")
        options = SymbiosisOptions(opts.n_hits, opts.max_iter, opts.theta, opts.max_index, opts.spider, opts.tfidf)
        options.check()
        queries = read_queries(opts.queries)
        IndexHome(opts.index).current()  # a missing index: one clear line, before any reactor
        from crawlproject.store_lock import lock_dir

        lock = lock_dir(opts.index, f"the index {opts.index!r}")  # two nights (or a night and `index`) kept apart
        try:
            self._run_night(settings, options, opts.index, queries)
        finally:
            lock.release()

    def _run_night(self, settings: Settings, options: SymbiosisOptions, index: str, queries: list[str]) -> None:
        from twisted.python.failure import Failure

        from crawlproject.middlewares.replay import replay_for
        from crawlproject.search.symbiosis import NightReport

        replay = None if config.get_str(settings, "FOCUS_REPLAY_PROXY") else replay_for(settings)
        if replay is not None:  # the night's crawls share it (each would start its own, 2 s apiece)
            print(f"Replaying {config.get_str(settings, 'FOCUS_REPLAY_WARC')} through {replay.proxy_url} "
                  "for the night's crawls")
            settings.set("FOCUS_REPLAY_WARC", "", priority="cmdline")
            settings.set("FOCUS_REPLAY_PROXY", replay.proxy_url, priority="cmdline")
        try:
            result = self._night(settings, options, index, queries)
        finally:
            if replay is not None:
                replay.stop()
        if isinstance(result, Failure):
            if isinstance(result.value, ValueError | OSError):
                raise result.value
            result.printTraceback(file=sys.stderr)
            self.exitcode = 1
            return
        assert isinstance(result, NightReport)
        print(f"\nNight done in {result.seconds:.0f}s: the collection went from {result.old_pages} to "
              f"{result.new_pages} pages ({result.collection})")

    @staticmethod
    def _night(settings: Settings, options: SymbiosisOptions, index: str, queries: list[str]) -> object:
        """The night's loop on this process's reactor: its report, or the Failure that ended it."""
        from scrapy.crawler import CrawlerRunner
        from scrapy.utils.log import configure_logging
        from scrapy.utils.reactor import install_reactor
        from twisted.internet import defer

        from crawlproject.search.engine import parse_weights
        from crawlproject.search.symbiosis import Symbiosis
        from crawlproject.web.text import TermAnalyzer

        install_reactor(settings["TWISTED_REACTOR"])
        configure_logging(settings)
        from twisted.internet import reactor as installed

        reactor: Any = installed
        loop = Symbiosis(
            CrawlerRunner(settings), index, queries, options,
            TermAnalyzer(stem=config.get_bool(settings, "FOCUS_STEMMING")),
            parse_weights(config.get_str(settings, "FOCUS_SEARCH_WEIGHTS")),
        )
        outcome: dict[str, object] = {}

        def done(result: object) -> None:
            outcome["result"] = result
            reactor.stop()

        defer.ensureDeferred(loop.run()).addBoth(done)
        reactor.run()
        return outcome.get("result")
