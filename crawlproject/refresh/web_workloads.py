"""Workloads drawn from what an evolving web showed in a past window only, so
that nothing of the weeks a benchmark reports leaks into the queries."""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING

from crawlproject.refresh.simulate import WEEK
from crawlproject.refresh.workload import change_workload, generate_workload, head_tail_workload

if TYPE_CHECKING:
    from collections.abc import Container, Iterable

    from crawlproject.refresh.simulate import EvolvingWeb
    from crawlproject.refresh.workload import Query
    from crawlproject.web.text import TermAnalyzer


def window_workload(web: EvolvingWeb, weeks: float, analyzer: TermAnalyzer, size: int = 500, head: int = 50,
                    seed: int = 0, pages: Container[int] | None = None) -> list[Query]:
    """A workload built from what the web showed in its first *weeks* only
    (no later version leaks in): a head of the most mentioned page names
    (function and book names, in a manual) and a tail drawn from the
    headings (crawlproject.refresh.workload.head_tail_workload); of the
    *pages* only, when given (the repository's own, as the paper draws it)."""
    until = web.start + weeks * WEEK
    kept = [page for page in range(len(web.timeline)) if pages is None or page in pages]
    born = [page for page in kept if web.timeline[page][0][0] <= until and web.timeline[page][0][1] >= 0]
    texts = (web.texts[version] for page in kept for live_from, version in web.timeline[page]
             if live_from <= until and version >= 0)
    return head_tail_workload([web.names[page] for page in born], [_headings_html(web, page) for page in born],
                              texts, analyzer, size=size, head=head, seed=seed)


def heading_workload(web: EvolvingWeb, analyzer: TermAnalyzer, size: int = 500, seed: int = 0,
                     pages: Iterable[int] | None = None) -> list[Query]:
    """A workload drawn from the first headings of the *pages* (default:
    every page) — crawlproject.refresh.workload.generate_workload."""
    chosen = sorted(pages) if pages is not None else range(len(web.timeline))
    return generate_workload((_headings_html(web, page) for page in chosen), analyzer, size=size, seed=seed)


def _headings_html(web: EvolvingWeb, page: int) -> str:
    """The page's first title and headings, as the workload builders read headings."""
    return " ".join(f"<h1>{heading}</h1>" for heading in web.first_headings[page])


def changing_workload(web: EvolvingWeb, weeks: float, analyzer: TermAnalyzer, size: int = 500, seed: int = 0,
                      pages: Container[int] | None = None) -> list[Query]:
    """A workload aimed at what changed in the web's first *weeks* only
    (crawlproject.refresh.workload.change_workload): per page (of *pages*,
    when given), the words its versions of the window added or removed."""
    until = web.start + weeks * WEEK
    changes = []
    for page in range(len(web.timeline)):
        if pages is not None and page not in pages:
            continue
        versions = [version for live_from, version in web.timeline[page] if live_from <= until and version >= 0]
        words = [set(re.findall(r"\w+", web.texts[version].lower())) for version in versions]
        changed = set().union(*(before ^ after for before, after in itertools.pairwise(words)))
        if changed:
            changes.append((changed, web.names[page]))
    return change_workload(changes, analyzer, size=size, seed=seed)
