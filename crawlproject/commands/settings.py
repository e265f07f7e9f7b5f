"""``scrapy settings``: Scrapy's own command, with the project's add-ons
applied — Scrapy's builds no crawler, so it never shows what an add-on sets
(``scrapy settings --get FOCUS_FRONTIER_MAX`` would print ``None``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.commands.settings import Command as ScrapySettingsCommand

from crawlproject.addon import applied

if TYPE_CHECKING:
    import argparse


class Command(ScrapySettingsCommand):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.settings is not None
        self.settings = applied(self.settings)
        super().run(args, opts)
