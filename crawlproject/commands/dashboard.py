"""``scrapy dashboard (--crawl FOLDER | --redis URL --key KEY) [--port 8766]``:
the dashboard and the Prometheus metrics of a crawl that runs elsewhere or
has finished, read back from its output folder or from the states the
workers of a Redis crawl publish; labels given here reach the running
crawl (docs/dashboard.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import UsageError

from crawlproject.commands._cli import ProjectCommand

if TYPE_CHECKING:
    import argparse


class Command(ProjectCommand):
    command_name = "dashboard"
    requires_project = False
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012

    def syntax(self) -> str:
        return "(--crawl FOLDER [--jobdir DIR] | --redis URL --key KEY) [--port 8766] [--bind 127.0.0.1]"

    def short_desc(self) -> str:
        return "Serve the dashboard and metrics of a crawl from its folder or its Redis"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--crawl", help="the crawl's output folder (FOCUS_OUTPUT_DIR)")
        parser.add_argument("--jobdir", help="the crawl's JOBDIR, where its labels are kept (default: the folder)")
        parser.add_argument(
            "--labels", help="a labels file (url<TAB>category): the evaluation's relevance, as FOCUS_LABELS"
        )
        parser.add_argument("--relevant", default="", help="relevant categories of --labels, as FOCUS_RELEVANT")
        parser.add_argument("--redis", help="the Redis of a distributed crawl (REDIS_URL)")
        parser.add_argument("--key", default="", help="its frontier's key (FOCUS_REDIS_KEY with the spider's name)")
        parser.add_argument("--spider", default="", help="the spider's name, for the metrics' spider label "
                            "(default: the crawl's own, from its folder; else the Redis key's)")
        parser.add_argument("--port", type=int, default=8766, help="0: any free port (printed)")
        parser.add_argument("--bind", default="127.0.0.1", help="address to listen on (loopback: no token needed)")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        from prometheus_client import CollectorRegistry
        from twisted.internet import reactor

        from crawlproject.dashboard.attach import FolderBackend, RedisBackend
        from crawlproject.dashboard.metrics import CrawlCollector
        from crawlproject.dashboard.server import site

        backend: Any
        registry = CollectorRegistry()
        if opts.crawl:
            folder = Path(opts.crawl)
            if not (folder / "crawl.json").is_file():
                raise ValueError(f"{folder} is not a crawl's output folder (no crawl.json)")
            relevant_label = None
            if opts.labels:
                from crawlproject.corpus.labels import is_relevant, load_labels, parse_categories

                labels = load_labels(opts.labels)
                relevant = parse_categories(opts.relevant, set(labels.values()))
                relevant_label = lambda url: is_relevant(labels.get(url), relevant)  # noqa: E731
            backend = FolderBackend(folder, Path(opts.jobdir or folder) / "user-labels.tsv", relevant_label)
            spider = opts.spider or str(
                json.loads((folder / "crawl.json").read_text(encoding="utf-8")).get("spider") or "crawl"
            )
            registry.register(CrawlCollector(lambda: [backend.snapshot()], spider))
        elif opts.redis and opts.key:
            import redis

            backend = RedisBackend(redis.Redis.from_url(opts.redis), opts.key)
            registry.register(CrawlCollector(backend.workers, opts.spider or opts.key.split(":")[0]))
        else:
            raise UsageError("give --crawl FOLDER, or --redis URL and --key KEY")
        listening: Any = reactor.listenTCP(opts.port, site(backend, registry), interface=opts.bind)  # type: ignore
        host = listening.getHost()
        print(f"Dashboard: http://{host.host}:{host.port}/  (metrics: /metrics; Ctrl-C stops)", flush=True)
        reactor.run()  # type: ignore[attr-defined,misc]
