"""``scrapy report CRAWL_DIR [-o FILE]``: the crawl's report, one HTML file
a person opens (crawlproject.corpus.crawl_report). A crawl writes it at its
end; this makes it again, for any crawl folder (a crawl killed, or made
before reports existed)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from scrapy.exceptions import UsageError

from crawlproject.commands._cli import ProjectCommand

if TYPE_CHECKING:
    import argparse


class Command(ProjectCommand):
    command_name = "report"
    requires_project = False
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012

    def syntax(self) -> str:
        return "CRAWL_DIR [-o FILE]"

    def short_desc(self) -> str:
        return "Write a crawl's report: one HTML file with its plots and tables"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("-o", "--output", default="", help="the HTML file (default: CRAWL_DIR/report.html)")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        from crawlproject.corpus.crawl_report import write_report

        if len(args) != 1:
            raise UsageError("name one crawl output folder")
        path = write_report(Path(args[0]), opts.output or None)
        print(f"Crawl report: {path}")
