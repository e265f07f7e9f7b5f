"""``scrapy replay --warc PATH [--port N] [--robots FILE] [--latency MS]``, or
``scrapy replay --synthetic PAGES --text-from CORPUS …`` for a generated web."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import UsageError

from crawlproject.commands._cli import ProjectCommand
from crawlproject.replay.__main__ import add_arguments, synthetic_options
from crawlproject.replay.process import serve_forever

if TYPE_CHECKING:
    import argparse


class Command(ProjectCommand):
    command_name = "replay"
    requires_project = False
    default_settings = {"LOG_ENABLED": True}  # noqa: RUF012

    def syntax(self) -> str:
        return (
            "--warc PATH | --synthetic PAGES --text-from CORPUS [--text-from CORPUS …] "
            "[--port N] [--robots FILE] [--latency MS] [--faults FILE] [--as-of TIME]"
        )

    def short_desc(self) -> str:
        return "Serve a WARC, or a generated web, on 127.0.0.1 as an HTTP proxy for offline crawls"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        add_arguments(parser)
        parser.add_argument(
            "--text-from",
            action="append",
            default=[],
            metavar="CORPUS",
            help="a corpus folder (WARC + labels.tsv) whose paragraphs the synthetic web's pages recombine "
            "(repeatable)",
        )
        parser.add_argument("--cache-dir", default=".cache", help="where the paragraph pool is kept")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        import logging

        from crawlproject.corpus.paragraphs import ParagraphsError, paragraph_file

        logging.getLogger("crawlproject.replay").setLevel(logging.INFO)
        if opts.synthetic and not opts.paragraphs:
            if not opts.text_from:
                raise UsageError("a synthetic web needs text: --text-from CORPUS (e.g. ../shared/corpora/webkb)")
            try:
                opts.paragraphs = str(paragraph_file(opts.text_from, opts.cache_dir))
            except ParagraphsError as exc:
                raise UsageError(str(exc)) from None
        self.exitcode = serve_forever(
            opts.warc, opts.port, opts.robots, opts.latency, opts.access_log, opts.faults, opts.as_of,
            synthetic_options(opts),
        )
