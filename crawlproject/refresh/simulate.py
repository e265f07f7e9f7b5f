"""A repository refreshed week by week on a web that changes, for the
benchmark: the web is a dated WARC (one record per version, a 404 record when
a page is deleted — phpdoc-evolving's format), the repository holds the
versions crawled at the start, and each week a policy picks B pages to fetch
again. Each week it measures Q(W_L) against the live web and the stale share,
and times the user-centric measurement against the indexing it rides on.

Pages created after the start are not in the repository (finding them is the
crawler's job). Q is measured against the live versions of the repository's
own pages — the paper's setting, where refreshing everything every week gives
Q = 1 — and against the whole live web, where the new pages cost every policy
the same.
"""

from __future__ import annotations

import bisect
import copy
import hashlib
import logging
import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from scrapy.http import HtmlResponse
from warcio.archiveiterator import ArchiveIterator

from crawlproject.refresh.changes import TEXTS, changed_fraction, indexed_text, shingles
from crawlproject.refresh.policies import (
    EmbarrassmentPolicy,
    PageState,
    RefreshPolicy,
    UserCentricPolicy,
)
from crawlproject.refresh.quality import exposure
from crawlproject.refresh.workload import headings
from crawlproject.replay.archive import check_warc, cut_off, parse_time, warn_cut_off
from crawlproject.search.document import IndexedPage
from crawlproject.web.page import Page
from crawlproject.web.urls import canonicalize

if TYPE_CHECKING:
    from collections.abc import Container

    from scipy import sparse

    from crawlproject.refresh.gain import GainMeter
    from crawlproject.refresh.quality import QualityMeter, VersionIndex
    from crawlproject.search.collection import CollectionWriter, IndexedCollection

logger = logging.getLogger(__name__)
WEEK = 7 * 24 * 3600.0
_CACHE_VERSION = 2  # 2: links per version, page names


@dataclass
class EvolvingWeb:
    """Every version of every page: per page, (live from, version id) oldest
    first, the version id ``-1`` meaning "deleted"."""

    urls: list[str]
    timeline: list[list[tuple[float, int]]]
    texts: list[str]  #: per version id
    first_headings: list[list[str]]  #: per page, its first version's title and headings
    links: list[list[int]] = field(default_factory=list)  #: per version id, the pages it links to
    names: list[str] = field(default_factory=list)  #: per page, its first version's first h1 (or title)
    start: float = 0.0

    def live(self, at: float, absent: int) -> np.ndarray:
        """Version id of every page at time *at* (*absent*: none live)."""
        ids = np.full(len(self.urls), absent, dtype=np.int64)
        for page, versions in enumerate(self.timeline):
            position = bisect.bisect_right(versions, at, key=lambda version: version[0])
            if position and versions[position - 1][1] >= 0:
                ids[page] = versions[position - 1][1]
        return ids

    def in_link_scores(self, at: float, absent: int) -> np.ndarray:
        """Per page, 1 + the pages live at *at* that link to it (the paper's in-link scoring)."""
        counts = np.ones(len(self.urls))
        for page, version in enumerate(self.live(at, absent).tolist()):
            np.add.at(counts, [t for t in self.links[version] if t != page] if version != absent else [], 1)
        return counts

    def by_version(self, per_page: np.ndarray, absent: int) -> np.ndarray:
        """A per-page value spread over the versions (the absent row: 0)."""
        values = np.zeros(absent + 1)
        for page, timeline in enumerate(self.timeline):
            values[[version for _, version in timeline if version >= 0]] = per_page[page]
        return values

    def reachable(self, at: float, seeds: list[str]) -> np.ndarray:
        """The pages a crawl at time *at* from *seeds* reaches by links
        (sorted page indices): the repository a week-0 crawl starts with."""
        absent = len(self.texts)
        live = self.live(at, absent)
        known = {url: page for page, url in enumerate(self.urls)}
        unknown = [url for url in seeds if canonicalize(url) not in known]
        if unknown:
            raise ValueError(f"seed URLs not in the corpus: {', '.join(unknown[:3])}")
        todo = [known[canonicalize(url)] for url in seeds]
        reached = set(todo)
        while todo:
            page = todo.pop()
            if live[page] == absent:
                continue
            for target in self.links[live[page]]:
                if target not in reached:
                    reached.add(target)
                    todo.append(target)
        return np.array(sorted(page for page in reached if live[page] != absent), dtype=np.int64)


