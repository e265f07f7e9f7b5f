"""Progress while a crawl runs, and a summary when it ends.

A progress line comes every ``LOGSTATS_INTERVAL`` seconds (Scrapy's setting;
this line replaces Scrapy's own LogStats line) and, when the crawl has a
page budget (``CLOSESPIDER_PAGECOUNT`` / ``CLOSESPIDER_ITEMCOUNT``), every
tenth of it too, so a short crawl shows its progress as well — but never the
timer's and a tenth's within a second (or half the interval) of each other:

    Progress: 150/500 pages (30%), 41.2 pages/s, 98 ok, harvest 12.2% (12/98),
    frontier 1,204, last score 0.312

Two relevance signals can appear: labels (``FOCUS_LABELS`` plus
``FOCUS_RELEVANT`` categories: the true harvest rate, for evaluation) and the
strategy's own estimate of each page's relevance (its mean).

How much of the topic is left (crawlproject.models.remaining): for a
spider with a strategy, the relevant pages behind the queued links, with an
interval, and the relevant pages a fetch is expected to bring now — in the
progress line (``left ≈ 41 (30–53)``), the summary (``remaining``, and its
history every ``REMAINING_EVERY`` fetches) and the dashboard. Its verdicts
are the judge's (``FOCUS_REMAINING_FROM = judge``) or, in an evaluation,
the labels' (``labels``). With ``FOCUS_STOP_BELOW`` > 0 the crawl stops
(reason ``relevant_rate_below``) once a fetch is expected to bring fewer
relevant pages than that.

At the end the summary is logged and, for our spiders, written to
``summary.json`` in the crawl's output folder. A spider of any other kind
(a plain ``scrapy.Spider`` under the add-on: the frontier serves its
requests by priority, first in first out) yields no page items: its pages
are counted from the responses it got.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from scrapy import signals
from twisted.internet import task

from crawlproject import config
from crawlproject import signals as focus_signals
from crawlproject.config import SettingsError
from crawlproject.corpus.labels import LabelsError, is_relevant, load_labels, parse_categories
from crawlproject.corpus.output import CrawlOutput
from crawlproject.extensions.summary import crawl_summary
from crawlproject.frontier.budget import page_limits
from crawlproject.items import PageItem
from crawlproject.models.remaining import Remaining, RemainingEstimator
from crawlproject.strategies.factory import focus_of
from crawlproject.strategies.ports import CrawlerFrontier
from crawlproject.web import meta as keys

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler


logger = logging.getLogger(__name__)


_STEPS = 10  # progress lines per page budget
REMAINING_EVERY = 50  # fetches between two estimates of what is left
#: summary fields written to summary.json but not logged
QUIET_FIELDS = frozenset({"remaining_history"})
STOP_AFTER = 100  # fetches before the stop rule may end a crawl


class CrawlProgress:
    def __init__(
        self,
        crawler: Crawler,
        interval: float,
        labels: dict[str, str] | None,
        relevant: tuple[str, ...],
        budget: int = 0,
        remaining_from: str = "judge",
        stop_below: float = 0.0,
    ):
        self.crawler = crawler
        self.frontier = CrawlerFrontier(crawler)  # the queue's scores, for the estimate of what is left
        self.interval = interval
        self.labels = labels
        self.relevant = relevant
        self.budget = budget
        self.step = max(1, budget // _STEPS) if budget else 0
        self._steps_logged = 0
        #: the line counts against an ok-page budget (FOCUS_OK_PAGECOUNT alone): pages answered 2xx
        self.counts_ok_pages = False
        self.fetched = 0
        self.status_counts: Counter[str] = Counter()
        self.ok_pages = 0
        self.relevant_pages = 0
        self.relevance_sum = 0.0
        self.relevance_count = 0
        self.called_relevant = 0  # pages the judge called relevant (the items' `relevant`)
        #: with labels: each judged page's relevance, its call and its label, for the
        #: precision of the judge's final calls by the labels
        self.labelled_verdicts: dict[str, tuple[float, bool, bool]] = {}
        self.started = time.monotonic()
        self._loop: task.LoopingCall | None = None
        #: Pages counted from responses, for spiders that yield no PageItem.
        self.responses: Counter[str] = Counter()
        self.remaining = RemainingEstimator()
        self.remaining_from = remaining_from
        self.stop_below = stop_below
        self.remaining_history: list[dict[str, float | int]] = []
        self.last_remaining: Remaining | None = None
        #: the queue's scores the last estimate sampled (the scheduler cannot be read once the crawl closes)
        self._queue_sample: list[tuple[float, str]] = []
        self.report = False  # write report.html at the end (FOCUS_REPORT)
        #: the timer's line and a budget step's never both at once: neither
        #: comes this soon after the other's (steps among themselves all come)
        self.min_gap = min(1.0, interval / 2) if interval > 0 else 1.0
        self._last_line = self._last_timer_line = -math.inf

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        interval = settings.getfloat("LOGSTATS_INTERVAL")
        labels_path = config.get_str(settings, "FOCUS_LABELS")
        labels = None
        if labels_path:
            try:
                labels = load_labels(labels_path)
            except LabelsError as exc:
                raise SettingsError(f"FOCUS_LABELS: {exc}") from None
        relevant = parse_categories(config.get_str(settings, "FOCUS_RELEVANT"), set((labels or {}).values()))
        if labels_path and not relevant:
            raise SettingsError(
                "FOCUS_LABELS is set but FOCUS_RELEVANT names no category: "
                "set it to the relevant category paths, e.g. FOCUS_RELEVANT=course"
            )
        if labels is not None:
            _check_categories(relevant, labels, labels_path)
        pages, ok_pages = page_limits(settings)
        budget = max(pages, ok_pages, settings.getint("CLOSESPIDER_ITEMCOUNT"))
        remaining_from = config.get_str(settings, "FOCUS_REMAINING_FROM")
        if remaining_from == "labels" and labels is None:
            raise SettingsError("FOCUS_REMAINING_FROM = labels needs FOCUS_LABELS and FOCUS_RELEVANT")
        extension = cls(crawler, interval, labels, relevant, budget, remaining_from,
                        config.get_float(settings, "FOCUS_STOP_BELOW"))
        extension.report = config.get_bool(settings, "FOCUS_REPORT")
        extension.counts_ok_pages = not pages and ok_pages > 0 and ok_pages == budget
        crawler.signals.connect(extension.spider_opened, signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signals.spider_closed)
        crawler.signals.connect(extension.item_scraped, signals.item_scraped)
        crawler.signals.connect(extension.response_received, signals.response_received)
        crawler.signals.connect(extension.page_judged, focus_signals.page_judged)
        return extension

    def page_judged(self, links: Sequence[str] = ()) -> None:
        """A page's links, for the pages no link names yet (crawlproject.models.unseen)."""
        self.remaining.unseen.links(links)

    def spider_opened(self, spider: Spider) -> None:
        self.started = time.monotonic()
        if self.interval > 0:
            self._loop = task.LoopingCall(self.log_timer_line)
            self._loop.start(self.interval, now=False)

    def response_received(self, response: Any, request: Any, spider: Spider) -> None:
        if not request.meta.get(keys.ROBOTSTXT):
            self.responses[str(response.status)] += 1

    def item_scraped(self, item: Any, spider: Spider) -> None:
        if not isinstance(item, PageItem):
            return
        self.fetched += 1
        status = item.get("status")
        self.status_counts[str(status) if status is not None else "failed"] += 1
        if status == 200:
            self.ok_pages += 1
        if status == 200 and not item.get("near_duplicate_of"):  # a copy of a page fetched before brings nothing new
            labelled = False
            if self.labels is not None:
                labelled = is_relevant(self.labels.get(item.get("canonical_url", "")), self.relevant)
                self.relevant_pages += labelled
            relevance = item.get("relevance")
            if relevance is not None:
                self.relevance_sum += relevance
                self.relevance_count += 1
                if self.labels is not None and isinstance(item.get("relevant"), bool):
                    self.labelled_verdicts[item.get("canonical_url", "")] = (relevance, item["relevant"], labelled)
            self.called_relevant += item.get("relevant") is True
        self._observe_remaining(item, spider)
        done = self.done
        if self.step and done // self.step > self._steps_logged and done < self.budget:
            self._steps_logged = done // self.step
            self.log_step_line()

    @property
    def done(self) -> int:
        """What the line counts, as the crawl's page budget counts (pages
        answered 2xx for an ok-page budget), from the pages processed so far
        (so that its figures agree with one another)."""
        return self.ok_pages if self.counts_ok_pages else self.fetched

    def _observe_remaining(self, item: PageItem, spider: Spider) -> None:
        """The fetch for the estimate of what is left; every so many, a new
        estimate (kept in the history) and the stop rule."""
        focus = focus_of(self.crawler)
        if focus is None:
            return  # a plain spider: no scores, no topic
        if self.remaining_from == "judge" and focus.judge is None:
            return  # breadth-first, the oracles, …: no verdicts to estimate from (a "left: unknown" forever)
        relevant, page = 0.0, ""
        if item.get("status") == 200 and not item.get("near_duplicate_of"):
            page = item.get("canonical_url", "")
            if self.remaining_from == "labels":
                assert self.labels is not None
                relevant = float(is_relevant(self.labels.get(item.get("canonical_url", "")), self.relevant))
            else:
                relevance = item.get("relevance")  # the judge's verdict: a crawl without a judge returned above
                relevant = focus.expected_relevant(relevance) if relevance is not None else 0.0
        self.remaining.observe(item.get("score"), relevant, item.get("parent_url"), page)
        every = REMAINING_EVERY if self.fetched <= 1000 else 10 * REMAINING_EVERY  # a long crawl: less often
        if self.fetched % every == 0:
            found = self.estimate_remaining()
            if found is not None and self.stop_below > 0 and self.fetched >= STOP_AFTER \
                    and found.rate_now < self.stop_below and not self._stopping:
                self._stopping = True
                logger.info("Stopping: a fetch is expected to bring %.4f relevant pages now, below "
                            "FOCUS_STOP_BELOW = %g (%s)", found.rate_now, self.stop_below, found)
                assert self.crawler.engine is not None
                self.crawler.engine.close_spider(spider, "relevant_rate_below")

    _stopping = False

    def estimate_remaining(self) -> Remaining | None:
        """A new estimate of what is left, from a sample of the queue's scores."""
        stats = self.crawler.stats
        assert stats is not None
        queued = stats.get_value("frontier/queued")
        if queued is None or not self.remaining.fetches:
            return None
        sample = self.frontier.sample(1000)
        if not sample and queued:  # the scheduler has closed (the crawl's end): the queue's last sample stands for it
            sample = self._queue_sample
        self._queue_sample = sample
        found = self.remaining.estimate(sample, int(queued), self.frontier.in_flight())
        self.last_remaining = found
        self.remaining_history.append(found.as_dict())
        return found

    def summary(self) -> dict[str, Any]:
        return crawl_summary(self)

    def log_timer_line(self) -> None:
        """The LOGSTATS_INTERVAL line, unless a budget step's just went out."""
        if time.monotonic() - self._last_line < self.min_gap:
            return
        self.log_progress()
        self._last_timer_line = self._last_line

    def log_step_line(self) -> None:
        """A tenth of the budget's line, unless the timer's just went out."""
        if time.monotonic() - self._last_timer_line < self.min_gap:
            return
        self.log_progress()

    def log_progress(self) -> None:
        now = self._last_line = time.monotonic()
        elapsed = max(now - self.started, 1e-9)
        count = self.done
        done = f"{count}/{self.budget} pages ({count / self.budget:.0%})" if self.budget else f"{count} pages"
        parts = [done, f"{self.fetched / elapsed:.1f} pages/s", f"{self.ok_pages} ok"]
        if self.labels is not None and self.ok_pages:
            parts.append(
                f"harvest {self.relevant_pages / self.ok_pages:.1%} ({self.relevant_pages}/{self.ok_pages})"
            )
        if self.relevance_count:
            parts.append(f"mean relevance {self.relevance_sum / self.relevance_count:.3f}")
        stats = self.crawler.stats
        assert stats is not None
        queued = stats.get_value("frontier/queued")
        if queued is not None:
            parts.append(f"frontier {queued:,}")
        if self.last_remaining is not None:
            left = self.last_remaining
            if left.found > 0:
                parts.append(f"left ≈ {left.expected:.0f} ({left.low:.0f}–{left.high:.0f}) in the queue, "
                             f"up to {left.high_all:.0f} in all, {left.rate_now:.3f}/fetch")
            else:  # nothing to learn from: not "0 left"
                parts.append(f"left: unknown (no page relevant by the {self.remaining_from} yet)")
        last_score = stats.get_value("frontier/last_score")
        if last_score is not None:
            parts.append(f"last score {last_score:.3g}")
        logger.info("Progress: %s", ", ".join(parts))

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self.log_progress()  # the last figures, whatever the timer and the budget's tenths last showed
        summary = self.summary()
        summary["finish_reason"] = reason
        stats = self.crawler.stats
        if not summary["pages_fetched"] and stats is not None and stats.get_value("scheduler/dequeued", 0):
            logger.error(
                "No page was fetched: not one of the requests sent was answered (do the seeds' hosts exist? "
                "the errors above say why each failed)"
            )
        summary = {key: value for key, value in summary.items() if value is not None}  # a field with no value: none
        # the estimate's history is for a program (summary.json), not a line a person reads
        lines = [f"  {key}: {value}" for key, value in summary.items() if key not in QUIET_FIELDS]
        output = getattr(spider, "crawl_output", None)
        if isinstance(output, CrawlOutput):
            path = output.path / "summary.json"
            path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
            logger.info("Crawl summary (%s):\n%s", path, "\n".join(lines))
            if self.report:
                self.write_report(output.path)
        else:
            logger.info("Crawl summary:\n%s", "\n".join(lines))

    @staticmethod
    def write_report(folder: Path) -> None:
        """The crawl's report (crawlproject.corpus.crawl_report), said at the end of the summary."""
        from crawlproject.corpus.crawl_report import write_report

        try:
            path = write_report(folder)
        except (OSError, ValueError) as exc:  # the crawl is done and recorded: a report that fails is one line
            logger.warning("The crawl report could not be written: %s (scrapy report %s makes it again)", exc, folder)
            return
        logger.info("Crawl report: %s", path)


def _check_categories(relevant: tuple[str, ...], labels: dict[str, str], path: str) -> None:
    """Every FOCUS_RELEVANT category must label some page (a typo labels none)."""
    categories = set(labels.values())
    for category in relevant:
        if not any(is_relevant(label, (category,)) for label in categories):
            tops = sorted({label.split("/")[0] for label in categories})
            raise SettingsError(
                f"FOCUS_RELEVANT names {category!r}, but no page of {path} is labelled "
                f"{category!r} or below it; its top categories are: {', '.join(tops)}"
            )
