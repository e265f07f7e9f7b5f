"""What a link is described by, for the online link learner
(crawlproject.models.online_link_model): its tokens — anchor, context, URL
words, host, extension, depth, whether it leaves its page's host, how
relevant its page was — hashed into features in which every kind weighs
the same, and the sibling groups (path cells) its history is read from.
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import numpy as np
import xxhash

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

N_HASHED = 2**18
#: the sibling groups a link's history is read from: its host, its first
#: directory, its first two directories, its own directory, and the page
#: it was found on (links of one page share its fate)
HISTORY_LEVELS = 5
LEVELS = ("host", "directory 1", "directories 1-2", "own directory", "page")
NAMES_KEPT = 50_000  # tokens remembered by name (LinkFeaturizer.names)
TOKENS_CACHED = 200_000  # tokens whose hashed index is remembered (LinkFeaturizer._known)
_URL_WORD = re.compile(r"[a-z]+|\d+")
_EXTENSION = re.compile(r"\.([a-z0-9]{1,5})$")


def _hash(token: str) -> int:
    return xxhash.xxh3_64_intdigest(token.encode()) % N_HASHED


def relevance_bucket(relevance: float) -> str:
    """The ``p:`` feature of a link: how relevant its page was, coarsely.

    >>> relevance_bucket(0.0), relevance_bucket(0.07), relevance_bucket(0.9)
    ('0', '0.05', '0.4')
    """
    for edge in (0.4, 0.2, 0.1, 0.05, 0.02):
        if relevance >= edge:
            return str(edge)
    return "0" if relevance <= 0 else "0.0"


def link_tokens(anchor_terms: Iterable[str], context_terms: Iterable[str], url: str, page_url: str,
                page_relevance: float, hops: int = 1) -> list[str]:
    """The sparse tokens of a link (before hashing); *hops*: links from the
    nearest seed to the link's target (a seed's link: 1).

    >>> link_tokens(["cours"], ["fall"], "http://www.cs.x.edu/courses/cs414/", "http://www.cs.x.edu/", 0.12)
    ['a:cours', 'c:fall', 'u:courses', 'u:cs', 'u:414', 'h:www.cs.x.edu', 'x:', 'd:2', 's:same', 'p:0.1', 'k:1']
    """
    parts = urlsplit(url.lower())
    path = parts.path
    words = _URL_WORD.findall(path + " " + parts.query)
    extension = _EXTENSION.search(path.rsplit("/", 1)[-1])
    depth = min(max(path.count("/") - 1, 0), 6)  # directories above the file
    same = parts.hostname == urlsplit(page_url.lower()).hostname
    return [
        *(f"a:{t}" for t in anchor_terms), *(f"c:{t}" for t in context_terms), *(f"u:{w}" for w in words),
        f"h:{parts.hostname or ''}", f"x:{extension.group(1) if extension else ''}", f"d:{depth}",
        "s:same" if same else "s:out", f"p:{relevance_bucket(page_relevance)}", f"k:{min(hops, 5)}",
    ]


def path_cells(url: str, found_on: str = "") -> tuple[int, ...]:
    """The history cells of a link to *url* found on the page *found_on*:
    its host, first directory, first two directories, own directory (a
    file's name is no directory) and the page, as hashes (0: none).

    >>> a = path_cells("http://h.org/courses/cs414/hw1.html", "http://h.org/courses/")
    >>> b = path_cells("http://h.org/courses/cs415/", "http://h.org/courses/")
    >>> a[:2] == b[:2], a[2] == b[2], a[4] == b[4]
    (True, False, True)
    """
    parts = urlsplit(url.lower())
    directories = parts.path.split("/")[1:-1]  # the last piece is a file name (or empty)
    host = parts.hostname or ""
    cells = [host]
    for depth in (1, 2):
        cells.append(host + "/" + "/".join(directories[:depth]) if len(directories) >= depth else "")
    cells.append(host + "/" + "/".join(directories) + "/" if directories else "")
    cells.append("page " + found_on if found_on else "")
    return tuple(xxhash.xxh3_64_intdigest(cell.encode()) if cell else 0 for cell in cells)


@dataclass
class LinkFeatures:
    """What a queued link is described by, compact enough to keep for every
    queued link (the hashed features' indices and weights)."""

    indices: np.ndarray  # int32, sorted
    values: np.ndarray  # float32, the hashed block L2-normalised
    prior: float
    parent: float  # its page's relevance
    cells: tuple[int, ...]  # its path history cells (path_cells)


class LinkFeaturizer:
    """Tokens → hashed features in which every kind (anchor, context, URL,
    …) weighs the same, L2-normalised (as the link-value model's). The last
    :data:`NAMES_KEPT` tokens seen are remembered by their index, to say in
    words what a model has learnt."""

    def __init__(self) -> None:
        self.names: OrderedDict[int, str] = OrderedDict()
        #: token → (hashed index, kind): a crawl meets the same tokens again and again (hosts,
        #: URL words, the topic's terms): a look-up instead of encoding and hashing each every time
        self._known: dict[str, tuple[int, str]] = {}

    def featurize(self, tokens: Sequence[str], prior: float, parent: float, cells: tuple[int, ...]) -> LinkFeatures:
        """One link's features (:meth:`featurize_many` of one)."""
        return self.featurize_many([tokens], [prior], parent, [cells])[0]

    def featurize_many(self, token_lists: Sequence[Sequence[str]], priors: Sequence[float], parent: float,
                       cells: Sequence[tuple[int, ...]]) -> list[LinkFeatures]:
        """The features of a page's links (*parent*: the page's relevance):
        each token a dictionary look-up, the page's arrays made at once."""
        known, remember, names = self._known, self._remember, self.names
        all_indices: list[int] = []
        all_values: list[float] = []
        ends = []
        for tokens in token_lists:
            entries = []
            per_kind: dict[str, int] = {}
            for token in dict.fromkeys(tokens):  # each distinct token once, in order
                entry = known.get(token) or remember(token)
                if entry[0] not in names:
                    names[entry[0]] = token
                    if len(names) > NAMES_KEPT:
                        names.popitem(last=False)
                entries.append(entry)
                per_kind[entry[1]] = per_kind.get(entry[1], 0) + 1
            # every kind weighs the same: its tokens 1/√(their count); tokens hashed alike add up
            weight_of = {kind: 1 / math.sqrt(count) for kind, count in per_kind.items()}
            weights: dict[int, float] = {}
            for index, kind in entries:
                weights[index] = weights.get(index, 0.0) + weight_of[kind]
            ordered = sorted(weights)
            norm = math.sqrt(sum(w * w for w in weights.values()))
            scale = 1 / norm if norm > 0 else 1.0
            all_indices += ordered
            all_values += [weights[i] * scale for i in ordered]
            ends.append(len(all_indices))
        indices = np.array(all_indices, dtype=np.int32)
        values = np.array(all_values, dtype=np.float32)
        starts = [0, *ends[:-1]]
        return [
            LinkFeatures(indices[start:end], values[start:end], float(prior), float(parent), link_cells)
            for start, end, prior, link_cells in zip(starts, ends, priors, cells, strict=True)
        ]

    def _remember(self, token: str) -> tuple[int, str]:
        """A token not met lately: its hashed index and kind."""
        if len(self._known) >= TOKENS_CACHED:
            self._known.clear()
        entry = self._known[token] = (_hash(token), token.partition(":")[0])
        return entry
