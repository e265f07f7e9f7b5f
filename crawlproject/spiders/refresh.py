"""``scrapy crawl refresh -a repository=CRAWL_DIR``: fetch again the pages of
a finished crawl that a refresh policy picks (docs/methods.md §5), with conditional GETs.

    scrapy crawl refresh -a repository=crawls/bestfirst-… -a policy=user-centric \
        -a workload=workload.tsv -a budget=200 [-a now=2021-03-01] [-a tau=0.1]

``sitemaps`` (URLs) are read first for their ``lastmod``: a page not modified
since its copy is recorded unchanged without a fetch, and the pages modified
since are fetched first.

``indexed`` is what of a page the repository indexes and compares: its main
text (default; a sidebar's churn is no change) or ``whole`` (template in).
``now`` (default: the clock) is the run's time and ``crawled_at`` (default:
each page's fetched_at) the repository's, for a replay served as of a date.

Per run: the policy (uniform, staleness, embarrassment, user-centric —
crawlproject.refresh.policies) ranks the repository's pages by what earlier
runs observed and the *budget* highest are requested with ``If-None-Match`` /
``If-Modified-Since`` from the stored version. A 304 or an identical body is
"unchanged"; a new body is stored as a new version beside the old (never over
it) with what changed (shingles, terms added and removed); a 404/410 marks the
page deleted. The state and one line per refresh stay in the repository's
``refresh/`` folder (crawlproject.refresh.state), so runs scheduled by cron or
Scrapyd each day or week carry on from each other. The run's own output
folder holds its fetches as any crawl's does; with ``FOCUS_INDEX_DIR`` the new
versions go into the search index.

The user-centric policy measures ΔQ of each refresh (crawlproject.refresh.quality)
with the workload's single-term queries, fitted to the repository's current
versions; EBR weighs pages by how often the workload shows them. Both need
``-a workload=FILE`` (query<TAB>frequency).
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals

from crawlproject import config
from crawlproject.config import SettingsError
from crawlproject.refresh.changes import TEXTS, Change, indexed_text
from crawlproject.refresh.policies import (
    DEFAULT_TAU,
    EmbarrassmentPolicy,
    UserCentricPolicy,
    policy_named,
)
from crawlproject.refresh.state import DAY, RefreshState, RefreshStateError
from crawlproject.refresh.workload import WorkloadError, read_workload
from crawlproject.replay.archive import parse_time
from crawlproject.spiders.base import FocusedSpider
from crawlproject.store_lock import lock_dir
from crawlproject.strategies.breadth_first import BreadthFirstStrategy
from crawlproject.web import meta as keys
from crawlproject.web.text import TermAnalyzer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

    from crawlproject.refresh.gain import GainMeter
    from crawlproject.refresh.quality import VersionIndex
    from crawlproject.refresh.state import RefreshedPage

logger = logging.getLogger(__name__)
REFRESHED = "focus_refreshed"  #: request meta: the repository URL a request refreshes


class RefreshSpider(FocusedSpider):
    name = "refresh"
    strategy_class = BreadthFirstStrategy
    # The sitemaps a refresh reads are the ones given (-a sitemaps=…), for their lastmod, not robots.txt's.
    custom_settings = {"FOCUS_FRONTIER_ORDER": "fifo", "FOCUS_SITEMAPS": False}  # noqa: RUF012

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        # The policy and the budget: spider arguments, else FOCUS_REFRESH_POLICY / FOCUS_REFRESH_BUDGET.
        kwargs.setdefault("policy", config.get_str(crawler.settings, "FOCUS_REFRESH_POLICY"))
        kwargs.setdefault("budget", config.get_int(crawler.settings, "FOCUS_REFRESH_BUDGET"))
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.repository_lock.release, signal=signals.engine_stopped, weak=False)
        return spider

    def __init__(
        self,
        repository: str | None = None,
        policy: str = "uniform",
        budget: str | int = 100,
        now: str | None = None,
        tau: str | float = DEFAULT_TAU,
        workload: str | None = None,
        crawled_at: str | None = None,
        indexed: str = "main",
        **kwargs: Any,
    ):
        super().__init__(follow_links=False, **kwargs)
        self._sitemaps_pending = 0 if kwargs.get("sitemaps") else None  #: None: choose at once, no sitemap to wait for
        if not repository:
            raise SettingsError("refresh needs -a repository=CRAWL_DIR (a finished crawl's output folder)")
        # One writer: a crawl still writing the repository, or another refresh, keeps this one out.
        self.repository_lock = lock_dir(repository, f"the repository {repository!r}")
        try:
            self._read_repository(repository, policy, budget, now, tau, workload, crawled_at, indexed)
        except BaseException:
            self.repository_lock.release()
            raise

    def _read_repository(self, repository: str, policy: str, budget: str | int, now: str | None, tau: str | float,
                         workload: str | None, crawled_at: str | None, indexed: str) -> None:
        try:
            self.refresh = RefreshState(repository, parse_time(crawled_at) if crawled_at else None)
            self.policy = policy_named(policy, float(tau))
            self.budget = int(budget)
            self.now = parse_time(now) / DAY if now else time.time() / DAY
            self.workload = read_workload(workload) if workload else None
        except (RefreshStateError, WorkloadError, SettingsError) as exc:
            raise SettingsError(str(exc)) from None
        except ValueError as exc:
            raise SettingsError(f"refresh: {exc} (budget is a whole number ≥ 1, tau in [0, 1))") from None
        if indexed not in TEXTS:
            raise SettingsError(f"refresh: indexed={indexed!r}: one of {', '.join(TEXTS)} (what of a page is indexed)")
        self.indexed = indexed
        if self.budget < 1:
            raise SettingsError(f"refresh: budget must be at least 1, got {self.budget}")
        if self.workload is None and isinstance(self.policy, UserCentricPolicy | EmbarrassmentPolicy):
            raise SettingsError(f"the {self.policy.name} policy weighs pages by the users' queries: "
                                "pass -a workload=FILE (query<TAB>frequency per line)")
        self.analyzer = TermAnalyzer()
        pages = self.refresh.live()
        if not pages:
            raise SettingsError(f"{repository}: no page left to refresh")
        self.gains: GainMeter | None = None
        self.index: VersionIndex | None = None
        self._rows: dict[str, int] = {}
        if self.workload is not None:
            self._measure(pages)
        self.counts: Counter[str] = Counter()
        self._log = (self.refresh.folder / "changes.jsonl")
        self.refresh.folder.mkdir(parents=True, exist_ok=True)
        self.chosen: dict[str, RefreshedPage] = {}
        if self._sitemaps_pending is None:
            self.chosen = {page.url: page for page in self._choose(pages, {})}
        self.seed_urls = list(self.chosen)  # with sitemaps: none until they are read

    def _choose(self, pages: list[RefreshedPage], lastmods: dict[str, str]) -> list[RefreshedPage]:
        """The *budget* pages to fetch: the policy's ranking, where the sitemaps' lastmod first
        leaves out every page not modified since its copy (recorded unchanged, no fetch) and
        puts the pages modified since first."""
        known: dict[str, bool] = {}  # url → modified since its copy
        for page in pages:
            try:
                modified = parse_time(lastmods[page.url]) / DAY if page.url in lastmods else None
            except ValueError:
                modified = None  # a lastmod that is no date says nothing
            if modified is not None:
                known[page.url] = modified > page.state.last_refresh
        for page in pages:
            if known.get(page.url) is False:
                page.state.observe(self.now, 0.0, self.policy.tau)
                self._record(page, None, "unchanged (sitemap)", None)
        candidates = [page for page in pages if known.get(page.url) is not False]
        # The budget is spent once per period (days since the last run): SBR's optimal
        # frequencies are per day, so a weekly run of B pages is a rate of B/7 a day.
        period = self.refresh.period(self.now)
        states = [page.state for page in candidates]
        ranked = [candidates[i] for i in self.policy.choose(states, self.now, self.budget, period, len(candidates))]
        ranked.sort(key=lambda page: not known.get(page.url, False))  # stable: the policy's order within each
        return ranked[: self.budget]

    def _measure(self, pages: list[RefreshedPage]) -> None:
        """The repository's current versions indexed for ΔQ (user-centric) and exposure (EBR)."""
        from crawlproject.refresh.gain import GainMeter
        from crawlproject.refresh.quality import QualityMeter, VersionIndex, exposure

        assert self.workload is not None
        texts = [self._stored_text(page) for page in pages]
        self.index = VersionIndex(texts, self.analyzer)
        self._rows = {page.url: row for row, page in enumerate(pages)}
        self.gains = GainMeter(self.index, self.workload)
        self.gains.fit(range(len(pages)))
        if isinstance(self.policy, EmbarrassmentPolicy):
            for page, value in zip(pages, exposure(QualityMeter(self.index, self.workload), range(len(pages))),
                                   strict=True):
                page.state.exposure = float(value)

    def _stored_body(self, page: RefreshedPage) -> bytes | None:
        try:
            return (self.refresh.repository / page.file).read_bytes()
        except OSError:
            return None

    def _stored_text(self, page: RefreshedPage) -> str:
        body = self._stored_body(page)
        if body is None:
            return ""
        return indexed_text(body, page.url, self.indexed)

    def _sitemap_request(self, url: str, score: float, depth: int) -> Request | None:
        request = super()._sitemap_request(url, score, depth)
        if request is not None and self._sitemaps_pending is not None:
            self._sitemaps_pending += 1
        return request

    def parse_sitemap(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        if not 200 <= response.status < 300:
            logger.warning("Sitemap %s could not be read (HTTP %d): its pages are chosen by the policy alone",
                           response.url, response.status)
        yield from super().parse_sitemap(response, **kwargs)  # a sitemap index's sitemaps
        yield from self._sitemap_done()

    def on_sitemap_error(self, failure: Failure) -> Iterator[Any]:  # type: ignore[override]
        super().on_sitemap_error(failure)
        logger.warning("Sitemap %s could not be read (%s): its pages are chosen by the policy alone",
                       failure.request.url, failure.getErrorMessage())  # type: ignore[attr-defined]
        yield from self._sitemap_done()

    async def start(self) -> AsyncIterator[Any]:
        async for request in super().start():
            yield request
        if self._sitemaps_pending == 0:  # no sitemap URL could be asked for: choose without one
            logger.warning("No sitemap to read among %s: the pages are chosen by the policy alone",
                           ", ".join(self.start_sitemaps))
            self._sitemaps_pending = 1
            for request in self._sitemap_done():
                yield request

    def _sitemap_pages(self, response: Response, locations: list[str]) -> Iterator[Request]:
        return iter(())  # a refresh reads a sitemap for its lastmod, and crawls nothing new

    def _sitemap_done(self) -> Iterator[Request]:
        """One sitemap read (or failed); after the last, the pages chosen with what they said."""
        assert self._sitemaps_pending is not None  # noqa: S101 (only a refresh given sitemaps reads them)
        self._sitemaps_pending -= 1
        if self._sitemaps_pending:
            return
        pages = self.refresh.live()
        chosen = self._choose(pages, self.sitemap_lastmods)
        listed = sum(page.url in self.sitemap_lastmods for page in pages)
        logger.info("Sitemaps read: %d of the repository's pages listed with a lastmod, %d unchanged since their "
                    "copy (not fetched); %d pages to refresh", listed, self.counts["unchanged (sitemap)"], len(chosen))
        self.chosen = {page.url: page for page in chosen}
        for page in chosen:
            self.crawl_scope.add_seed(page.url)
            yield self._seed(page.url)

    def _seed(self, url: str) -> Request:
        page = self.chosen[url]
        headers = {}
        if page.etag:
            headers["If-None-Match"] = page.etag
        if page.last_modified:
            headers["If-Modified-Since"] = page.last_modified
        meta = {keys.SCORE: float("inf"), keys.SEED: True, REFRESHED: url, "handle_httpstatus_list": [304, 404, 410]}
        return Request(url, headers=headers, callback=self.parse, errback=self.on_error, meta=meta, dont_filter=True)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        page = self.chosen[response.meta[REFRESHED]]
        fetched = self._page_of(response)
        if not (response.status == 304 or response.status in (404, 410) or 200 <= response.status < 300):
            self._record(page, response.status, "error", None)  # no observation
            yield from self._outputs(response, fetched)
            return
        unchanged = Change(0.0, frozenset(), frozenset())
        gain = 0.0
        if response.status in (404, 410):
            outcome, change = "deleted", Change.between(self._stored_text(page), None, self.analyzer)
            page.deleted = True
        elif response.status == 304 or self._stored_body(page) == response.body:
            outcome, change = "unchanged", unchanged
        else:
            new_text = indexed_text(response.body, response.url, self.indexed)
            outcome, change = "changed", Change.between(self._stored_text(page), new_text, self.analyzer)
            gain = self._gain(page, new_text)
            page.version += 1
            name = f"{Path(page.file).stem.split('.')[0]}.{page.version}.html"
            (self.refresh.folder / "versions").mkdir(parents=True, exist_ok=True)
            (self.refresh.folder / "versions" / name).write_bytes(response.body)
            page.file = f"refresh/versions/{name}"
        if not page.deleted:  # a 304 carries the validators too
            page.etag = _header(response, b"ETag") or page.etag
            page.last_modified = _header(response, b"Last-Modified") or page.last_modified
        page.state.observe(self.now, change.fraction, self.policy.tau, gain)
        self._record(page, response.status, outcome, change)
        yield from self._outputs(response, fetched)  # the fetch in the run's history (a 304 or 404 stores no page)

    def _gain(self, page: RefreshedPage, new_text: str) -> float:
        if self.gains is None or self.index is None or page.url not in self._rows:
            return 0.0
        new_row = self.index.vectorizer.transform([new_text])
        return self.gains.gain_rows(self.index.matrix[self._rows[page.url]], new_row)

    def on_error(self, failure: Failure) -> Iterator[Any]:
        request = failure.request  # type: ignore[attr-defined]
        url = request.meta.get(REFRESHED)
        if url in self.chosen:
            self._record(self.chosen[url], None, "error", None)  # no observation: a dead host says nothing of the page
        yield from super().on_error(failure)

    def _record(self, page: RefreshedPage, status: int | None, outcome: str, change: Change | None) -> None:
        self.counts[outcome] += 1
        line = {"url": page.url, "at": self.now * DAY, "status": status, "outcome": outcome, "version": page.version}
        if change is not None:
            line |= {"changed_fraction": round(change.fraction, 4), "terms_added": sorted(change.added)[:200],
                     "terms_removed": sorted(change.removed)[:200]}
        with self._log.open("a", encoding="utf-8") as log:
            log.write(json.dumps(line, ensure_ascii=False) + "\n")

    def closed(self, reason: str) -> None:
        self.refresh.runs.append(self.now)
        self.refresh.save()
        fetched = sum(self.counts.values()) - self.counts["unchanged (sitemap)"]
        logger.info("Refreshed %d of %d pages (%s policy): %d changed, %d unchanged, %d deleted, %d failed; "
                    "%d unchanged by the sitemaps; state in %s", fetched, len(self.refresh.pages), self.policy.name,
                    self.counts["changed"], self.counts["unchanged"], self.counts["deleted"], self.counts["error"],
                    self.counts["unchanged (sitemap)"], self.refresh.path)


def _header(response: Response, name: bytes) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None
