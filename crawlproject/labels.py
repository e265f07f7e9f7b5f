"""Page labels of a corpus (``url<TAB>category path``) and relevance by category.

A category is a ``/``-separated path of any depth (``course/cornell``); a
page is relevant to a category when its own category is that one or below it.
"""

from __future__ import annotations

import csv
from pathlib import Path

from crawlproject.urls import canonicalize


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


def parse_categories(value: str) -> tuple[str, ...]:
    """Comma-separated category paths, normalised.

    >>> parse_categories(" course, faculty/cornell/ ")
    ('course', 'faculty/cornell')
    """
    return tuple(c.strip().strip("/") for c in value.split(",") if c.strip().strip("/"))


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
