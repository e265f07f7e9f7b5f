"""Training examples for the taxonomy classifier, and how good a model is.

Examples are pages with a category: the categories come from a labels file
(``url<TAB>category path``, a corpus's labels or a user's own examples), the
pages' text from a WARC or from a crawl's page repository (``pages.jsonl``
plus ``pages/<md5>.html``). Text is extracted exactly as the crawler does
(crawlproject.web.page), so the model sees at training what it sees in a crawl.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from scrapy.http import HtmlResponse
from sklearn.metrics import precision_recall_fscore_support
from sklearn.model_selection import train_test_split

from crawlproject.corpus.labels import load_labels
from crawlproject.models.taxonomy import depth_of
from crawlproject.models.taxonomy_classifier import ModelError, ModelSettings, TaxonomyClassifier
from crawlproject.web.content import is_html_content_type
from crawlproject.web.page import Page

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from crawlproject.corpus.reader import Corpus

logger = logging.getLogger(__name__)


@dataclass
class Examples:
    urls: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    #: labelled URLs with no usable page (absent, not HTML, or no text)
    missing: int = 0

    def add(self, url: str, text: str, category: str) -> None:
        if not text.strip():
            self.missing += 1
            return
        self.urls.append(url)
        self.texts.append(text)
        self.categories.append(category)

    def __len__(self) -> int:
        return len(self.urls)

    def describe(self) -> str:
        """How ``scrapy train`` and ``scrapy topics`` both count a labelled corpus."""
        return (
            f"{len(self)} labelled pages in {len(set(self.categories))} categories"
            f" ({self.missing} labelled URLs without a usable page)"
        )

    def subset(self, rows: Sequence[int]) -> Examples:
        return Examples(
            [self.urls[r] for r in rows], [self.texts[r] for r in rows],
            [self.categories[r] for r in rows],
        )


def examples_from_warc(labels: str | Path, warc: str | Path, cache_dir: str | Path | None = ".cache") -> Examples:
    from crawlproject.corpus.reader import load_corpus

    return examples_from_corpus(load_corpus(warc, labels, cache_dir))


def examples_from_corpus(corpus: Corpus) -> Examples:
    examples = Examples()
    for url, category in sorted(corpus.labels.items()):
        examples.add(url, corpus.text.get(url, ""), category)
    return examples


def examples_from_pages(labels: str | Path, crawl: str | Path) -> Examples:
    """Labelled pages of a crawl's page repository (FOCUS_STORE_PAGES)."""
    categories = load_labels(labels)
    examples = Examples()
    seen = set()
    for url, text in crawl_pages(crawl, categories.__contains__):
        seen.add(url)
        if text is None:
            examples.missing += 1
        else:
            examples.add(url, text, categories[url])
    examples.missing += len(set(categories) - seen)
    return examples


