"""Near-duplicate pages: a mirror or a near-copy of a page fetched before.

A page's text is cut into shingles (runs of ``FOCUS_NEAR_DUPLICATES_SHINGLE``
words); datasketch's MinHash summarises the set in
``FOCUS_NEAR_DUPLICATES_PERMUTATIONS`` numbers whose agreement between two
pages estimates the Jaccard similarity of their shingle sets. Locality-
sensitive hashing finds candidates in O(1): the signature is cut into b
bands of r rows (datasketch's choice of b and r for the threshold), and
two pages that agree on a whole band are candidates; a candidate is a
near-duplicate when its estimated similarity reaches
``FOCUS_NEAR_DUPLICATES`` (0 turns detection off). ACHE does the same
(MinHash + LSH); Nutch compares fuzzy page signatures.

The index is ours rather than datasketch's ``MinHashLSH``, which keeps a
few kilobytes a page: each band is a 64-bit hash in a dict, each signature
a row of a fixed array — about 600 bytes a page at 64 permutations — and it
keeps the last ``FOCUS_NEAR_DUPLICATES_KEEP`` pages (a ring: the oldest is
forgotten), so a crawl of millions of pages stays within a bound. Pages of
fewer than :data:`MIN_WORDS` words are not compared (an error page, a
frameset: alike, but not copies of anything).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import xxhash

from crawlproject import config

if TYPE_CHECKING:
    from typing import Self

    from scrapy.settings import BaseSettings

#: Pages shorter than this (in words) are never near-duplicates.
MIN_WORDS = 30


def _hash32(data: bytes) -> int:
    return xxhash.xxh32_intdigest(data)


class NearDuplicates:
    """An index of the pages fetched; :meth:`check` says which page a new
    one copies, if any, and remembers the new one otherwise."""

    def __init__(self, threshold: float, permutations: int = 64, shingle: int = 5, keep: int = 100_000, seed: int = 1):
        if not 0 < threshold <= 1:
            raise ValueError(f"the near-duplicate threshold lies in (0, 1], got {threshold}")
        if permutations < 2 or shingle < 1 or keep < 1:
            raise ValueError("permutations ≥ 2, shingle ≥ 1 and keep ≥ 1")
        self.threshold = threshold
        self.shingle = shingle
        self.keep = keep
        # Imported here: datasketch's package imports scipy.integrate (half a second a
        # crawl process pays only when the check is on).
        from datasketch import MinHash, MinHashLSH

        lsh = MinHashLSH(threshold=threshold, num_perm=permutations)
        self.bands, self.rows = lsh.b, lsh.r  # datasketch's best b × r for the threshold
        self._template = MinHash(num_perm=permutations, seed=seed, hashfunc=_hash32)
        self._signatures = np.zeros((0, permutations), dtype=self._template.hashvalues.dtype)
        self._keys: list[str] = []
        self._buckets: list[dict[int, int]] = [{} for _ in range(self.bands)]  # band hash → slot
        self._next = 0  # the ring's next slot

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Self | None:
        threshold = config.get_float(settings, "FOCUS_NEAR_DUPLICATES")
        if threshold <= 0:
            return None
        return cls(
            threshold,
            permutations=config.get_int(settings, "FOCUS_NEAR_DUPLICATES_PERMUTATIONS"),
            shingle=config.get_int(settings, "FOCUS_NEAR_DUPLICATES_SHINGLE"),
            keep=config.get_int(settings, "FOCUS_NEAR_DUPLICATES_KEEP"),
        )

    def signature(self, text: str) -> np.ndarray | None:
        """The MinHash of *text*'s shingles, None for a text too short."""
        words = text.lower().split()
        if len(words) < MIN_WORDS:
            return None
        size = self.shingle
        shingles = {" ".join(words[i:i + size]).encode() for i in range(len(words) - size + 1)}
        minhash = self._template.copy()  # empty: the template is never updated
        minhash.update_batch(shingles)
        signature: np.ndarray = minhash.hashvalues
        return signature

    def check(self, key: str, text: str) -> str | None:
        """The key of an earlier page *text* nearly copies; None when it
        copies none (it is then remembered) or is too short to tell."""
        signature = self.signature(text)
        if signature is None:
            return None
        band_hashes = self._band_hashes(signature)
        for bucket, band in zip(self._buckets, band_hashes, strict=True):
            slot = bucket.get(band)
            if slot is not None and float(np.mean(self._signatures[slot] == signature)) >= self.threshold:
                return self._keys[slot]
        self._remember(key, signature, band_hashes)
        return None

    def _band_hashes(self, signature: np.ndarray) -> list[int]:
        data = signature.tobytes()
        width = signature.itemsize * self.rows
        return [xxhash.xxh3_64_intdigest(data[i * width:(i + 1) * width]) for i in range(self.bands)]

    def _remember(self, key: str, signature: np.ndarray, band_hashes: list[int]) -> None:
        slot = self._next
        if slot < len(self._keys):  # the ring is full: the oldest page makes room
            for bucket, band in zip(self._buckets, self._band_hashes(self._signatures[slot]), strict=True):
                if bucket.get(band) == slot:
                    del bucket[band]
            self._keys[slot] = key
        else:
            if slot >= len(self._signatures):  # grow by half, up to the bound
                grown = min(self.keep, max(1024, len(self._signatures) * 3 // 2))
                self._signatures = np.resize(self._signatures, (grown, self._signatures.shape[1]))
            self._keys.append(key)
        self._signatures[slot] = signature
        for bucket, band in zip(self._buckets, band_hashes, strict=True):
            bucket.setdefault(band, slot)  # the first page of a band stays its witness
        self._next = (slot + 1) % self.keep

    def __len__(self) -> int:
        return len(self._keys)