def load_evolving_web(warc: str | Path, cache_dir: str | Path | None = ".cache", text: str = "main") -> EvolvingWeb:
    """Read a dated WARC (or its cache); each version's *text* (:data:`TEXTS`)."""
    if text not in TEXTS:
        raise ValueError(f"text={text!r}: one of {', '.join(TEXTS)}")
    warc = Path(warc)
    check_warc(warc)
    stat = warc.stat()
    identity = f"{_CACHE_VERSION}|{text}|{warc.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    key = hashlib.sha1(identity.encode()).hexdigest()[:16]  # noqa: S324
    cache = Path(cache_dir) / f"evolving-{key}.pickle" if cache_dir is not None else None
    if cache is not None and cache.exists():
        with cache.open("rb") as f:
            web: EvolvingWeb = pickle.load(f)  # noqa: S301 (our own cache file)
            return web
    pages: dict[str, int] = {}
    web = EvolvingWeb([], [], [], [])
    outlinks: list[list[str]] = []
    record = None
    with warc.open("rb") as f:
        iterator = ArchiveIterator(f)
        for record in iterator:
            if record.rec_type != "response" or record.http_headers is None:
                continue
            body = record.content_stream().read()
            iterator.get_record_offset()  # reads the record to its end: is it whole?
            if cut_off(record):
                break
            url = canonicalize(record.rec_headers.get_header("WARC-Target-URI"))
            live_from = parse_time(record.rec_headers.get_header("WARC-Date"))
            page = pages.setdefault(url, len(pages))
            if page == len(web.urls):
                web.urls.append(url)
                web.timeline.append([])
                web.first_headings.append([])
                web.names.append("")
            if record.http_headers.get_statuscode() != "200":
                web.timeline[page].append((live_from, -1))
                continue
            content_type = record.http_headers.get_header("Content-Type") or "text/html"
            parsed = Page.from_response(HtmlResponse(url=url, body=body, headers={"Content-Type": content_type}))
            if not web.first_headings[page]:
                html = body.decode("utf-8", "replace")
                web.first_headings[page] = headings(html)
                web.names[page] = (headings(html, ("h1",)) or web.first_headings[page] or [""])[0]
            web.timeline[page].append((live_from, len(web.texts)))
            web.texts.append(indexed_text(body, url, text, content_type))
            outlinks.append([link.key for link in parsed.links])
    if record is not None and cut_off(record):
        warn_cut_off(warc, len(web.texts))
    web.links = [sorted({pages[target] for target in targets if target in pages}) for targets in outlinks]
    for versions in web.timeline:
        versions.sort(key=lambda version: version[0])
    web.start = min(versions[0][0] for versions in web.timeline)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with cache.with_suffix(".tmp").open("wb") as f:
            pickle.dump(web, f, protocol=pickle.HIGHEST_PROTOCOL)
        cache.with_suffix(".tmp").replace(cache)
    return web


@dataclass
class Week:
    week: int
    quality: float  #: Q against the live versions of the repository's own pages (methods.md §5, the paper's)
    stale: float  #: share of the repository's pages whose copy is stale (changed > τ, or deleted)
    refreshed: int
    changed: int  #: refreshes that found another version (or the page gone)
    deleted: int = 0  #: refreshes that found the page gone
    quality_web: float = 0.0  #: Q against the whole live web, pages created since the crawl included


@dataclass
class Outcome:
    policy: str
    budget: int
    tau: float = 0.1
    weeks: list[Week] = field(default_factory=list)
    chosen: list[list[int]] = field(default_factory=list)  #: per week, the repository pages refreshed
    indexing_seconds: float = 0.0  #: indexing the refreshed pages (a search collection's writer, when given)
    measuring_seconds: float = 0.0  #: the user-centric measurement: postings, F_w refits and ΔQ
    refit_seconds: float = 0.0  #: … of which the weekly F_w refits (the rest rides on the indexer's pass)
    refits: int = 0  #: F_w refitted (incremental: only the terms whose scores moved)
    stopped: int | None = None  #: the week a run asked to stop below a quality ended at
    final: np.ndarray | None = field(default=None, repr=False)  #: the repository's versions after the last week
    snapshots: dict[int, Snapshot] = field(default_factory=dict, repr=False)
    states: list[PageState] = field(default_factory=list, repr=False)  #: per held page, after the last week

    @property
    def in_pass_seconds(self) -> float:
        """The measurement that rides on the indexer's pass: all of it but the weekly refits."""
        return self.measuring_seconds - self.refit_seconds

    def span(self, first: int = 1, last: int | None = None) -> list[Week]:
        """Weeks *first* to *last* (inclusive; default: to the end)."""
        return [week for week in self.weeks if week.week >= first and (last is None or week.week <= last)]

    def mean_quality(self, first: int = 1, last: int | None = None) -> float:
        return float(np.mean([week.quality for week in self.span(first, last)]))

    def lowest_quality(self, first: int = 1, last: int | None = None) -> float:
        return float(min(week.quality for week in self.span(first, last)))

    def mean_stale(self, first: int = 1, last: int | None = None) -> float:
        return float(np.mean([week.stale for week in self.span(first, last)]))


