"""A repository refreshed week by week on a web that changes, for the
benchmark: the web is a dated WARC (one record per version, a 404 record when
a page is deleted — phpdoc-evolving's format), the repository holds the
versions crawled at the start, and each week a policy picks B pages to fetch
again. Each week the simulation measures Q(W_L) against the live web and the
share of stale pages, and times the user-centric measurement against the
indexing it rides on.

Pages created after the start are not in the repository (refreshing only
re-fetches what was crawled; discovering new pages is the crawler's job), so
they lower Q equally for every policy.
"""

from __future__ import annotations

import bisect
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

from crawlproject.refresh.changes import changed_fraction, shingles
from crawlproject.refresh.policies import (
    EmbarrassmentPolicy,
    PageState,
    RefreshPolicy,
    UserCentricPolicy,
)
from crawlproject.refresh.quality import exposure
from crawlproject.refresh.workload import headings
from crawlproject.replay.archive import check_warc, parse_time
from crawlproject.web.page import Page
from crawlproject.web.urls import canonicalize

if TYPE_CHECKING:
    from crawlproject.refresh.quality import GainMeter, QualityMeter, VersionIndex

logger = logging.getLogger(__name__)
WEEK = 7 * 24 * 3600.0
_CACHE_VERSION = 1


@dataclass
class EvolvingWeb:
    """Every version of every page: per page, (live from, version id) oldest
    first, the version id ``-1`` meaning "deleted"."""

    urls: list[str]
    timeline: list[list[tuple[float, int]]]
    texts: list[str]  #: per version id
    first_headings: list[list[str]]  #: per page, its first version's title and headings
    start: float = 0.0

    def live(self, at: float, absent: int) -> np.ndarray:
        """Version id of every page at time *at* (*absent*: none live)."""
        ids = np.full(len(self.urls), absent, dtype=np.int64)
        for page, versions in enumerate(self.timeline):
            position = bisect.bisect_right(versions, at, key=lambda version: version[0])
            if position and versions[position - 1][1] >= 0:
                ids[page] = versions[position - 1][1]
        return ids


def load_evolving_web(warc: str | Path, cache_dir: str | Path | None = ".cache") -> EvolvingWeb:
    """Read a dated WARC (or its cache)."""
    warc = Path(warc)
    check_warc(warc)
    stat = warc.stat()
    key = hashlib.sha1(f"{_CACHE_VERSION}|{warc.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]  # noqa: S324
    cache = Path(cache_dir) / f"evolving-{key}.pickle" if cache_dir is not None else None
    if cache is not None and cache.exists():
        with cache.open("rb") as f:
            web: EvolvingWeb = pickle.load(f)  # noqa: S301 (our own cache file)
            return web
    pages: dict[str, int] = {}
    web = EvolvingWeb([], [], [], [])
    with warc.open("rb") as f:
        for record in ArchiveIterator(f):
            if record.rec_type != "response" or record.http_headers is None:
                continue
            url = canonicalize(record.rec_headers.get_header("WARC-Target-URI"))
            live_from = parse_time(record.rec_headers.get_header("WARC-Date"))
            page = pages.setdefault(url, len(pages))
            if page == len(web.urls):
                web.urls.append(url)
                web.timeline.append([])
                web.first_headings.append([])
            if record.http_headers.get_statuscode() != "200":
                web.timeline[page].append((live_from, -1))
                continue
            body = record.content_stream().read()
            content_type = record.http_headers.get_header("Content-Type") or "text/html"
            text = Page.from_response(HtmlResponse(url=url, body=body, headers={"Content-Type": content_type})).text
            if not web.first_headings[page]:
                web.first_headings[page] = headings(body.decode("utf-8", "replace"))
            web.timeline[page].append((live_from, len(web.texts)))
            web.texts.append(text)
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
    quality: float
    stale: float  #: share of the repository's pages whose copy is stale (changed > τ, or deleted)
    refreshed: int
    changed: int  #: refreshes that found the page changed at all


@dataclass
class Outcome:
    policy: str
    budget: int
    weeks: list[Week] = field(default_factory=list)
    indexing_seconds: float = 0.0  #: indexing the refreshed pages (analysis + TF-IDF rows)
    measuring_seconds: float = 0.0  #: the user-centric measurement: F_w fits and ΔQ

    @property
    def mean_quality(self) -> float:
        return float(np.mean([week.quality for week in self.weeks]))

    @property
    def mean_stale(self) -> float:
        return float(np.mean([week.stale for week in self.weeks]))


class RefreshSimulation:
    def __init__(self, web: EvolvingWeb, index: VersionIndex, meter: QualityMeter, gains: GainMeter, tau: float):
        self.web, self.index, self.meter, self.gains, self.tau = web, index, meter, gains, tau
        self._shingles: dict[int, frozenset[int]] = {}
        self._distance: dict[tuple[int, int], float] = {}

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

    def run(self, policy: RefreshPolicy, budget: int, weeks: int) -> Outcome:
        absent = self.index.absent
        start = self.web.start
        repository = self.web.live(start, absent)
        held = np.flatnonzero(repository != absent)  # the pages crawled at the start
        states = [PageState(last_refresh=0.0) for _ in held]
        outcome = Outcome(policy.name, budget)
        for week in range(1, weeks + 1):
            now = start + week * WEEK
            live = self.web.live(now, absent)
            if isinstance(policy, EmbarrassmentPolicy):
                self._expose(states, held, repository)
            if isinstance(policy, UserCentricPolicy):
                began = time.perf_counter()
                self.gains.fit(repository)
                outcome.measuring_seconds += time.perf_counter() - began
            changed = 0
            for choice in policy.choose(states, float(week), budget):
                page = int(held[choice])
                old, new = int(repository[page]), int(live[page])
                began = time.perf_counter()
                if new != absent:  # the indexing a refresh costs anyway: analysis and the page's TF-IDF row
                    self.index.vectorizer.transform([self.web.texts[new]])
                outcome.indexing_seconds += time.perf_counter() - began
                gain = 0.0
                if isinstance(policy, UserCentricPolicy):
                    began = time.perf_counter()
                    gain = self.gains.gain(old, new)
                    outcome.measuring_seconds += time.perf_counter() - began
                fraction = self.distance(old, new)
                changed += fraction > 0
                states[choice].observe(float(week), fraction, self.tau, gain)
                repository[page] = new
            stale = np.mean([self.distance(int(repository[p]), int(live[p])) > self.tau for p in held])
            outcome.weeks.append(Week(week, self.meter.quality(repository, live), float(stale),
                                      min(budget, len(held)), changed))
        return outcome

    def _expose(self, states: list[PageState], held: np.ndarray, repository: np.ndarray) -> None:
        """EBR's weight, from the repository's copies."""
        for state, value in zip(states, exposure(self.meter, repository[held]), strict=True):
            state.exposure = float(value)
