"""Text helpers: tokens, stoplist, stemming, TF vectors and cosine (docs/methods.md §1, §2).

Pure functions over plain dicts so strategies stay cheap: a page's TF vector
is a ``Counter`` of terms, and cosine works on any two such mappings.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import resources

import Stemmer

# The Dialog nine (docs/methods.md §1) are all in scikit-learn's maintained English list,
# which stopwords.txt holds as data (importing scikit-learn would cost every
# crawl process a second at start-up); tests check the two agree.
DIALOG_STOPWORDS = frozenset(
    {"an", "and", "by", "for", "from", "of", "the", "to", "with"}
)
# Read as package data, not through __file__: in a Scrapyd egg the package is a zip.
ENGLISH_STOPWORDS = frozenset(
    line.strip()
    for line in resources.files("crawlproject.web").joinpath("stopwords.txt").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
)
STOPWORDS = ENGLISH_STOPWORDS | DIALOG_STOPWORDS

# Scripts written without spaces between words (Han, kana, Hangul): a run of
# them becomes its overlapping character bigrams, as Lucene's CJK analyzer
# does; any other run of letters and digits is one word.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(f"([{_CJK}]+)|[^\\W_{_CJK}]+")
_HAS_CJK = re.compile(f"[{_CJK}]")
_WORD = re.compile(r"[^\W_]+")


def tokenize(text: str) -> list[str]:
    """Case-folded word tokens of *text*, in any script.

    >>> tokenize("CS 100: Introduction to Programming!")
    ['cs', '100', 'introduction', 'to', 'programming']
    >>> tokenize("Übung zur Vorlesung")
    ['übung', 'zur', 'vorlesung']
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    if not _HAS_CJK.search(text):
        return _WORD.findall(text)  # the common case, in one C call
    tokens = []
    for match in _TOKEN.finditer(text):
        run = match.group()
        if match.group(1) is None or len(run) == 1:
            tokens.append(run)
        else:
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


class TermAnalyzer:
    """Turns text into index terms: tokens, minus stopwords, optionally stemmed.

    >>> TermAnalyzer(stem=True).terms("The courses and lectures")
    ['cours', 'lectur']
    >>> TermAnalyzer(stem=False).terms("The courses and lectures")
    ['courses', 'lectures']
    """

    def __init__(self, stem: bool = True, stopwords: frozenset[str] = STOPWORDS):
        self.stem = stem
        self.stopwords = stopwords
        self._stem_words = porter_stemmer().stemWords if stem else None

    def terms(self, text: str) -> list[str]:
        words = [w for w in tokenize(text) if w not in self.stopwords and (len(w) > 1 or w > "\u3000")]
        if self._stem_words is None:
            return words
        return self._stem_words(words)  # type: ignore[no-any-return]

    def vector(self, text: str) -> Counter[str]:
        """Term-frequency vector of *text*."""
        return Counter(self.terms(text))

    @property
    def key(self) -> tuple[bool, frozenset[str]]:
        """What makes two analyzers give the same terms (a cache's key)."""
        return self.stem, self.stopwords

    # A saved classifier pickles its analyzer; the C stemmer is rebuilt on load.
    def __getstate__(self) -> dict[str, object]:
        return {"stem": self.stem, "stopwords": self.stopwords}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(**state)  # type: ignore[misc]


@lru_cache(maxsize=1)
def porter_stemmer() -> Stemmer.Stemmer:
    # "porter" is the original Porter algorithm the literature used; PyStemmer
    # is a maintained C implementation of it.
    return Stemmer.Stemmer("porter")


def norm(vector: Mapping[str, float]) -> float:
    """Euclidean norm of a sparse vector.

    >>> norm({"a": 3, "b": 4})
    5.0
    """
    return math.sqrt(sum(v * v for v in vector.values()))


def cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Cosine similarity of two sparse vectors; 0.0 if either is empty (docs/methods.md §2).

    >>> cosine({"course": 1}, {"course": 2, "lecture": 2})
    0.7071067811865475
    >>> cosine({"course": 1}, {})
    0.0
    """
    if len(a) > len(b):
        a, b = b, a
    dot = sum(weight * b.get(term, 0.0) for term, weight in a.items())
    if dot == 0:
        return 0.0
    return dot / (norm(a) * norm(b))


def join_text(parts: Iterable[str]) -> str:
    """Join text fragments with single spaces, dropping empty ones.

    >>> join_text(["  a ", "", "b"])
    'a b'
    """
    return " ".join(p.strip() for p in parts if p and p.strip())
