"""Topics from any labelled corpus (docs/methods.md §3).

Every category node with at least ``min_pages`` pages is a topic, at any
depth of the ``/``-separated taxonomy. A topic gives the crawler its
keywords and seeds; it gives the evaluator the description
(the examples' text), the relevant set (the category and everything below
it) and the targets (relevant pages that are not seeds).

* Task 1 starts from examples: seeds are a random sample of relevant pages.
* Task 2 starts from neighbors: pages two links before the relevant set
  (in-linkers of in-linkers; one link when there are none), never relevant.

Three kinds of query (the keywords a crawler gets):

* ``category``: the words of the category path (docs/methods.md §3), e.g. "faculty misc"
  — what the literature's DMOZ topics gave; in a corpus whose categories are
  named by role and host it is not what a person would type.
* ``name``: the topic as a person names it in a few words — where (the
  path's first part: the site, the class) and what (its last part): "gnuplot
  smooth", "php reflection", "course cornell" (the judges measured
  on queries people write).
* ``seed-terms``: the k terms a person describing the topic would choose —
  frequent across *many* seed pages and rare in the corpus — scored by their
  contribution to the Kullback–Leibler divergence of the seeds' document
  frequencies from the corpus's (Carpineto et al. 2001, query expansion):
  p_s(t)·log(p_s(t)/p_c(t)). A name one seed repeats scores low (p_s small);
  a word on every seed and every page scores 0.
"""

from __future__ import annotations

import fnmatch
import json
import math
import random
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from crawlproject.corpus.labels import is_relevant
from crawlproject.web.text import STOPWORDS, TermAnalyzer
from crawlproject.web.urls import canonicalize

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from crawlproject.corpus.reader import Corpus


QUERY_KINDS = ("category", "name", "seed-terms")
#: k of the seed-terms query: fixed in advance, the same for every corpus
#: (a short query, as people type: most web queries have 2–4 words, a topic
#: description a few more).
SEED_TERMS_K = 8



@dataclass
class Topic:
    id: str
    category: str
    keywords: list[str]
    seeds: list[str]  # Task 1: relevant examples
    neighbors: list[str]  # Task 2: pages a few links before the relevant set
    targets: list[str]  # relevant pages that are not seeds
    relevant_count: int
    description: str = field(repr=False, default="")
    #: The topic's relevant pages, named one by one (canonical URLs) where
    #: they are no category of the labels: a topic spread over several sites
    #: (:func:`spread_topics`). Empty: the category and everything below it.
    members: list[str] = field(repr=False, default_factory=list)

    @property
    def query(self) -> str:
        return " ".join(self.keywords)

    def start(self, task: int) -> list[str]:
        return self.seeds if task == 1 else self.neighbors


def derive_topics(
    corpus: Corpus,
    min_pages: int = 5,
    max_seeds: int = 10,
    seed_fraction: float = 0.25,
    tfidf_terms: int = 0,
    rng_seed: int = 1,
    query: str = "category",
    query_terms: int = SEED_TERMS_K,
) -> list[Topic]:
    """All topics of *corpus*, in category order, reproducible for *rng_seed*."""
    pages_by_node = _pages_by_category_node(corpus)
    inlinks = corpus.inlinks()
    topics = []
    for category in sorted(pages_by_node):
        relevant = sorted(pages_by_node[category])
        if len(relevant) < min_pages:
            continue
        rng = random.Random(f"{rng_seed}:{category}")
        n_seeds = max(1, min(max_seeds, int(len(relevant) * seed_fraction)))
        seeds = sorted(rng.sample(relevant, n_seeds))
        seed_set = set(seeds)
        targets = [url for url in relevant if url not in seed_set]
        neighbors = _neighbors(set(relevant), inlinks, n_seeds, rng)
        description = " ".join(corpus.text.get(url, "") for url in seeds)
        if query not in QUERY_KINDS:
            raise ValueError(f"query kind must be one of {', '.join(QUERY_KINDS)}, got {query!r}")
        keywords = category_keywords(category)
        if not keywords:
            continue  # a category named only by stopwords: the same topics for either query kind
        if query == "seed-terms":
            keywords = seed_terms(corpus, seeds, query_terms) or keywords
        elif query == "name":
            keywords = name_keywords(category)
        if tfidf_terms:
            keywords += [t for t in top_terms(corpus, seeds, tfidf_terms) if t not in keywords]
        topics.append(
            Topic(
                id=category.replace("/", "-"),
                category=category,
                keywords=keywords,
                seeds=seeds,
                neighbors=neighbors,
                targets=targets,
                relevant_count=len(relevant),
                description=description,
            )
        )
    return topics


