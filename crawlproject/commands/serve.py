"""``scrapy serve --index DIR [--port 8080]``: the search page and its JSON
API for an index folder, on loopback unless told otherwise."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawlproject import config
from crawlproject.commands._cli import ProjectCommand

if TYPE_CHECKING:
    import argparse


class Command(ProjectCommand):
    command_name = "serve"
    requires_project = False
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012

    def syntax(self) -> str:
        return "--index DIR [--port 8080] [--bind 127.0.0.1]"

    def short_desc(self) -> str:
        return "Serve the search page and JSON API of an index"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--index", required=True, help="index folder")
        parser.add_argument("--port", type=int, default=8080, help="0: any free port (printed)")
        parser.add_argument("--bind", default="127.0.0.1", help="address to listen on")
        parser.add_argument(
            "--no-query-log",
            action="store_true",
            help="do not log the queries answered (INDEX/queries.log, what `scrapy symbiosis --from-log` reads)",
        )

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        from twisted.internet import reactor

        from crawlproject.search.engine import SearchEngine, parse_weights
        from crawlproject.search.query_log import QueryLog
        from crawlproject.search.server import site

        engine = SearchEngine(opts.index, parse_weights(config.get_str(self.project_settings, "FOCUS_SEARCH_WEIGHTS")),
                              stem=config.get_bool(self.project_settings, "FOCUS_STEMMING"))
        log = None if opts.no_query_log else QueryLog(opts.index)
        port: Any = reactor.listenTCP(opts.port, site(engine, log), interface=opts.bind)  # type: ignore[arg-type]
        host = port.getHost()
        print(f"Search page: http://{host.host}:{host.port}/  ({engine.page_count()} pages; "
              f"JSON: /api/search?q=…, /api/backlinks?url=…, /api/status; Ctrl-C stops)"
              + (f"; queries logged in {log.path}" if log is not None else ""), flush=True)
        reactor.run()  # type: ignore[misc]