@dataclass
class Snapshot:
    """A run's state at the start of a week, before the policy chooses (to hand to the refresh spider)."""

    states: list[PageState]  #: per held page (weeks since the start)
    repository: np.ndarray  #: version id of every page's copy
    candidates: list[int]  #: the held pages not found gone


@dataclass(frozen=True)
class LiveWeek:
    live: np.ndarray  #: version id of every page live that week
    own: np.ndarray  #: … of the repository's own pages only (the others absent)
    best: float  #: Q's denominator against the whole live web
    best_own: float  #: … against the repository's own pages


class RefreshSimulation:
    """Weekly refresh rounds of a repository that starts as the *held*
    pages' versions live at the web's start (default: every page live then)."""

    def __init__(self, web: EvolvingWeb, index: VersionIndex, meter: QualityMeter, gains: GainMeter, tau: float,
                 held: np.ndarray | None = None):
        self.web, self.index, self.meter, self.gains, self.tau = web, index, meter, gains, tau
        start = web.live(web.start, index.absent)
        held = np.flatnonzero(start != index.absent) if held is None else np.asarray(held, dtype=np.int64)
        # In URL order, as the refresh spider lists a repository: policies break ties by position.
        self.held = held[np.argsort([web.urls[page] for page in held], kind="stable")]
        self._shingles: dict[int, frozenset[int]] = {}
        self._distance: dict[tuple[int, int], float] = {}
        self._weeks: dict[int, LiveWeek] = {}

    def distance(self, old: int, new: int) -> float:
        """Shingle distance between two version ids (absent/deleted: 1)."""
        if old == new:
            return 0.0
        if self.index.absent in (old, new):
            return 1.0
        pair = (old, new)
        if pair not in self._distance:
            for version in pair:
                if version not in self._shingles:
                    self._shingles[version] = shingles(self.web.texts[version])
            self._distance[pair] = changed_fraction(self._shingles[old], self._shingles[new])
        return self._distance[pair]

    def live_web(self, week: int) -> LiveWeek:
        """The live web of week *week*, the same for every run."""
        if week not in self._weeks:
            live = self.web.live(self.web.start + week * WEEK, self.index.absent)
            own = np.full_like(live, self.index.absent)
            own[self.held] = live[self.held]
            self._weeks[week] = LiveWeek(live, own, self.meter.best(live), self.meter.best(own))
        return self._weeks[week]

    def fit_on_trace(self, weeks: int, tau: float) -> list[PageState]:
        """The paper's protocol: every page's parameters (change rate, the
        share of big updates, the gain of a refresh) from every update of
        weeks 1..*weeks*, as a refresh of every page every week observes
        them; each state is then fixed (:attr:`PageState.fitted`), its LR at 0."""
        states = self.run(UserCentricPolicy(tau), len(self.held), weeks).states
        for state in states:
            state.last_refresh, state.fitted = 0.0, True
        return states

    def run(self, policy: RefreshPolicy, budget: int, weeks: int, collection: IndexedCollection | None = None,
            stop_below: tuple[int, float] | None = None, snapshots: Container[int] = (),
            fitted: list[PageState] | None = None) -> Outcome:
        """*weeks* rounds of *budget* refreshes chosen by *policy*; with a
        *collection*, the refreshed pages are indexed into it and timed; with
        *stop_below* = (week, q), the run ends at the first week from *week* on
        whose Q falls below q (a budget search needs no more); the state at
        the start of each week in *snapshots* is kept (:class:`Snapshot`).
        With *fitted* (:meth:`fit_on_trace`) the policy schedules from those
        states, the paper's protocol; without, it learns online from its own
        refreshes (what a user gets)."""
        absent = self.index.absent
        held = self.held
        repository = np.full(len(self.web.urls), absent, dtype=np.int64)
        repository[held] = self.web.live(self.web.start, absent)[held]
        states = copy.deepcopy(fitted) if fitted is not None else [PageState(last_refresh=0.0) for _ in held]
        outcome = Outcome(policy.name, budget, policy.tau)
        measuring = isinstance(policy, UserCentricPolicy) and fitted is None
        writer = self._start_collection(collection, repository) if collection is not None else None
        if measuring:  # built with the week-0 index, as the collection is (neither is timed)
            self.gains.track(repository[held])
        candidates = list(range(len(held)))  #: the held pages not found gone (as the spider, never asked for again)
        for week in range(1, weeks + 1):
            web = self.live_web(week)
            live = web.live
            if isinstance(policy, EmbarrassmentPolicy):
                self._expose([states[i] for i in candidates], repository[held[candidates]])
            if measuring:
                began = time.perf_counter()
                outcome.refits += self.gains.refit()
                outcome.refit_seconds += time.perf_counter() - began
                outcome.measuring_seconds += time.perf_counter() - began
            if week in snapshots:
                outcome.snapshots[week] = Snapshot(copy.deepcopy(states), repository.copy(), list(candidates))
            changed = deleted = 0
            chosen = [candidates[i] for i in policy.choose([states[i] for i in candidates], float(week), budget)]
            for choice in chosen:
                page = int(held[choice])
                old, new = int(repository[page]), int(live[page])
                gain = 0.0
                if measuring and old != new:
                    began = time.perf_counter()
                    row = None if new == absent else self._row(new, timed=writer is not None)
                    gain = self.gains.refresh(choice, row)
                    outcome.measuring_seconds += time.perf_counter() - began
                if writer is not None and old != new and new != absent:
                    began = time.perf_counter()
                    writer.add(self._document(page, new))
                    outcome.indexing_seconds += time.perf_counter() - began
                changed += old != new
                deleted += new == absent
                states[choice].observe(float(week), self.distance(old, new), policy.tau, gain)
                repository[page] = new
            if deleted:
                candidates = [i for i in candidates if repository[held[i]] != absent]
            if writer is not None:
                began = time.perf_counter()
                writer.commit(self.index.analyzer)
                outcome.indexing_seconds += time.perf_counter() - began
            outcome.chosen.append(chosen)
            outcome.weeks.append(Week(week, self.meter.quality(repository, web.own, web.best_own),
                                      self._stale(repository, live), len(chosen), changed, deleted,
                                      self.meter.quality(repository, live, web.best)))
            if stop_below is not None and week >= stop_below[0] and outcome.weeks[-1].quality < stop_below[1]:
                outcome.stopped = week
                break
        if writer is not None:
            writer.close()
        outcome.final, outcome.states = repository, states
        return outcome

    @staticmethod
    def forecastability(states: list[PageState], weeks: int) -> float:
        """The paper's check (its Fig. 3) on states from :meth:`fit_on_trace`: Spearman's rank correlation,
        over the pages, of a weekly refresh's gain summed over each half of the weeks (1: the past predicts)."""
        from scipy.stats import spearmanr

        half = weeks // 2
        first = [sum(state.gains[:half]) for state in states]
        second = [sum(state.gains[half:weeks]) for state in states]
        if len(set(first)) < 2 or len(set(second)) < 2:
            return float("nan")
        return float(spearmanr(first, second).statistic)

    def _stale(self, repository: np.ndarray, live: np.ndarray) -> float:
        """Share of the held pages whose copy is more than τ away from the live page (or gone)."""
        moved = self.held[repository[self.held] != live[self.held]]
        stale = sum(self.distance(int(repository[page]), int(live[page])) > self.tau for page in moved)
        return stale / len(self.held) if len(self.held) else 0.0

    def _row(self, version: int, timed: bool) -> sparse.csr_matrix:
        """The version's TF-IDF row; *timed*: computed from its text, as the
        indexer's pass would (the same row as the index's)."""
        if timed:
            return self.index.vectorizer.transform([self.web.texts[version]])
        return self.index.matrix[version]

    def _document(self, page: int, version: int) -> IndexedPage:
        url = self.web.urls[page]
        return IndexedPage(url, url, self.web.names[page] if self.web.names else "", self.web.texts[version])

    def _start_collection(self, collection: IndexedCollection, repository: np.ndarray) -> CollectionWriter:
        """The repository at week 0 indexed (the crawl's own indexing: not timed)."""
        writer = collection.writer()
        writer.add_all(self._document(int(page), int(repository[page])) for page in self.held)
        writer.commit(self.index.analyzer)
        return writer

    def _expose(self, states: list[PageState], copies: np.ndarray) -> None:
        """EBR's weight, from the repository's copies."""
        for state, value in zip(states, exposure(self.meter, copies), strict=True):
            state.exposure = float(value)
