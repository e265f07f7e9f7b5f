"""The relevant pages no fetched page links to yet: how much of each site the
crawl has not seen, from how often it met each link it knows
(crawlproject.models.remaining counts what is behind the links it knows).

A site the crawl barely sampled — its index fetched, a hundred links queued,
each met once — may hold thousands of pages or a hundred: the links met once
and twice say which. Chao's estimator of the number of classes in a
population from the classes seen once (f1) and twice (f2) (Chao 1984; its
bias-corrected form, Chao 2005), applied per site to the links found on
fetched pages, estimates the pages of the site no link has named yet:

    unseen = f1 (f1 − 1) / (2 (f2 + 1))

with Chao's log-normal interval. What each is worth is the caller's:
crawlproject.models.remaining takes the share of relevant pages the site's
queued links are expected to hold (the pages past the crawl's frontier are
like the frontier), or, on a site the crawl barely sampled, anything at all.
A site the crawl covered meets its links again and again (f1 small beside
f2), and its unseen pages go to nothing. Only sites the crawl fetched a page
of count, and only those a queued link still leads to.

Links are counted by a hash of their key, every one up to *kept* keys; past
that only the keys whose hash is a multiple of k (k doubling each time the
sample fills up again), the counts scaled by k: memory stays bounded on a
crawl of millions of URLs.
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["UnseenPages", "chao1_unseen"]



def chao1_unseen(f1: float, f2: float) -> tuple[float, float]:
    """The classes not seen yet, and the variance of that estimate (Chao's
    bias-corrected estimator and its variance).

    >>> chao1_unseen(10, 5)[0], chao1_unseen(0, 5)
    (7.5, (0.0, 0.0))
    """
    if f1 <= 0:
        return 0.0, 0.0
    unseen = f1 * (f1 - 1) / (2 * (f2 + 1))
    variance = (
        unseen + f1 * (2 * f1 - 1) ** 2 / (4 * (f2 + 1) ** 2) + f1 * f1 * (f1 - 1) ** 2 * f2 / (4 * (f2 + 1) ** 4)
    )
    return unseen, variance


@dataclass
class _Site:
    found: int = 0  # distinct links to it in the sample
    once: int = 0  # f1
    twice: int = 0  # f2
    fetched: int = 0


def _host(url: str) -> str:
    return url.split("/", 3)[2] if url.count("/") >= 2 else ""


class UnseenPages:
    """Per site: the links found on fetched pages and how often, and the
    pages fetched."""

    def __init__(self, kept: int = 200_000):
        self.kept = kept
        self.step = 1  # the sample keeps the keys whose hash is a multiple of this
        self._met: dict[int, int] = {}  # a link's hash → times met (in the sample)
        self._host_of: dict[int, str] = {}
        self._sites: dict[str, _Site] = defaultdict(_Site)

    def fetched(self, url: str) -> None:
        """A page of the crawl answered 2xx."""
        self._sites[_host(url)].fetched += 1

    def links(self, keys: Iterable[str]) -> None:
        """A fetched page's links (canonical keys; each counted once a page)."""
        for key in set(keys):
            code = zlib.crc32(key.encode())
            if code % self.step:
                continue
            count = self._met.get(code, 0) + 1
            self._met[code] = count
            if count == 1:
                host = self._host_of[code] = _host(key)
            else:
                host = self._host_of[code]
            site = self._sites[host]
            if count == 1:
                site.found += 1
                site.once += 1
            elif count == 2:
                site.once -= 1
                site.twice += 1
            elif count == 3:
                site.twice -= 1
        if len(self._met) > self.kept:
            self._thin()

    def fetched_pages(self) -> dict[str, int]:
        """Pages fetched (2xx) per site."""
        return {host: site.fetched for host, site in self._sites.items() if site.fetched}

    def draws(self, count: int, rng: np.random.Generator, shares: Mapping[str, tuple[float, float]]) -> np.ndarray:
        """*count* draws of the relevant pages no link names yet, over the
        sites the crawl fetched a page of: each site's unseen pages times a
        share drawn from ``Beta(*shares[site])`` (a site *shares* does not
        name — no queued link leads there — counts nothing)."""
        total = np.zeros(count)
        for host, (unseen, spread) in self._unseen().items():
            if host in shares:
                pages = unseen * np.exp(rng.normal(0.0, spread, count) - spread * spread / 2)
                total += pages * rng.beta(*shares[host], count)
        return total

    def _unseen(self) -> dict[str, tuple[float, float]]:
        """Per site fetched: its unseen pages, and the log-scale spread of that estimate."""
        found = {}
        for host, site in self._sites.items():
            unseen, variance = chao1_unseen(site.once * self.step, site.twice * self.step)
            if unseen > 0 and site.fetched:
                found[host] = (unseen, math.sqrt(math.log1p(variance / (unseen * unseen))))
        return found

    def _thin(self) -> None:
        """Keep half the sample: the keys whose hash is a multiple of twice the step."""
        self.step *= 2
        self._met = {code: met for code, met in self._met.items() if code % self.step == 0}
        self._host_of = {code: host for code, host in self._host_of.items() if code in self._met}
        for site in self._sites.values():
            site.found = site.once = site.twice = 0
        for code, met in self._met.items():
            site = self._sites[self._host_of[code]]
            site.found += 1
            site.once += met == 1
            site.twice += met == 2
