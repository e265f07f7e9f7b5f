"""The set of fetched URLs of a long crawl: exact, then a Bloom filter.

A crawl never fetches a URL twice, so it remembers every one it fetched. A
set of 60-bit fingerprints costs about 70 bytes a URL — 70 MB at a million,
7 GB at a hundred million. :class:`SeenSet` is exact up to
``FOCUS_SEEN_EXACT_MAX`` fingerprints and puts the ones after into a Bloom
filter (rbloom) sized for ``FOCUS_SEEN_BLOOM_CAPACITY`` URLs at a
false-positive rate of ``FOCUS_SEEN_BLOOM_ERROR`` — about 2.4 bytes a URL
at 1e-4. A false positive is a new URL taken for fetched: it is never
fetched (Heritrix and Nutch make the same trade); a fetched URL is never
taken for new, so nothing is fetched twice.

Past its capacity the filter's error grows; the crawl warns once. A URL
queued again on purpose (``push(force=True)``, a refresh) is kept in a
small exact set of exceptions until it is fetched again.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from rbloom import Bloom

from crawlproject import config

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)


def _fingerprint_hash(fingerprint: int) -> int:
    """The filter's hash of a fingerprint: the fingerprint itself (already
    a uniform 60-bit hash), so a filter saved is the same in any process."""
    return fingerprint


def seen_set_settings(settings: BaseSettings) -> tuple[int, int, float]:
    """(exact bound, Bloom capacity, Bloom error) from FOCUS_SEEN_*: the shape
    of every frontier's seen set, in memory or in Redis."""
    return (
        config.get_int(settings, "FOCUS_SEEN_EXACT_MAX"), config.get_int(settings, "FOCUS_SEEN_BLOOM_CAPACITY"),
        config.get_float(settings, "FOCUS_SEEN_BLOOM_ERROR"),
    )


class SeenSet:
    """Fingerprints of fetched URLs (``in``, ``add``, ``discard``, ``len``)."""

    def __init__(self, exact_max: int, bloom_capacity: int, bloom_error: float):
        if exact_max < 0 or bloom_capacity < 1 or not 0 < bloom_error < 1:
            raise ValueError("exact_max ≥ 0, bloom_capacity ≥ 1 and 0 < bloom_error < 1")
        self.exact_max = exact_max
        self.bloom_capacity = bloom_capacity
        self.bloom_error = bloom_error
        self._exact: set[int] = set()
        self._bloom: Bloom | None = None
        self._in_bloom = 0
        self._again: set[int] = set()  # in the filter, but queued again on purpose
        self._warned = False

    def __contains__(self, fingerprint: int) -> bool:
        if fingerprint in self._exact:
            return True
        return self._bloom is not None and fingerprint in self._bloom and fingerprint not in self._again

    def add(self, fingerprint: int) -> None:
        self._again.discard(fingerprint)
        if fingerprint in self._exact:
            return
        if len(self._exact) < self.exact_max:
            self._exact.add(fingerprint)
            return
        if self._bloom is None:
            self._bloom = Bloom(self.bloom_capacity, self.bloom_error, _fingerprint_hash)
            logger.info(
                "More than %d URLs fetched: the next ones are remembered in a Bloom filter "
                "(%d URLs at a false-positive rate of %g; FOCUS_SEEN_*)",
                self.exact_max, self.bloom_capacity, self.bloom_error,
            )
        if fingerprint not in self._bloom:
            self._bloom.add(fingerprint)
            self._in_bloom += 1
            if self._in_bloom > self.bloom_capacity and not self._warned:
                self._warned = True
                logger.warning(
                    "The Bloom filter of fetched URLs is past its capacity (%d): new URLs are taken for "
                    "fetched more often than %g; raise FOCUS_SEEN_BLOOM_CAPACITY for crawls this long",
                    self.bloom_capacity, self.bloom_error,
                )

    def update(self, fingerprints: Iterable[int]) -> None:
        for fingerprint in fingerprints:
            self.add(fingerprint)

    def discard(self, fingerprint: int) -> None:
        """Forget a fetched URL (it is queued again on purpose)."""
        if fingerprint in self._exact:
            self._exact.discard(fingerprint)
        elif self._bloom is not None and fingerprint in self._bloom:
            self._again.add(fingerprint)

    def __len__(self) -> int:
        """URLs remembered (those in the filter counted as added)."""
        return len(self._exact) + self._in_bloom - len(self._again)

    @property
    def in_bloom(self) -> int:
        return self._in_bloom

    def bloom_bytes(self) -> int:
        return 0 if self._bloom is None else self._bloom.size_in_bits // 8
