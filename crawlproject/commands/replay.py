"""``scrapy replay --warc PATH [--port N] [--robots FILE] [--latency MS]``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawlproject.commands._cli import ProjectCommand
from crawlproject.replay.__main__ import add_arguments
from crawlproject.replay.process import serve_forever

if TYPE_CHECKING:
    import argparse


class Command(ProjectCommand):
    command_name = "replay"
    requires_project = False
    default_settings = {"LOG_ENABLED": True}  # noqa: RUF012

    def syntax(self) -> str:
        return "--warc PATH [--port N] [--robots FILE] [--latency MS] [--faults FILE] [--as-of TIME]"

    def short_desc(self) -> str:
        return "Serve a WARC on 127.0.0.1 as an HTTP proxy for offline crawls"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        add_arguments(parser)

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        import logging

        logging.getLogger("crawlproject.replay").setLevel(logging.INFO)
        self.exitcode = serve_forever(
            opts.warc, opts.port, opts.robots, opts.latency, opts.access_log, opts.faults, opts.as_of
        )
