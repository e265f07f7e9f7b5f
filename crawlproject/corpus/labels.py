"""Page labels of a corpus (``url<TAB>category path``) and relevance by category.

A category is a ``/``-separated path of any depth (``course/cornell``); a
page is relevant to a category when its own category is that one or below it.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING

from crawlproject.web.urls import canonicalize

if TYPE_CHECKING:
    from collections.abc import Iterable


class LabelsError(ValueError):
    """The labels file cannot be read as url<TAB>category lines."""


def load_labels(path: str | Path) -> dict[str, str]:
    """Map canonical URL → category path; a header row ``url category`` is skipped."""
    labels: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8", newline="") as f:
            for line_number, row in enumerate(csv.reader(f, delimiter="\t"), 1):
                if not row or (line_number == 1 and row[0].strip().lower() == "url"):
                    continue
                if len(row) < 2 or not row[1].strip():
                    raise LabelsError(
                        f"line {line_number} of {path}: expected url<TAB>category, got {row!r}"
                    )
                labels[canonicalize(row[0])] = row[1].strip().strip("/")
    except FileNotFoundError:
        raise LabelsError(f"no such file: {path}") from None
    except UnicodeDecodeError as exc:
        raise LabelsError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise LabelsError(f"cannot read labels file {path}: {exc.strerror or exc}") from None
    return labels


def parse_categories(value: str, known: Iterable[str] = ()) -> tuple[str, ...]:
    """Comma-separated category paths, normalised. A category whose name
    holds a comma ("php/IMAP, POP3 and NNTP") stays whole when *known* (the
    categories that label pages, or a taxonomy's) holds it or a category
    below it; the spaces around its commas need not match.

    >>> parse_categories(" course, faculty/cornell/ ")
    ('course', 'faculty/cornell')
    >>> parse_categories("php/IMAP, POP3 and NNTP,php/Arrays", ["php/IMAP, POP3 and NNTP", "php/Arrays"])
    ('php/IMAP, POP3 and NNTP', 'php/Arrays')
    >>> parse_categories("php/IMAP,POP3 and NNTP", ["php/IMAP, POP3 and NNTP/imap_open"])
    ('php/IMAP, POP3 and NNTP',)
    """
    named = {_comma_key(path): path for category in known for path in _self_and_ancestors(category)}
    pieces = value.split(",")
    categories = []
    start = 0
    while start < len(pieces):
        end, category = start + 1, _normalised(pieces[start])
        for stop in range(len(pieces), start + 1, -1):  # the longest run of pieces that names a known category
            if (whole := named.get(_comma_key(",".join(pieces[start:stop])))) is not None:
                end, category = stop, whole
                break
        if category:
            categories.append(category)
        start = end
    return tuple(categories)


def _normalised(category: str) -> str:
    return category.strip().strip("/")


def _comma_key(category: str) -> str:
    return ",".join(part.strip() for part in _normalised(category).split(","))


def _self_and_ancestors(category: str) -> list[str]:
    parts = _normalised(category).split("/")
    return ["/".join(parts[:depth]) for depth in range(1, len(parts) + 1)]


def is_relevant(category: str | None, relevant: tuple[str, ...]) -> bool:
    """Whether *category* is one of *relevant* or below one of them.

    >>> is_relevant("course/cornell", ("course",))
    True
    >>> is_relevant("coursework", ("course",))
    False
    >>> is_relevant(None, ("course",))
    False
    """
    if not category:
        return False
    return any(category == c or category.startswith(c + "/") for c in relevant)
