"""A query workload: queries with how often users send them.

File format (a real query log boiled down): one ``query<TAB>frequency`` per
line, ``#`` comments and blank lines skipped; the frequency is a positive
number (a count or a share).

No public query log may be used here, so :func:`generate_workload` derives
one from a corpus's own text, seeded: the candidate queries are the index
terms of the pages' titles and h1–h3 headings (single-term queries) and
their phrases of 2–3 consecutive content words (multi-term queries); a
candidate seen in more pages is likelier to be drawn (people ask about what
many pages are about); the drawn queries get Zipf frequencies
f(rank) ∝ rank^(−s), as query logs show, in order of popularity: the query
on most pages is the most frequent (ties in the seeded draw's order).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from crawlproject.web.text import TermAnalyzer

_HEADING = re.compile(r"<(title|h[1-3])\b[^>]*>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


class WorkloadError(ValueError):
    """A workload file that cannot be read."""


@dataclass(frozen=True)
class Query:
    text: str
    frequency: float


def read_workload(path: str | Path) -> list[Query]:
    queries = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise WorkloadError(f"no such workload file: {path}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        text, tab, frequency = line.rpartition("\t")
        try:
            value = float(frequency)
        except ValueError:
            value = -1.0
        if not tab or not text.strip() or not value > 0:
            raise WorkloadError(f"line {number} of {path}: expected query<TAB>frequency (> 0), got {line!r}")
        queries.append(Query(text.strip(), value))
    if not queries:
        raise WorkloadError(f"{path} holds no query")
    return queries


def write_workload(queries: Iterable[Query], path: str | Path) -> None:
    Path(path).write_text("".join(f"{q.text}\t{q.frequency:g}\n" for q in queries), encoding="utf-8")


def headings(html: str, tags: tuple[str, ...] = ("title", "h1", "h2", "h3")) -> list[str]:
    """The texts of a page's title and h1–h3 headings (or of the *tags* given), in page order.

    >>> headings("<title>Arrays — PHP Manual</title><h1>Arrays</h1><h2>Functions</h2>", ("h1",))
    ['Arrays']
    """
    return [" ".join(_TAG.sub(" ", match.group(2)).split()) for match in _HEADING.finditer(html)
            if match.group(1).lower() in tags]


def generate_workload(
    pages_html: Iterable[str],
    analyzer: TermAnalyzer,
    size: int = 500,
    single_term_share: float = 0.6,
    zipf_s: float = 1.0,
    seed: int = 0,
) -> list[Query]:
    """*size* queries (about *single_term_share* of one term) with Zipf
    frequencies (total 1,000,000, so they read as counts)."""
    rng = random.Random(seed)
    chosen = _draw_from_headings(pages_html, analyzer, size, single_term_share, rng, set())
    if not chosen:
        raise WorkloadError("the pages have no title or heading words to draw queries from")
    return _zipf(chosen, zipf_s)


def head_tail_workload(
    names: Iterable[str],
    pages_html: Iterable[str],
    texts: Iterable[str],
    analyzer: TermAnalyzer,
    size: int = 500,
    head: int = 50,
    single_term_share: float = 0.6,
    zipf_s: float = 1.0,
    seed: int = 0,
) -> list[Query]:
    """A workload whose most frequent queries are the names people look up.

    The head: the *head* *names* (pages' own names — function and book names
    in a manual, say) that the *texts* mention most (the pages holding the
    name as a word; for a name of several words, its rarest word), most
    mentioned first; a name on more than half of the texts is the site's
    own navigation and left out. The tail: *size* − *head* queries drawn from the
    headings of *pages_html* as :func:`generate_workload` draws them, most
    popular first. Zipf frequencies over head then tail, so the head carries most
    of the traffic. Give it pages of a past window only, and nothing of the
    weeks a benchmark reports leaks into the workload.
    """
    mentions: Counter[str] = Counter()
    pages = 0
    for text in texts:
        mentions.update(set(re.findall(r"\w+", text.lower())))
        pages += 1
    popularity: dict[str, int] = {}
    for name in names:
        words = re.findall(r"\w+", name.lower())
        if words and analyzer.terms(name) and name.lower() not in popularity:
            popularity[" ".join(name.lower().split())] = min(mentions[word] for word in words)
    ranked = sorted(popularity.items(), key=lambda item: (-item[1], item[0]))  # not the dict's order: it is seeded
    # A name on most pages is the site's own (its navigation), not one people look up.
    top = [name for name, count in ranked if 0 < count <= pages / 2][:head]
    rng = random.Random(seed)
    tail = _draw_from_headings(pages_html, analyzer, size - len(top), single_term_share, rng, set(top))
    if not top and not tail:
        raise WorkloadError("the pages have no names or headings to draw queries from")
    return _zipf(top + tail, zipf_s)


def change_workload(
    changes: Iterable[tuple[Iterable[str], str]],
    analyzer: TermAnalyzer,
    size: int = 500,
    single_term_share: float = 0.6,
    zipf_s: float = 1.0,
    seed: int = 0,
) -> list[Query]:
    """A workload aimed at what changes: people ask about what is new.

    *changes* gives, per page, the words its versions added or removed over a
    past window and the page's name. The single-term queries are the changed
    words; the two-term queries a changed word with a word of the name of a
    page where it changed ("final dataclasses": which PEP about dataclasses
    is final); a candidate that changed on more pages is likelier to be
    drawn, and Zipf frequencies go in that order. Give it a past window only,
    and nothing of the weeks a benchmark reports leaks in.
    """
    single: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    for changed, name in changes:
        words = {word for word in changed if analyzer.terms(word)}
        named = [word for word in dict.fromkeys(re.findall(r"\w+", name.lower())) if analyzer.terms(word)]
        single.update(words)
        pairs.update({f"{word} {other}" for word in words for other in named if other != word})
    drawn = _draw_ranked(single, pairs, size, single_term_share, random.Random(seed))
    if not drawn:
        raise WorkloadError("nothing changed in the window to draw queries from")
    return _zipf(drawn, zipf_s)


def _zipf(queries: list[str], zipf_s: float) -> list[Query]:
    """Frequencies f(rank) ∝ rank^(−s), in list order, totalling 1,000,000."""
    weights = [1.0 / (rank**zipf_s) for rank in range(1, len(queries) + 1)]
    scale = 1_000_000 / sum(weights)
    return [Query(text, round(weight * scale, 3)) for text, weight in zip(queries, weights, strict=True)]


def _draw_from_headings(pages_html: Iterable[str], analyzer: TermAnalyzer, size: int, single_term_share: float,
                        rng: random.Random, exclude: set[str]) -> list[str]:
    """*size* queries from the pages' headings, single terms and 2–3-word
    phrases, the one on most pages first."""
    single: Counter[str] = Counter()
    phrases: Counter[str] = Counter()
    for html in pages_html:
        seen_single: set[str] = set()
        seen_phrases: set[str] = set()
        for text in headings(html):
            words = [word for word in re.findall(r"\w+", text.lower()) if analyzer.terms(word)]
            seen_single.update(words)
            for width in (2, 3):
                seen_phrases.update(" ".join(words[i : i + width]) for i in range(len(words) - width + 1))
        single.update(seen_single - exclude)
        phrases.update(seen_phrases - exclude)
    return _draw_ranked(single, phrases, size, single_term_share, rng)


def _draw_ranked(single: Counter[str], several: Counter[str], size: int, single_term_share: float,
                 rng: random.Random) -> list[str]:
    """*size* distinct queries, about *single_term_share* of them from *single*
    (one term) and the rest from *several*, each drawn with probability ∝ the
    pages it is in; the one on most pages first."""
    singles = round(size * single_term_share)
    drawn = _draw(single, singles, rng) + _draw(several, size - singles, rng)
    popularity = single | several
    return sorted(drawn, key=lambda text: -popularity[text])  # stable: ties keep the seeded draw's order


def _draw(candidates: Counter[str], count: int, rng: random.Random) -> list[str]:
    """*count* distinct candidates, each drawn with probability ∝ the pages it is in."""
    pool = sorted(candidates.items())  # not the sets' order: that changes with PYTHONHASHSEED
    chosen: list[str] = []
    if not pool or count <= 0:
        return chosen
    keys = sorted(((rng.random() ** (1.0 / pages), text) for text, pages in pool), reverse=True)  # weighted, no repeats
    return [text for _, text in keys[:count]]
