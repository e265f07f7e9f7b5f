"""How much of the topic is left: an online estimate of the
relevant pages behind the links a crawl has found but not yet followed.

Every fetch tells what a link of its score was worth: the page it led to
was relevant with probability y (the judge's: a calibrated probability, or
its call times its estimated precision; or a label). A monotone
(isotonic) regression of y on the score over the fetched links says how
relevant a link of any score turns out; applied to the queued links — a
random sample of their scores, scaled to the queue's size —

    left = Σ over queued links of Pr(relevant | its score),

with an interval from bootstrap resamples of the fetched links — by the
page each was found on, whose links share their fate (each resample a new
regression, its levels drawn from their Beta posteriors: posterior_draw)
and the pages each then holds (binomial). No shape is assumed
but "a higher score is no worse": scores below or above all fetched ones
take the nearest fetched level in the estimate, and the interval spans
every rate that assumption leaves them (below the lowest fetched score:
from none up to its level; above the highest: from its level up to all) —
a crawl that fetched only its best links knows little of the rest of its
queue, and says so. The mean over the best-scored queued
links (the next fetches) is the crawl's expected relevant pages per fetch
now: the stop rule (FOCUS_STOP_BELOW) ends a crawl when it falls below a
setting.

It needs links fetched across the range of scores — the link learner's
exploring share (FOCUS_LEARNER_EXPLORE) gives them; a pure best-first
crawl sees only its top scores and extrapolates their level down.

What is left *in all* adds the relevant pages no fetched page links to yet
(crawlproject.models.unseen: per site, the pages its links met once and
twice say it has not named, each worth what the site's queued links are):
an upper end only — on a web the crawl has only begun, or a site it fetched
one page of, those may be most of the topic, or nothing.
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import isotonic_regression  # at start-up: not an import's pause mid-crawl

from crawlproject.models.unseen import UnseenPages

if TYPE_CHECKING:
    from collections.abc import Sequence

#: Fetched links the regression keeps (a uniform sample of all, past it).
KEPT = 2000
#: The share of the queue (by score) that is "the next fetches" for the rate now.
NEXT_SHARE = 0.05
#: A site the crawl fetched a page of but fewer than this is barely sampled:
#: its queued links, and its pages no link names yet, may hold anything (its
#: links' scores say what other sites' pages were worth; exploration probes
#: four pages of every seed's site, FOCUS_EXPLORE_PROBES). A site never
#: fetched is priced by its links' scores, as the crawl found them: most of
#: a page's links to other sites lead off the topic.
BARELY_SAMPLED = 4


@dataclass(frozen=True)
class Remaining:
    """The estimate at one moment of the crawl."""

    fetches: int
    found: float  # relevant pages found so far (Σ y)
    expected: float  # relevant pages behind the queued links
    low: float  # the interval's ends (``level`` of the draws between them)
    high: float
    rate_now: float  # expected relevant pages per fetch of the next fetches
    queued: int
    in_flight: int = 0  # links being fetched (counted in expected, low and high)
    #: the most relevant pages left in all: behind the queued links, and where
    #: no link names a page yet (crawlproject.models.unseen) — an upper end
    #: only: of those nothing is known but that they may be there
    high_all: float = 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {key: round(value, 3) if isinstance(value, float) else value for key, value in asdict(self).items()}

    def __str__(self) -> str:
        return (f"{self.expected:.0f} relevant left in the queue ({self.low:.0f}–{self.high:.0f}), "
                f"up to {self.high_all:.0f} in all, {self.rate_now:.3f} per fetch next")


class RemainingEstimator:
    """Learns, from the crawl's fetches, how relevant a link of each score
    turns out, and estimates the relevant pages behind the queued links."""

    def __init__(self, resamples: int = 100, level: float = 0.9, seed: int = 0):
        self.resamples, self.level, self.seed = resamples, level, seed
        self._rng = np.random.default_rng(seed)
        self.scores: list[float] = []  # of fetched links (at most KEPT: a uniform sample)
        self.outcomes: list[float] = []
        self.groups: list[int] = []  # the page each was found on, as a number
        self.found = 0.0
        self.fetches = 0
        self._scored = 0  # fetched links with a score
        #: what no fetched page links to yet
        self.unseen = UnseenPages()

    def observe(self, score: float | None, relevant: float, found_on: str | None = None, url: str = "") -> None:
        """A fetch: the link's score when it was fetched (None: a seed, which
        tells nothing of scores), the probability its page is relevant (0
        for a dead end), the page the link was found on (links of one
        page are resampled together; None: a link of its own) and the page's
        own URL (its site's share of relevant pages)."""
        relevant = min(max(float(relevant), 0.0), 1.0)
        self.fetches += 1
        self.found += relevant
        if url:
            self.unseen.fetched(url)
        if score is None or not math.isfinite(score):
            return
        self._scored += 1
        # a stable number (the same every run, unlike hash()); a collision only merges two pages
        group = zlib.crc32(found_on.encode()) if found_on is not None else -self._scored
        if len(self.scores) < KEPT:
            self.scores.append(float(score))
            self.outcomes.append(relevant)
            self.groups.append(group)
        else:  # reservoir sampling: every fetched link kept with the same chance
            slot = int(self._rng.integers(self._scored))
            if slot < KEPT:
                self.scores[slot], self.outcomes[slot], self.groups[slot] = float(score), relevant, group

    def estimate(self, queued_sample: Sequence[tuple[float, str]], queued: int,
                 in_flight: Sequence[float] = ()) -> Remaining:
        """The relevant pages behind *queued* links, of which *queued_sample*
        is a random sample (score, site: all of them, or a sample scaled to
        *queued*), behind the links being fetched now, *in_flight* (every
        one's score: found and not fetched yet, as the queued ones), and in
        all (with what no link names yet)."""
        kept = [(score, site) for score, site in queued_sample if math.isfinite(score)] if queued > 0 else []
        sampled = np.array([score for score, _ in kept], dtype=float)
        sites = [site for _, site in kept]
        fetching = np.array([s for s in in_flight if math.isfinite(s)], dtype=float)
        queued = max(queued, 0)
        tail = (1 - self.level) / 2
        if sampled.size + fetching.size == 0 or not self.scores:
            return Remaining(self.fetches, self.found, 0.0, 0.0, 0.0, 0.0, queued, fetching.size)
        # The fetched links by distinct score (ties pooled), once; a resample only reweighs them.
        levels, where = np.unique(np.array(self.scores), return_inverse=True)
        outcomes = np.array(self.outcomes)
        rng = np.random.default_rng(self.seed + self.fetches)
        # Each sampled queued link stands for queued / sampled of them; a link in flight for itself.
        fetched_on = self.unseen.fetched_pages()
        barely = np.array([0 < fetched_on.get(site, 0) < BARELY_SAMPLED for site in sites] + [False] * fetching.size)
        sample = np.concatenate([sampled, fetching])
        counts = np.concatenate([np.full(sampled.size, queued / max(sampled.size, 1)), np.ones(fetching.size)])
        order = np.argsort(sample)  # sorted, np.interp finds each score's place from the last one's (~3× faster)
        sample, counts, barely = sample[order], counts[order], barely[order]

        def regression(times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            """The fetched levels, their fitted Pr(relevant) and their weights,
            the fetches counted *times* each."""
            weights = np.bincount(where, weights=times, minlength=len(levels))
            kept = weights > 0
            means = np.bincount(where, weights=times * outcomes, minlength=len(levels))[kept] / weights[kept]
            return levels[kept], isotonic_regression(means, weights=weights[kept]).x, weights[kept]  # fit in [0, 1]

        def bounds(times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """Pr(relevant) of each score of *sample*, each fitted level drawn
            from its posterior: the least and the most the monotone assumption
            allows past the fetched scores (below the lowest: from 0 up to its
            level; above the highest: from its level up to 1) — and anything
            on a site the crawl barely sampled (its scores say what the other
            sites' pages were worth)."""
            at, fit, weights = regression(times)
            least = np.interp(sample, at, posterior_draw(fit, weights, rng))
            most = least.copy()
            least[(sample < at[0]) | barely] = 0.0
            most[(sample > at[-1]) | barely] = 1.0
            return least, most

        at, fit, _ = regression(np.ones(len(outcomes)))
        probabilities = np.interp(sample, at, fit)  # past the fetched scores: the nearest level
        expected = float(probabilities @ counts)
        # A bootstrap resample draws the pages the fetched links were found on,
        # each with all its fetched links: links of one page share their fate
        # (topical locality), and 30 siblings from one list are not 30
        # independent trials. Resampling single links made the interval too
        # narrow where the web comes in such clusters (on the queues of
        # bench.remaining's WebKB crawls at 300 fetches, 79 % of intervals
        # held the truth; by page, 87 %: BENCHMARKS `remaining`).
        _, group_of = np.unique(np.array(self.groups), return_inverse=True)
        pages = int(group_of.max()) + 1
        # a resample's counts (uniform multinomial) and Bernoulli draws, each
        # as the cheaper equivalent numpy call (this runs 100× per estimate):
        # the pages the least and the most it allows would hold
        lows, highs = [], []
        for _ in range(self.resamples):
            least, most = bounds(np.bincount(rng.integers(pages, size=pages), minlength=pages)[group_of])
            draws = rng.random(sample.size)
            lows.append(float((draws < least) @ counts))
            highs.append(float((draws < most) @ counts))
        low, high = float(np.quantile(lows, tail)), float(np.quantile(highs, 1 - tail))
        # The plug-in fit may sit outside its own draws (a level of 1.0 over a
        # few fetches: every posterior draw is below it): the interval holds it.
        low, high = min(low, expected), max(high, expected)
        # in all: each resample's queue and a draw of what no link names yet
        unseen = self.unseen.draws(self.resamples, rng, self._shares(sites, np.interp(sampled, at, fit), fetched_on))
        high_all = max(float(np.quantile(np.array(highs) + unseen, 1 - tail)), high)
        # the next fetches: the best of the queue (those in flight are fetched already)
        best = np.sort(sampled)[-max(1, math.ceil(sampled.size * NEXT_SHARE)):]
        rate_now = float(np.interp(best, at, fit).mean()) if sampled.size else 0.0
        return Remaining(self.fetches, self.found, expected, float(low), float(high), rate_now, queued, fetching.size,
                         high_all)

    @staticmethod
    def _shares(
        sites: list[str], probabilities: np.ndarray, fetched_on: dict[str, int]
    ) -> dict[str, tuple[float, float]]:
        """What a page no link names yet is worth, per site a queued link
        still leads to: the Beta of the share its sampled queued links are
        expected to hold (the pages past the frontier are like it) — or
        Beta(½, ½), anything, where the crawl barely sampled the site."""
        mass: dict[str, float] = defaultdict(float)
        links: dict[str, int] = defaultdict(int)
        for site, probability in zip(sites, probabilities, strict=True):
            mass[site] += float(probability)
            links[site] += 1
        return {
            site: (0.5, 0.5)
            if 0 < fetched_on.get(site, 0) < BARELY_SAMPLED
            else (mass[site] + 0.5, links[site] - mass[site] + 0.5)
            for site in links
        }


def posterior_draw(fit: np.ndarray, weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A draw of an isotonic fit's levels from their posteriors: each
    constant piece (fetches pooled at one level) holds n fetches of which k
    were relevant, and its rate is drawn from Beta(k + ½, n − k + ½)
    (Jeffreys' prior), the draws made monotone again. Bootstrap resamples
    alone say nothing of a rate no fetch has shown yet: a piece of 80
    fetches with no relevant page still leaves room for a few in the queue.

    >>> fit = np.array([0.0, 0.0, 0.5, 0.5]); weights = np.array([40.0, 40.0, 5.0, 5.0])
    >>> draws = np.array([posterior_draw(fit, weights, np.random.default_rng(i)) for i in range(2000)])
    >>> bool(0 < draws[:, 0].mean() < 0.02) and bool(np.all(np.diff(draws, axis=1) >= 0))
    True
    """
    piece = np.concatenate([[0], np.cumsum(np.diff(fit) != 0)])
    n = np.bincount(piece, weights=weights)
    k = np.clip(np.bincount(piece, weights=weights * fit), 0.0, n)
    rates = isotonic_regression(rng.beta(k + 0.5, n - k + 0.5), weights=n).x
    return np.asarray(rates[piece])