def seed_terms(corpus: Corpus, seeds: list[str], k: int = SEED_TERMS_K) -> list[str]:
    """The k terms that best tell the seed pages from the corpus, by
    document frequency: p_s(t)·log(p_s(t)/p_c(t)) (see the module docstring).

    A term must be on two seed pages at least (when there are two): a word
    only one example has describes that page, not the topic. Terms need two
    characters and not be all digits (a page number is not a topic word).
    """
    analyzer = TermAnalyzer(stem=False)
    corpus_df = corpus.document_frequencies()
    seed_df: Counter[str] = Counter()
    for url in seeds:
        seed_df.update(set(analyzer.terms(corpus.text.get(url, ""))))
    n_seeds, n_pages = max(1, len(seeds)), max(1, len(corpus.text))
    scores = {}
    least = min(2, len(seeds))
    for term, count in seed_df.items():
        if count < least or len(term) < 2 or term.isdigit():
            continue
        p_seeds = count / n_seeds
        p_corpus = max(corpus_df.get(term, 0), count) / n_pages  # the seeds are corpus pages too
        scores[term] = p_seeds * math.log(p_seeds / p_corpus)
    ranked = sorted(scores, key=lambda t: (-scores[t], t))
    return [t for t in ranked[:k] if scores[t] > 0]


def name_keywords(category: str) -> list[str]:
    """A topic's short name: the words of its path's first and last parts
    (where, and what), without repeats.

    >>> name_keywords("gnuplot/Gnuplot/Commands/Plot/Data/Smooth"), name_keywords("course/cornell")
    (['gnuplot', 'smooth'], ['course', 'cornell'])
    """
    parts = category.split("/")
    return category_keywords(" ".join(dict.fromkeys((parts[0], parts[-1]))))


def category_keywords(category: str) -> list[str]:
    """The words of a category path (docs/methods.md §3), in order, without repeats.

    >>> category_keywords("Computers/Artificial_Intelligence/Machine-Learning")
    ['computers', 'artificial', 'intelligence', 'machine', 'learning']
    """
    words = re.findall(r"[a-z0-9]+", category.lower())
    return list(dict.fromkeys(w for w in words if w not in STOPWORDS))


#: Words that name a catch-all category, not a topic: a query of only these
#: (and stopwords) cannot steer a crawler.
CATCH_ALL_WORDS = frozenset(
    {
        "misc",
        "miscellaneous",
        "other",
        "others",
        "general",
        "unknown",
        "various",
        "etc",
        "unclassified",
        "uncategorized",
    }
)


def has_meaningful_word(query: str) -> bool:
    """Whether *query* has a word that is neither a stopword nor catch-all.

    >>> has_meaningful_word("other misc"), has_meaningful_word("faculty misc")
    (False, True)
    """
    return any(term not in CATCH_ALL_WORDS for term in TermAnalyzer(stem=False).terms(query))


