"""``scrapy settings``: Scrapy's own command, with the project's add-ons
applied — Scrapy's builds no crawler, so it never shows what an add-on sets
(``scrapy settings --get FOCUS_FRONTIER_MAX`` would print ``None``)."""

from __future__ import annotations

import difflib
import sys
from typing import TYPE_CHECKING

from scrapy.commands.settings import Command as ScrapySettingsCommand

from crawlproject import config
from crawlproject.addon import applied

if TYPE_CHECKING:
    import argparse


class Command(ScrapySettingsCommand):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.settings is not None
        self.settings = applied(self.settings)
        for option in ("get", "getbool", "getint", "getfloat", "getlist"):
            name = getattr(opts, option, None)
            if isinstance(name, str) and name.startswith("FOCUS_") and name not in config.SETTINGS:
                close = difflib.get_close_matches(name, sorted(config.SETTINGS), n=1)
                hint = f"; did you mean {close[0]}?" if close else ""
                print(f"scrapy settings: error: unknown setting {name}{hint} (every FOCUS_* setting is in "
                      "docs/settings.md)", file=sys.stderr)
                self.exitcode = 2
                return
        super().run(args, opts)
