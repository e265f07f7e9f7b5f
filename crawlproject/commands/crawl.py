"""``scrapy crawl``: Scrapy's own command, with start-up errors said in one
line.

A bad setting or argument (``FOCUS_FRONTIER_MAX=lots``, ``-a qurey=x``, a
seed that is not http) stops the crawl before it starts. Scrapy would print
"Task exception was never retrieved" and a traceback ending in "Engine
slot not assigned"; this prints ``scrapy crawl: error: <what is wrong and
what is allowed>`` and exits with code 2. A crawl that sent requests and got
not one answer (seeds on hosts that do not exist), or whose shared frontier
was wiped under it (crawlproject.distributed.frontier), exits with code 1 and
says so. Any other failure keeps Scrapy's behaviour.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError

from crawlproject.config import SettingsError
from crawlproject.config_check import missing_addon
from crawlproject.frontier.journal import JournalError
from crawlproject.policy.netsafety import NETWORK_PROBLEMS

if TYPE_CHECKING:
    import argparse
    import asyncio

_STARTUP_ERRORS = (SettingsError, JournalError)


class Command(ScrapyCrawlCommand):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("name one spider: scrapy crawl SPIDER" if not args else
                             "running 'scrapy crawl' with more than one spider is not supported")
        assert self.crawler_process is not None
        self._startup_error: BaseException | None = None
        try:
            crawler = self._create_crawler(args[0])
        except KeyError:
            print(f"scrapy crawl: error: {unknown_spider(args[0], self.crawler_process.spider_loader.list())}",
                  file=sys.stderr)
            self.exitcode = 2
            return
        if (missing := missing_addon(crawler.settings)) is not None:
            print(f"scrapy crawl: error: {missing}", file=sys.stderr)
            self.exitcode = 2
            return
        crawling: Any = self.crawler_process.crawl(crawler, **opts.spargs)
        if hasattr(crawling, "add_done_callback"):
            crawling.add_done_callback(self._retrieve)
        else:  # a Deferred (Twisted's CrawlerProcess)
            crawling.addErrback(self._retrieve_failure)
        self.crawler_process.start()
        if self._startup_error is not None:
            print(f"scrapy crawl: error: {self._startup_error}", file=sys.stderr)
            self.exitcode = 2
        elif self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        elif (failed := crawl_failure(crawler)) is not None:
            print(f"scrapy crawl: error: {failed}", file=sys.stderr)
            self.exitcode = 1

    def _retrieve(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        error = task.exception()  # retrieved: asyncio does not complain of it
        if error is not None:
            self._note(error)

    def _retrieve_failure(self, failure: object) -> None:
        self._note(failure.value)  # type: ignore[attr-defined]

    def _note(self, error: BaseException) -> None:
        """Keep a start-up error to say in one line; anything else as Scrapy would."""
        cause = startup_cause(error)
        if cause is not None:
            self._startup_error = cause
            return
        import logging

        logging.getLogger(__name__).error("The crawl failed", exc_info=error)


def _stat(crawler: Any, name: str) -> Any:
    stats = getattr(crawler, "stats", None)
    return stats.get_value(name) if stats is not None else None


def crawl_failure(crawler: Any) -> str | None:
    """Why a crawl that ran is no success, in one line: it fetched nothing
    (every URL refused for the network it is on, or no request answered), its
    shared frontier was wiped under it, or a component of ours failed on
    page after page (``focus/component_failed``). None for a crawl that went well.
    The crawl command and crawlproject.crawl() say it."""
    if (refused := refused_networks(crawler)) is not None:
        return (f"no page was fetched: {refused} (FOCUS_ALLOWED_NETWORKS opens network ranges, "
                "e.g. FOCUS_ALLOWED_NETWORKS=127.0.0.0/8)")
    if (lost := _stat(crawler, "frontier/lost")) is not None:
        return str(lost)
    if (broken := _stat(crawler, "focus/component_failed")) is not None:
        return str(broken)
    if (asked := unanswered_requests(crawler)) is not None:
        return (f"no page was fetched: none of the {asked} requests sent was answered "
                "(do the seeds' hosts exist? the log says why each failed)")
    return None


def refused_networks(crawler: Any) -> str | None:
    """What the network policy refused, when the crawl fetched nothing and
    refused URLs for the address they reach (a plain spider's start URL on
    127.0.0.1: stock Scrapy would have fetched it). None otherwise."""
    stats = crawler.stats.get_stats() if getattr(crawler, "stats", None) is not None else {}
    if stats.get("response_received_count", 0) - stats.get("robotstxt/response_count", 0) > 0:
        return None
    refused = {problem: stats.get(f"focus/url_refused/{problem}", 0) + stats.get(f"focus/refused/{problem}", 0)
               for problem in NETWORK_PROBLEMS}
    said = ", ".join(f"{count} URL{'s' if count > 1 else ''} refused ({problem} address)"
                     for problem, count in sorted(refused.items()) if count)
    return said or None


def unanswered_requests(crawler: Any) -> int | None:
    """How many requests the crawl sent when not one was answered (robots.txt
    aside): a crawl of seeds that all fail is not a success. None otherwise."""
    stats = crawler.stats.get_stats() if getattr(crawler, "stats", None) is not None else {}
    sent = stats.get("scheduler/dequeued", 0)
    answered = stats.get("response_received_count", 0) - stats.get("robotstxt/response_count", 0)
    return int(sent) if sent > 0 and answered <= 0 else None


def startup_cause(error: BaseException | None) -> BaseException | None:
    """A configuration error in *error* or what it was raised during (Scrapy
    masks it with 'Engine slot not assigned' while cleaning up)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, _STARTUP_ERRORS):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def unknown_spider(name: str, known: list[str]) -> str:
    """What to say of a spider name the project does not have.

    >>> unknown_spider("bestfrist", ["bestfirst", "breadthfirst"])
    "no spider named 'bestfrist': did you mean 'bestfirst'? The project's spiders: bestfirst, breadthfirst (scrapy list)"
    """  # noqa: E501 (a doctest's output line)
    import difflib

    close = difflib.get_close_matches(name, known, n=1)
    hint = f": did you mean {close[0]!r}?" if close else "."
    return f"no spider named {name!r}{hint} The project's spiders: {', '.join(sorted(known))} (scrapy list)"