def top_terms(corpus: Corpus, examples: list[str], k: int) -> list[str]:
    """The k terms of the examples with the highest TF-IDF over the corpus."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    analyzer = TermAnalyzer(stem=False)
    vectorizer = TfidfVectorizer(analyzer=analyzer.terms, sublinear_tf=True)
    vectorizer.fit(corpus.text.values())
    weights = vectorizer.transform([" ".join(corpus.text.get(u, "") for u in examples)])
    row = weights.toarray()[0]
    vocabulary = vectorizer.get_feature_names_out()
    best = row.argsort()[::-1][:k]
    return [str(vocabulary[i]) for i in best if row[i] > 0]


def _pages_by_category_node(corpus: Corpus) -> dict[str, set[str]]:
    """Each category node (every prefix of every label) → its pages."""
    nodes: dict[str, set[str]] = {}
    for url in corpus.text:
        category = corpus.category(url)
        if not category:
            continue
        parts = category.split("/")
        for depth in range(1, len(parts) + 1):
            nodes.setdefault("/".join(parts[:depth]), set()).add(url)
    return nodes


def _neighbors(
    relevant: set[str], inlinks: dict[str, list[str]], n: int, rng: random.Random
) -> list[str]:
    one_hop = {s for url in relevant for s in inlinks.get(url, ())} - relevant
    two_hop = {s for url in one_hop for s in inlinks.get(url, ())} - relevant
    pool = sorted(two_hop or one_hop)
    return sorted(rng.sample(pool, min(n, len(pool))))


def relevant_set(topic: Topic, corpus: Corpus) -> set[str]:
    if topic.members:
        return set(topic.members) & set(corpus.text)
    return {u for u in corpus.text if is_relevant(corpus.category(u), (topic.category,))}


def spread_topics(corpus: Corpus, spec: Path) -> list[Topic]:
    """The topics a spec file names (``bench/topics/*.json``): each with its
    query, its seeds (Task 1: the index pages of the sites it spans) and its
    relevant pages — the corpus pages one of its patterns matches, a shell
    glob over the URL or ``category:`` and a label prefix. No Task 2: the
    seeds are no relevant pages, as a user names a topic's sites."""
    try:
        data = json.loads(spec.read_text(encoding="utf-8"))
        entries = data["topics"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{spec}: not a topics spec ({exc}); expected {{\"topics\": [{{\"id\", \"query\", "
                         "\"seeds\", \"relevant\"}}, …]}}") from None
    topics = []
    for entry in entries:
        members = sorted(url for url in corpus.text if any(_matches(url, corpus, p) for p in entry["relevant"]))
        if not members:
            raise ValueError(f"{spec}: topic {entry['id']!r} matches no page of the corpus")
        seeds = [canonicalize(url) for url in entry["seeds"]]
        targets = [url for url in members if url not in set(seeds)]
        topics.append(Topic(
            id=entry["id"], category=entry["id"], keywords=category_keywords(entry["query"]), seeds=seeds,
            neighbors=[], targets=targets, relevant_count=len(members), members=members,
        ))
    return topics


def _matches(url: str, corpus: Corpus, pattern: str) -> bool:
    if pattern.startswith("category:"):
        return is_relevant(corpus.category(url), (pattern.removeprefix("category:"),))
    return fnmatch.fnmatchcase(url, canonicalize(pattern) if "*" not in pattern else pattern)


def write_topics(topics: Iterable[Topic], path: Path) -> None:
    with path.open("w", encoding="utf-8") as f:
        for topic in topics:
            f.write(json.dumps(asdict(topic), ensure_ascii=False) + "\n")


def read_topics(path: Path) -> list[Topic]:
    topics = []
    with path.open(encoding="utf-8") as f:
        for line_number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                data: dict[str, Any] = json.loads(line)
                topics.append(Topic(**data))
            except (json.JSONDecodeError, TypeError) as exc:
                raise ValueError(f"{path}, line {line_number}: not a topic ({exc})") from None
    return topics


def keyword_counts(text: str, keywords: list[str]) -> int:
    """How many of the topic keywords occur in *text* (docs/methods.md §3 rank_KW)."""
    terms = Counter(TermAnalyzer(stem=False).terms(text))
    return sum(1 for k in keywords if terms.get(k))
