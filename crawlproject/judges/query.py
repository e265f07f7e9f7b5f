"""Judges of a topic given as words (docs/methods.md §2's sim(q, p), and better).

* :class:`TfQueryJudge` (``query-tf``): the cosine of the TF vectors of the
  query and the page — docs/methods.md §2 as the literature ran it, kept as a baseline.
  A word common everywhere ("page", "information") counts as much as a rare
  one that names the topic.
* :class:`QueryJudge` (``query``): the cosine of log-TF × IDF vectors,
  where a term's IDF is what the crawl knows of how common it is. Before the
  crawl has pages, that is the language's: wordfreq's frequency f(t) of the
  word in English gives the chance that a page of L words holds it,
  1 − e^(−L·f(t)). Each fetched page then counts as one document, and the
  document frequency is the crawl's own, the language's prior worth M pages:

      df(t) = df_crawl(t) + M·(1 − e^(−L·f(t)))       N = n_crawl + M
      idf(t) = log(N / df(t))

  so a word on every page the crawl meets (the site's name, its navigation)
  stops telling pages apart, as a word common in English never did. L and M
  are fixed (a typical page's length, a prior worth a few dozen pages), not
  tuned on any corpus.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar

from crawlproject import config
from crawlproject.judges.base import PageJudge
from crawlproject.judges.calibration import CrawlCalibration
from crawlproject.web.text import cosine

if TYPE_CHECKING:
    from collections.abc import Mapping

    from crawlproject.judges.base import JudgeContext
    from crawlproject.search.engine import IndexIdf
    from crawlproject.web.page import Page
    from crawlproject.web.text import TermAnalyzer

#: Words on a typical page: how many chances a word has to appear on one.
PAGE_WORDS = 300
#: How many fetched pages the language's document frequencies weigh as.
PRIOR_PAGES = 50
#: The frequency of a word English has never seen (below wordfreq's least).
UNSEEN_FREQUENCY = 1e-9


class TfQueryJudge(PageJudge):
    """The cosine of the query's and the page's TF vectors (docs/methods.md §2)."""

    name: ClassVar[str] = "query-tf"
    reads_query: ClassVar[bool] = True

    def __init__(self, query: Mapping[str, float], analyzer: TermAnalyzer):
        super().__init__()
        self.query, self.analyzer = query, analyzer
        self.calibration = CrawlCalibration()  # a cosine is no probability

    @classmethod
    def from_settings(cls, context: JudgeContext) -> PageJudge:
        """With ``FOCUS_IDF_INDEX``: TF-IDF, the IDF a search index's."""
        index = config.get_str(context.settings, "FOCUS_IDF_INDEX")
        if not index:
            return cls(context.query, context.analyzer)
        from crawlproject.search.engine import IndexIdf

        return IndexQueryJudge(context.query, context.analyzer, IndexIdf(index))

    def score(self, page: Page) -> float:
        return cosine(self.query, page.vector(self.analyzer))


@lru_cache(maxsize=2)
def english_frequencies(stem: bool) -> dict[str, float]:
    """Word (or Porter stem: the sum over its words) → frequency in English."""
    import wordfreq

    from crawlproject.web.text import porter_stemmer

    words = wordfreq.get_frequency_dict("en")
    if not stem:
        return dict(words)
    stems: dict[str, float] = {}
    for root, frequency in zip(porter_stemmer().stemWords(list(words)), words.values(), strict=True):
        stems[root] = stems.get(root, 0.0) + frequency
    return stems


class TermRarity:
    """How rare each term is where the crawl is: the language's document
    frequencies, corrected by the crawl's own pages as they arrive."""

    def __init__(self, stem: bool, page_words: int = PAGE_WORDS, prior_pages: int = PRIOR_PAGES):
        self.frequencies = english_frequencies(stem)
        self.page_words, self.prior_pages = page_words, prior_pages
        self.pages = 0
        self.document_frequency: Counter[str] = Counter()
        self._prior_share: dict[str, float] = {}

    def prior_share(self, term: str) -> float:
        """The share of pages holding *term*, by the language alone."""
        share = self._prior_share.get(term)
        if share is None:
            frequency = self.frequencies.get(term, UNSEEN_FREQUENCY)
            share = self._prior_share[term] = -math.expm1(-self.page_words * frequency)
        return share

    def idf(self, term: str) -> float:
        total = self.pages + self.prior_pages
        found = self.document_frequency.get(term, 0) + self.prior_pages * self.prior_share(term)
        return math.log(total / found) if found > 0 else math.log(total)

    def observe(self, terms: Mapping[str, float]) -> None:
        """A fetched page's terms count as one document of the crawl."""
        self.pages += 1
        self.document_frequency.update(terms.keys())


class QueryJudge(PageJudge):
    """The cosine of log-TF × IDF vectors, the IDF the crawl's own (above)."""

    name: ClassVar[str] = "query"
    reads_query: ClassVar[bool] = True

    def __init__(self, query: Mapping[str, float], analyzer: TermAnalyzer, rarity: TermRarity | None = None):
        super().__init__()
        self.query, self.analyzer = query, analyzer
        self.rarity = rarity or TermRarity(analyzer.stem)
        self.calibration = CrawlCalibration()

    @classmethod
    def from_settings(cls, context: JudgeContext) -> PageJudge:
        return cls(context.query, context.analyzer)

    def weigh(self, vector: Mapping[str, float]) -> dict[str, float]:
        idf = self.rarity.idf
        return {term: (1.0 + math.log(count)) * idf(term) for term, count in vector.items() if count > 0}

    def score(self, page: Page) -> float:
        return cosine(self.weigh(self.query), self.weigh(page.vector(self.analyzer)))

    def relevance(self, page: Page) -> float:
        """Scored with what the crawl knew before this page; then the page
        counts as one of the crawl's documents."""
        relevance = super().relevance(page)
        self.rarity.observe(page.vector(self.analyzer))
        return relevance


class IndexQueryJudge(PageJudge):
    """The cosine of TF-IDF vectors with a search index's IDF
    (``FOCUS_IDF_INDEX``; docs/methods.md §4: the symbiosis paper's improvement)."""

    name: ClassVar[str] = "query-index-idf"

    def __init__(self, query: Mapping[str, float], analyzer: TermAnalyzer, idf: IndexIdf):
        super().__init__()
        self.analyzer, self.idf = analyzer, idf
        self.query = idf.weigh(query)
        self.calibration = CrawlCalibration()

    def score(self, page: Page) -> float:
        return cosine(self.query, self.idf.weigh(page.vector(self.analyzer)))


class AnyTermJudge(PageJudge):
    """Fish-Search's binary relevance (Fish-Search's own judge): 1 if the
    page shares any term with the query, else 0."""

    name = "any-term"

    def __init__(self, query: Mapping[str, float], analyzer: TermAnalyzer):
        super().__init__()
        self.query, self.analyzer = query, analyzer

    def score(self, page: Page) -> float:
        terms = page.vector(self.analyzer)
        return 1.0 if any(term in terms for term in self.query) else 0.0
