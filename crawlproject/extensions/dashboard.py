"""Extension: a crawl's live dashboard, Prometheus metrics and labels that
steer it, served on loopback by the crawl itself (``FOCUS_DASHBOARD_PORT``;
docs/dashboard.md).

* The dashboard and ``/metrics`` read one state (crawlproject.dashboard.watch),
  fed by the crawl's page items and sampled every second.
* A label (the page's buttons, or ``POST /api/labels``) must name a page this
  crawl fetched; it is kept (``JOBDIR/user-labels.tsv`` or the output
  folder's; a hash beside the shared frontier for a Redis crawl), applied to
  the strategy (the link learner revises its history and learns it again,
  and re-scores the page's siblings at once, the queue soon after), and
  polled, so a label given to another worker or by ``scrapy dashboard``
  reaches this one.
* At the end the crawl waits up to ``FOCUS_METRICS_LINGER`` seconds for one
  more scrape of ``/metrics``, so the last figures are not lost; with
  ``FOCUS_METRICS_TARGETS`` it writes (and at the end removes) a file_sd
  targets file Prometheus discovers the worker by.
"""

from __future__ import annotations

import json
import logging
import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.job import job_dir
from twisted.internet import defer, reactor, task, threads

from crawlproject import config
from crawlproject.config import SettingsError
from crawlproject.corpus.labels import LabelsError, is_relevant, load_labels, parse_categories
from crawlproject.dashboard.labels import FileLabels, RedisLabels
from crawlproject.dashboard.metrics import CrawlCollector
from crawlproject.dashboard.watch import CrawlWatch
from crawlproject.items import PageItem
from crawlproject.policy.netsafety import literal_address
from crawlproject.strategies.factory import focus_of
from crawlproject.strategies.ports import CrawlerFrontier
from crawlproject.web.urls import canonicalize

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)
SAMPLE_SECONDS = 1.0
POLL_SECONDS = 2.0
PUBLISH_SECONDS = 5.0