def crawl_pages(
    crawl: str | Path, wanted: Callable[[str], bool] = lambda url: True
) -> Iterator[tuple[str, str | None]]:
    """(URL, text) of each *wanted* page of a crawl's page repository
    (FOCUS_STORE_PAGES), once each; the text is None for a page that is not
    HTML or not stored."""
    crawl = Path(crawl)
    index = crawl / "pages.jsonl"
    if not index.is_file():
        raise ModelError(f"{crawl} has no pages.jsonl: is it a crawl's output folder (FOCUS_STORE_PAGES)?")
    seen = set()
    with index.open(encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            url = record["url"]
            if url in seen or not wanted(url):
                continue
            seen.add(url)
            page_file = crawl / record["file"]
            if not page_file.is_file() or not is_html_content_type(record.get("content_type")):
                yield url, None
                continue
            response = HtmlResponse(
                url=url, body=page_file.read_bytes(),
                headers={"Content-Type": record.get("content_type") or "text/html"},
            )
            yield url, Page.from_response(response).text


def holdout_report(
    examples: Examples, settings: ModelSettings, fraction: float = 0.2, seed: int = 1
) -> dict[str, Any]:
    """Train on all but *fraction* of the examples and measure the rest:
    accuracy of the best leaf at every level of the taxonomy (with the
    majority-category accuracy beside it), and precision/recall per top
    category."""
    rows = np.arange(len(examples))
    counts = Counter(examples.categories)
    stratify = examples.categories if min(counts.values()) >= 2 else None
    train_rows, test_rows = train_test_split(
        rows, test_size=fraction, random_state=seed, stratify=stratify
    )
    train, test = examples.subset(train_rows), examples.subset(test_rows)
    model = TaxonomyClassifier(settings).fit(train.texts, train.categories)
    leaves = model.best_leaves(model.classify_texts(test.texts))
    predicted = [model.taxonomy.paths[leaf] for leaf in leaves]
    depth = max(depth_of(c) for c in examples.categories)
    levels = []
    for level in range(1, depth + 1):
        pairs = [
            (_prefix(truth, level), _prefix(guess, level))
            for truth, guess in zip(test.categories, predicted, strict=True)
            if depth_of(truth) >= level
        ]
        if not pairs:
            continue
        majority = Counter(_prefix(c, level) for c in train.categories if depth_of(c) >= level)
        top = majority.most_common(1)[0][0] if majority else ""
        levels.append({
            "depth": level,
            "pages": len(pairs),
            "accuracy": sum(t == g for t, g in pairs) / len(pairs),
            "majority": sum(t == top for t, _ in pairs) / len(pairs),
        })
    truth_top = [_prefix(c, 1) for c in test.categories]
    guess_top = [_prefix(c, 1) for c in predicted]
    names = sorted(set(truth_top))
    precision, recall, f1, support = precision_recall_fscore_support(
        truth_top, guess_top, labels=names, zero_division=0
    )
    return {
        "train_pages": len(train),
        "test_pages": len(test),
        "levels": levels,
        "categories": [
            {"category": n, "precision": float(p), "recall": float(r), "f1": float(f), "pages": int(s)}
            for n, p, r, f, s in zip(names, precision, recall, f1, support, strict=True)
        ],
    }


def format_report(report: dict[str, Any]) -> str:
    lines = [
        f"Held-out test: trained on {report['train_pages']} pages, tested on {report['test_pages']}",
        "",
        "  level  pages  accuracy  (majority category)",
    ]
    for level in report["levels"]:
        lines.append(
            f"  {level['depth']:>5}  {level['pages']:>5}  {level['accuracy']:>8.1%}  ({level['majority']:.1%})"
        )
    lines += ["", "  top category          precision  recall     F1  pages"]
    for row in report["categories"]:
        lines.append(
            f"  {row['category'][:20]:<20}  {row['precision']:>9.1%}  {row['recall']:>6.1%}"
            f"  {row['f1']:>5.1%}  {row['pages']:>5}"
        )
    return "\n".join(lines)


def _prefix(category: str, depth: int) -> str:
    """The ancestor of *category* at *depth*.

    >>> _prefix("course/cornell/cs100", 2)
    'course/cornell'
    """
    return "/".join(category.split("/")[:depth])


# -- a topic from example pages (scrapy train --examples) ----------------------------------

RELEVANT, IRRELEVANT = "relevant", "irrelevant"
#: Fewer examples of a class than this and the report warns they are too few to trust.
TOO_FEW = 10


def least_like(examples: Sequence[str], candidates: dict[str, str], count: int, stem: bool = True) -> list[str]:
    """The *count* candidate pages (URL → text) that look least like the
    *examples*: by the cosine of their TF-IDF vectors to the examples'
    centroid, the least similar first — automatic negatives, "pages near the
    seeds that are not what the user showed".

    >>> least_like(["jazz concert tickets", "jazz festival"], {"a": "jazz concert", "b": "tax forms", "c": "festival"}, 1)
    ['b']
    """  # noqa: E501 (a doctest's output line)
    from sklearn.feature_extraction.text import TfidfVectorizer

    from crawlproject.web.text import TermAnalyzer

    urls = [url for url, text in candidates.items() if text.strip()]
    if not urls or count <= 0:
        return []
    analyzer = TermAnalyzer(stem=stem)
    vectorizer = TfidfVectorizer(analyzer=analyzer.terms)
    matrix = vectorizer.fit_transform([*examples, *(candidates[url] for url in urls)])
    centroid = np.asarray(matrix[: len(examples)].mean(axis=0)).ravel()
    similarity = matrix[len(examples):] @ centroid
    order = np.argsort(similarity, kind="stable")
    return [urls[i] for i in order[:count]]
