"""Paragraphs of real pages, by topic: the text a generated web is made of.

The synthetic web (crawlproject.replay.synthetic) writes each page from a
few paragraphs of the bundled corpora's real pages of one topic, so that its
text reads like the web the crawler is tuned on, and two pages share a
paragraph now and then but are near-copies only where the generator made
them so. A paragraph here is a run of about :data:`PARAGRAPH_WORDS` words of
one page's extracted text (the extractor keeps no paragraph marks); runs
shorter than :data:`MIN_WORDS` and repeats (navigation, footers) are dropped.

The pool is a gzipped JSON file ``{"topics": {topic: [paragraph, …]}}``,
cached under the cache folder by the corpora it was read from.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from crawlproject.corpus.reader import load_corpus

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

PARAGRAPH_WORDS = 60
MIN_WORDS = 20
#: A topic needs this many paragraphs to give pages that differ.
MIN_TOPIC_PARAGRAPHS = 40


class ParagraphsError(ValueError):
    """A corpus folder cannot give paragraphs."""


def split_paragraphs(text: str, words: int = PARAGRAPH_WORDS, min_words: int = MIN_WORDS) -> Iterator[str]:
    """Runs of *words* words of *text* (the last one kept if it is long enough).

    >>> list(split_paragraphs("a b c d e f g", words=3, min_words=2))
    ['a b c', 'd e f']
    """
    tokens = text.split()
    for start in range(0, len(tokens), words):
        run = tokens[start:start + words]
        if len(run) >= min_words:
            yield " ".join(run)


def corpus_files(folder: str | Path) -> tuple[Path, Path]:
    """The WARC and the labels of a corpus folder (crawlproject's layout)."""
    folder = Path(folder)
    warcs = sorted(folder.glob("*.warc.gz")) + sorted(folder.glob("*.warc"))
    labels = folder / "labels.tsv"
    if not warcs or not labels.is_file():
        raise ParagraphsError(f"{folder} is not a corpus folder: it needs a *.warc.gz and a labels.tsv")
    return warcs[0], labels


def topic_paragraphs(folders: Iterable[str | Path], cache_dir: str | Path | None = ".cache") -> dict[str, list[str]]:
    """Paragraphs by topic (a page's label) over the corpora in *folders*,
    in a stable order: the same corpora give the same pool."""
    pool: dict[str, list[str]] = {}
    seen: set[str] = set()
    for folder in folders:
        warc, labels = corpus_files(folder)
        corpus = load_corpus(warc, labels, cache_dir)
        for url in sorted(corpus.text):
            topic = corpus.labels.get(url)
            if topic is None:
                continue
            for paragraph in split_paragraphs(corpus.text[url]):
                if paragraph not in seen:
                    seen.add(paragraph)
                    pool.setdefault(topic, []).append(paragraph)
    kept = {topic: found for topic, found in sorted(pool.items()) if len(found) >= MIN_TOPIC_PARAGRAPHS}
    if not kept:
        raise ParagraphsError(f"no topic of {', '.join(map(str, folders))} has {MIN_TOPIC_PARAGRAPHS} paragraphs")
    return kept


def paragraph_file(folders: list[str | Path], cache_dir: str | Path = ".cache") -> Path:
    """The pool of *folders* as a file the replay reads (made once, then cached)."""
    names = "\n".join(str(Path(folder).resolve()) for folder in folders)
    path = Path(cache_dir) / f"paragraphs-{hashlib.sha256(names.encode()).hexdigest()[:16]}.json.gz"
    if not path.is_file():
        pool = topic_paragraphs(folders, cache_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")  # processes building it at once never share a file
        with gzip.open(tmp, "wt", encoding="utf-8") as f:
            json.dump({"topics": pool}, f)
        tmp.replace(path)
    return path
