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
        return ("--index DIR (--queries FILE | --from-log [--hours 24] [--per-night 100]) [--n-hits 25] [--max-iter 3] "
                "[--theta 0.8] [--max-index N] [--floor 0.5] [--tfidf] | --index DIR --rollback")

    def short_desc(self) -> str:
        return "Refocus an index's collection on its users' queries (search engine–crawler symbiosis)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--index", required=True, help="index folder whose collection is refocused")
        parser.add_argument("--queries", default="", help="representative queries, one per line")
        parser.add_argument("--from-log", action="store_true",
                            help="the queries `scrapy serve` answered (INDEX/queries.log) in the last --hours")
        parser.add_argument("--hours", type=float, default=24.0, help="with --from-log: the window (default 24)")
        parser.add_argument("--per-night", type=int, default=100,
                            help="with --from-log: the night's queries, drawn by how often they were asked")
        parser.add_argument("--seed", type=int, default=0, help="with --from-log: the draw's seed (default: the time)")
        parser.add_argument("--n-hits", type=int, default=25, help="top results used as seeds (N_HITS)")
        parser.add_argument("--max-iter", type=int, default=3, help="crawls per query at most (MAX_ITER)")
        parser.add_argument("--theta", type=float, default=0.8,
                            help="stop a query's crawls when two iterations' seeds overlap more (THETA)")
        parser.add_argument("--max-index", type=int, default=100_000,
                            help="the new collection's pages at most; MAX_PAGES per crawl = MAX_INDEX / queries")
        parser.add_argument("--floor", type=float, default=0.5,
                            help="keep the current collection if the new one would hold less than this share of it")
        parser.add_argument("--max-failed", type=float, default=0.5,
                            help="keep the current collection if more than this share of the night's fetches failed")
        parser.add_argument("--spider", default="bestfirst", help="the crawl's spider (a best-first one)")
        parser.add_argument("--tfidf", action="store_true", help="the crawler weighs terms by the index's IDF")
        parser.add_argument("--rollback", action="store_true",
                            help="make the collection current before the last night's current again, and stop")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        from scrapy.settings import SETTINGS_PRIORITIES

        from crawlproject.search.engine import IndexHome
        from crawlproject.search.symbiosis import SymbiosisOptions
        from crawlproject.store_lock import lock_dir

        home = IndexHome(opts.index)
        home.current()  # a missing index: one clear line, before any reactor
        with lock_dir(opts.index, f"the index {opts.index!r}"):  # two nights (or a night and `index`) kept apart
            if opts.rollback:
                print(f"The collection of {opts.index} is now {home.rollback()} again")
                return
            settings = self.project_settings
            if (settings.getpriority("LOG_LEVEL") or 0) < SETTINGS_PRIORITIES["cmdline"]:
                # The night prints its own progress; the crawls' INFO logs would bury it (-L INFO shows them).
                settings.set("LOG_LEVEL", "WARNING", priority="cmdline")
            options = SymbiosisOptions(opts.n_hits, opts.max_iter, opts.theta, opts.max_index, opts.spider,
                                       opts.tfidf, opts.floor, opts.max_failed)
            options.check()
            queries = self._queries(opts)
            self._run_night(settings, options, opts.index, queries)

    @staticmethod
    def _queries(opts: argparse.Namespace) -> list[str]:
        import random
        import time

        from scrapy.exceptions import UsageError

        from crawlproject.search.query_log import QueryLog, representative
        from crawlproject.search.symbiosis import read_queries

        if bool(opts.queries) == bool(opts.from_log):
            raise UsageError("give the night's queries: --queries FILE, or --from-log (what `scrapy serve` logged)")
        if opts.queries:
            return read_queries(opts.queries)
        log = QueryLog(opts.index)
        asked = log.recent(opts.hours)
        queries = representative(asked, opts.per_night, random.Random(opts.seed or time.time_ns()))
        if not queries:
            raise ValueError(f"{log.path} holds no query of the last {opts.hours:g} hours: the users asked nothing "
                             "(serve the index with `scrapy serve`), or give --queries FILE")
        print(f"{len(queries)} of the {len(asked)} queries asked in the last {opts.hours:g} hours ({log.path})")
        return queries

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
        served = sum(1 for run in result.queries if run.iterations)
        if not result.swapped:
            print(f"scrapy symbiosis: error: the night kept the current collection ({result.old_pages} pages): "
                  f"{result.kept_because}", file=sys.stderr)
            self.exitcode = 1
            return
        print(f"\nNight done in {result.seconds:.0f}s: {served} of {len(result.queries)} queries served; the "
              f"collection went from {result.old_pages} to {result.new_pages} pages ({result.collection})")

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

        # started once the reactor runs: a night that ends at once (a dead proxy, no hit)
        # stops a running reactor, not one that has yet to start and would then run forever
        reactor.callWhenRunning(lambda: defer.ensureDeferred(loop.run()).addBoth(done))
        reactor.run()
        return outcome.get("result")