class CrawlDashboard:
    def __init__(self, crawler: Crawler, port: int, host: str, token: str, linger: float, targets: str, worker: str):
        self.crawler = crawler
        self.frontier = CrawlerFrontier(crawler)  # the queue's scores, for the histogram
        self.port, self.host, self.token = port, host, token
        self.linger = linger
        self.targets = Path(targets) if targets else None
        self.watch = CrawlWatch(worker, self._relevant_label(crawler))
        self.registry = CollectorRegistry()
        self.listening: Any = None
        self.url = ""
        self.store: FileLabels | RedisLabels | None = None
        self._loops: list[task.LoopingCall] = []
        self._scraped_after_close: defer.Deferred[None] | None = None
        self._polling = False
        self._redis: Any = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        port = config.get_int(settings, "FOCUS_DASHBOARD_PORT")
        if port == 0:
            raise NotConfigured
        host = config.get_str(settings, "FOCUS_DASHBOARD_HOST") or "127.0.0.1"
        token = config.get_str(settings, "FOCUS_DASHBOARD_TOKEN")
        address = literal_address(host)
        loopback = host == "localhost" or (address is not None and address.is_loopback)
        if not loopback and not token:
            raise SettingsError(
                f"FOCUS_DASHBOARD_HOST={host!r} is not loopback: anyone who reaches it could steer the crawl; "
                "set FOCUS_DASHBOARD_TOKEN too (the page and API then ask for it)"
            )
        if port > 0:
            _check_port_free(host, port)
        worker = config.get_str(settings, "FOCUS_WORKER_NAME") or f"{socket.gethostname()}-{os.getpid()}"
        extension = cls(
            crawler, max(port, 0), host, token, config.get_float(settings, "FOCUS_METRICS_LINGER"),
            config.get_str(settings, "FOCUS_METRICS_TARGETS"), worker,
        )
        crawler.signals.connect(extension.opened, signals.spider_opened)
        crawler.signals.connect(extension.closed, signals.spider_closed)
        crawler.signals.connect(extension.item_scraped, signals.item_scraped)
        return extension

    @staticmethod
    def _relevant_label(crawler: Crawler) -> Any:
        path = config.get_str(crawler.settings, "FOCUS_LABELS")
        if not path:
            return None
        try:
            labels = load_labels(path)
        except LabelsError:
            return None  # the progress extension says what is wrong with it
        relevant = parse_categories(config.get_str(crawler.settings, "FOCUS_RELEVANT"), set(labels.values()))
        return lambda url: is_relevant(labels.get(url), relevant)

    # -- life ---------------------------------------------------------------------

    def opened(self, spider: Spider) -> None:
        # here: aiohttp takes a third of a second to import, which a crawl without the dashboard never pays
        from crawlproject.dashboard.server import site

        self.store = self._label_store(spider)
        self.registry.register(CrawlCollector(lambda: [self.snapshot(full=False)], spider.name))
        listen: Any = reactor.listenTCP  # type: ignore[attr-defined]
        self.listening = listen(self.port, site(self, self.registry, self.token), interface=self.host)
        port = self.listening.getHost().port
        shown_host = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"http://{shown_host}:{port}/"
        logger.info("Dashboard: %s (metrics: %smetrics)", self.url, self.url)
        output = getattr(spider, "crawl_output", None)
        if output is not None:
            (output.path / "dashboard.json").write_text(json.dumps({"url": self.url, "worker": self.watch.worker}))
        if self.targets is not None:
            self.targets.mkdir(parents=True, exist_ok=True)
            labels = {"worker": self.watch.worker, "spider": spider.name}
            target = [{"targets": [f"{shown_host}:{port}"], "labels": labels}]
            self._target_file().write_text(json.dumps(target), encoding="utf-8")
        for function, interval in ((self.watch.sample, SAMPLE_SECONDS), (self._poll_labels, POLL_SECONDS),
                                   (self._publish, PUBLISH_SECONDS)):
            loop = task.LoopingCall(function)
            loop.start(interval, now=True)
            self._loops.append(loop)

    def _label_store(self, spider: Spider) -> FileLabels | RedisLabels:
        from scrapy.utils.misc import load_object

        from crawlproject.distributed.frontier import RedisFrontier

        settings = self.crawler.settings
        if issubclass(load_object(config.get_str(settings, "FOCUS_FRONTIER_BACKEND")), RedisFrontier):
            # the workers share the frontier: they share the user's labels, in the same Redis
            from crawlproject.distributed.connection import redis_from_settings, redis_key

            return RedisLabels(redis_from_settings(settings), redis_key(settings, spider.name))
        jobdir = job_dir(settings)
        output = getattr(spider, "crawl_output", None)
        folder = Path(jobdir) if jobdir else (output.path if output is not None else Path("."))
        return FileLabels(folder / "user-labels.tsv")

    def _target_file(self) -> Path:
        assert self.targets is not None
        return self.targets / f"{self.watch.worker}.json"

    def item_scraped(self, item: Any, spider: Spider) -> None:
        if isinstance(item, PageItem):
            self.watch.page(item)

    async def closed(self, spider: Spider, reason: str) -> None:
        for loop in self._loops:
            if loop.running:
                loop.stop()
        self.watch.finished = reason
        settled = self.crawler.stats.get_value("focus/verdicts/relevant") if self.crawler.stats is not None else None
        if settled is not None:  # the judge's final calls over the whole crawl: the crawl's one count
            self.watch.judged_relevant = settled
        self.watch.sample()
        self._publish()
        if self.linger > 0 and self.listening is not None:
            # The last figures wait for one more scrape (or the timeout).
            waiting: Any = defer.Deferred()
            self._scraped_after_close = waiting
            timeout: Any = reactor.callLater(self.linger, self._stop_lingering)  # type: ignore
            waiting.addBoth(lambda _: timeout.cancel() if timeout.active() else None)
            await maybe_deferred_to_future(waiting)
        stopped = self._stop()
        if stopped is not None:
            await maybe_deferred_to_future(stopped)

    def _stop_lingering(self) -> None:
        logger.info("No scrape of the final metrics within FOCUS_METRICS_LINGER=%s s", self.linger)
        if self._scraped_after_close is not None and not self._scraped_after_close.called:
            self._scraped_after_close.callback(None)

    def _stop(self) -> defer.Deferred[None] | None:
        if self.targets is not None and self._target_file().exists():
            self._target_file().unlink()
        if self.listening is not None:
            listening, self.listening = self.listening, None
            return listening.stopListening()  # type: ignore[no-any-return]
        return None

    # -- the backend of the server --------------------------------------------------

    def snapshot(self, full: bool = True) -> dict[str, Any]:
        """The crawl's state; not *full* (what /metrics exports, scraped every
        few seconds): without the queue's scores, what was learnt and the
        judge's questions, which cost most and are only shown on the page."""
        stats = self.crawler.stats.get_stats() if self.crawler.stats is not None else {}
        if not full:
            return self.watch.snapshot(stats, [], {})
        samples = [score for score, _ in self.frontier.sample(2000)]
        focus = focus_of(self.crawler)
        learning = focus.describe_learning() if focus is not None else {}
        state = self.watch.snapshot(stats, samples, learning)
        judge = self._describe_judge()
        state["judge"] = judge
        state["remaining"] = self._remaining()
        state["crawl"] = self.crawl_name(judge)
        return state

    def _describe_judge(self) -> dict[str, Any] | None:
        """The crawl's judge, its estimated precision and its questions
        (the pages not labelled yet whose labels would teach it most)."""
        focus = focus_of(self.crawler)
        if focus is None or focus.judge is None:
            return None
        described = focus.describe() or {}
        questions = [
            q for q in focus.questions(5 + len(self.watch.user_labels)) if q["url"] not in self.watch.user_labels
        ]
        return {**described, "questions": questions[:5]}

    def crawl_name(self, judge: dict[str, Any] | None) -> str:
        """What the page's title says: spider, strategy, judge and topic."""
        spider = self.crawler.spider
        focus = focus_of(self.crawler)
        strategy = getattr(spider, "strategy_label", None) or (focus.strategy.name if focus is not None else None)
        query = getattr(spider, "query", None)
        topic = getattr(spider, "topic_id", None) or (f"“{query}”" if query else None)
        parts = (getattr(spider, "name", None), strategy, judge and f"judge {judge.get('judge')}", topic)
        return " · ".join(str(part) for part in parts if part)

    def _remaining(self) -> dict[str, Any] | None:
        """The progress extension's latest estimate of what is left."""
        from crawlproject.extensions.progress import CrawlProgress

        extensions = getattr(self.crawler, "extensions", None)
        for extension in getattr(extensions, "middlewares", ()):
            if isinstance(extension, CrawlProgress) and extension.last_remaining is not None:
                return extension.last_remaining.as_dict() | {"from": extension.remaining_from}
        return None

    def add_label(self, url: str, relevant: bool) -> dict[str, Any]:
        key = canonicalize(url)
        if key not in self.watch.fetched_keys:
            raise ValueError(f"this crawl has not fetched {key} (answered 2xx): only its own pages can be labelled")
        assert self.store is not None
        effect = self._apply(key, relevant)
        # kept (a Redis round trip in a thread; a line appended to a local file at once)
        if isinstance(self.store, RedisLabels):
            threads.deferToThread(self.store.add, key, relevant).addErrback(
                lambda failure: logger.warning("Keeping the label of %s in Redis failed: %s", key, failure.value)
            )
        else:
            self.store.add(key, relevant)
        return effect

    def scraped(self) -> None:
        if self._scraped_after_close is not None and not self._scraped_after_close.called:
            self._scraped_after_close.callback(None)

    # -- labels from elsewhere -----------------------------------------------------

    def _apply(self, key: str, relevant: bool) -> dict[str, Any]:
        if self.watch.user_labels.get(key) == relevant:
            return {"learnt": False, "why": "already labelled so"}
        focus = focus_of(self.crawler)
        effect = (focus.label(key, relevant) if focus is not None else {}) or {"learnt": False}
        self.watch.labelled(key, relevant, effect)
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value("focus/dashboard/labels")
        return effect

    def _poll_labels(self) -> None:
        """Labels added by anyone since the last look (read in a thread)."""
        if self._polling or self.store is None:
            return
        self._polling = True
        store = self.store
        found = threads.deferToThread(lambda: list(store.new()))
        found.addCallback(lambda labels: [self._apply(key, relevant) for key, relevant in labels])
        found.addErrback(lambda failure: logger.warning("Reading the labels failed: %s", failure.value))
        found.addBoth(self._done_polling)

    def _done_polling(self, _: Any) -> None:
        self._polling = False

    def _publish(self) -> None:
        """A Redis worker's state, for ``scrapy dashboard --redis`` (in a thread)."""
        if not isinstance(self.store, RedisLabels):
            return
        state = json.dumps(self.snapshot())
        store, worker = self.store, self.watch.worker
        threads.deferToThread(store.client.hset, f"{store.key}:watch", worker, state).addErrback(
            lambda failure: logger.warning("Publishing the dashboard state failed: %s", failure.value)
        )


def _check_port_free(host: str, port: int) -> None:
    """Fail at start-up, in one line, when the dashboard's port is taken
    (Twisted would raise in the middle of opening the spider)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    probe = socket.socket(family, socket.SOCK_STREAM)
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Twisted's listenTCP
    try:
        probe.bind((host, port))
    except OSError as exc:
        raise SettingsError(
            f"FOCUS_DASHBOARD_PORT={port}: cannot listen on {host}:{port} ({exc.strerror}; another crawl's "
            "dashboard?): choose another port, or -1 for any free one"
        ) from None
    finally:
        probe.close()
