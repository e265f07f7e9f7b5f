"""What changed between two versions of a page.

The change measure is the corpus's own (phpdoc-evolving's versions.tsv):
the Jaccard distance between the sets of 5-word shingles of the two texts.
A page is *stale* when its stored copy is more than τ away from the live
one (docs/methods.md §5), or when the live page is gone.
"""

from __future__ import annotations

from dataclasses import dataclass

import xxhash
from scrapy.http import HtmlResponse

from crawlproject.web.extract import main_text
from crawlproject.web.page import Page
from crawlproject.web.text import TermAnalyzer, tokenize

#: What of a page the repository and its search engine index: its
#: main text (the collection's extraction, as a search engine indexes an
#: article: a sidebar's "recent posts" churn is no change of the page), or its
#: whole visible text, template (sidebars, footers) included, for comparison.
TEXTS = ("main", "whole")


def indexed_text(body: bytes, url: str, text: str = "main", content_type: str = "text/html") -> str:
    """The *text* (:data:`TEXTS`) of a page's *body* that the repository
    indexes; a page whose main text the extractor cannot find is indexed whole."""
    if text not in TEXTS:
        raise ValueError(f"text={text!r}: one of {', '.join(TEXTS)}")
    found = main_text(body, url) if text == "main" else None
    if found is not None:
        return found.text
    return Page.from_response(HtmlResponse(url=url, body=body, headers={"Content-Type": content_type})).text

SHINGLE_WORDS = 5


def shingles(text: str, width: int = SHINGLE_WORDS) -> frozenset[int]:
    """Hashes of the runs of *width* consecutive words (a shorter text: one run).

    >>> len(shingles("a b c d e f"))
    2
    """
    words = tokenize(text)
    if not words:
        return frozenset()
    runs = [words] if len(words) <= width else [words[i : i + width] for i in range(len(words) - width + 1)]
    # A stable hash (not Python's salted one): shingles kept between runs still compare.
    return frozenset(xxhash.xxh3_64_intdigest(" ".join(run).encode()) for run in runs)


def changed_fraction(old: frozenset[int], new: frozenset[int]) -> float:
    """Jaccard distance of two shingle sets (0: same words, 1: nothing in common).

    >>> changed_fraction(frozenset({1, 2, 3}), frozenset({2, 3, 4}))
    0.5
    """
    if not old and not new:
        return 0.0
    return 1.0 - len(old & new) / len(old | new)


@dataclass(frozen=True)
class Change:
    """What one refresh of a page observed."""

    fraction: float  #: Jaccard distance of the 5-word shingles (1.0: the page disappeared or appeared)
    added: frozenset[str]  #: index terms in the new version only
    removed: frozenset[str]  #: index terms in the old version only

    @classmethod
    def between(cls, old: str | None, new: str | None, analyzer: TermAnalyzer) -> Change:
        """*None* stands for no page (not yet created, or deleted)."""
        if old is None or new is None:
            before = frozenset(analyzer.terms(old)) if old is not None else frozenset()
            after = frozenset(analyzer.terms(new)) if new is not None else frozenset()
            return cls(0.0 if old is None and new is None else 1.0, after - before, before - after)
        before, after = frozenset(analyzer.terms(old)), frozenset(analyzer.terms(new))
        return cls(changed_fraction(shingles(old), shingles(new)), after - before, before - after)
