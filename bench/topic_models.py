"""A taxonomy model per topic for evaluating the focused crawler, trained
without seeing the part of the corpus the topic's crawl is judged on.

On the real web a classifier is trained on a directory's example pages,
which are a vanishing fraction of what the crawler meets. In a closed
corpus every labelled page is also a page the crawler may fetch, so a model
trained on all labels would know the answers. The protocol here: leave out
every labelled page on any host that holds a relevant page of the topic,
except the topic's seeds (the user's examples of the good category). The
model still learns the whole taxonomy from the other hosts, but it never
saw a page of the topic's hosts other than the seeds it is given.

The good category is the topic's own when the training pages hold more of
it than the seeds; otherwise its nearest ancestor that they do hold (a
directory marks the categories it has: with the hosts of ``course/cornell``
held out, the taxonomy still knows ``course`` from the other hosts, but
only the seeds of ``course/cornell``). A topic whose category has no pages
but its seeds, and no ancestor with pages, keeps its category.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from bench.common import code_stamp
from crawlproject.corpus.labels import is_relevant
from crawlproject.evaluation.topics import relevant_set
from crawlproject.models.examples import Examples
from crawlproject.models.taxonomy import parent_path
from crawlproject.models.taxonomy_classifier import ModelSettings, TaxonomyClassifier
from crawlproject.policy.scope import site_of
from crawlproject.web.urls import host_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from crawlproject.corpus.reader import Corpus
    from crawlproject.evaluation.topics import Topic
    from crawlproject.models.training_graph import TrainingGraph


#: the code that trains a benchmark's topic models: the package and this module
TRAINED_BY = ("crawlproject", "bench.topic_models")


def models_folder(folder: Path) -> Path:
    """*folder*, ready for a run's topic models: models an earlier run
    trained are reused (each ``train_*`` function keeps an existing file)
    only if they were trained by the code this run is at; else the folder is
    emptied and they are trained anew (a re-run after a change to a
    classifier, the topics or the text pipeline measured old models)."""
    stamp = code_stamp(*TRAINED_BY)
    marker = folder / "trained-by.txt"
    if folder.exists() and (not marker.exists() or marker.read_text(encoding="utf-8").strip() != stamp):
        stale = [*folder.glob("*.npz"), *folder.glob("*.tmp")]  # what the train_* functions write
        if stale:
            print(f"  {len(stale)} models in {folder} were trained by other code: training them anew", flush=True)
        for path in stale:
            path.unlink()
            work = path.with_suffix("")  # an examples model's fetched pages (train_examples_model)
            if work.is_dir():
                shutil.rmtree(work)
    folder.mkdir(parents=True, exist_ok=True)
    marker.write_text(stamp + "\n", encoding="utf-8")
    return folder


#: How a topic's models are kept from its answers: ``host-disjoint`` (above);
#: ``label-disjoint`` — they see every page and link of the corpus but no
#: label of the topic's relevant pages except its seeds', and the good
#: category is the topic's own, known from the seeds alone (the user's
#: examples, and the link graph of an earlier crawl of the web). For a corpus
#: of one site, where host-disjoint training would leave nothing but the seeds.
PROTOCOLS = ("host-disjoint", "label-disjoint")


def held_out_hosts(corpus: Corpus, topic: Topic) -> set[str]:
    """The hosts a topic's models never see (but for its seeds)."""
    return {host_of(url) for url in relevant_set(topic, corpus)}


def hidden_labels(corpus: Corpus, topic: Topic) -> set[str]:
    """The pages whose labels a label-disjoint model never sees."""
    return relevant_set(topic, corpus) - set(topic.seeds)


def topic_training_examples(
    corpus: Corpus, topic: Topic, held_out: set[str] | None = None, protocol: str = "host-disjoint"
) -> Examples:
    keep = _labelled_for_training(corpus, topic, held_out, protocol)
    examples = Examples()
    for url, category in sorted(corpus.labels.items()):
        if keep(url):
            examples.add(url, corpus.text.get(url, ""), category)
    return examples


def _labelled_for_training(
    corpus: Corpus, topic: Topic, held_out: set[str] | None, protocol: str
) -> Callable[[str], bool]:
    """Whether a labelled page is a training example under *protocol*."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    if protocol == "label-disjoint":
        hidden = hidden_labels(corpus, topic)
        return lambda url: url not in hidden
    held_out = held_out_hosts(corpus, topic) if held_out is None else held_out
    seeds = set(topic.seeds)
    return lambda url: url in seeds or host_of(url) not in held_out


def good_category(examples: Examples, topic: Topic, protocol: str = "host-disjoint") -> str:
    """The category to mark good for *topic* (see the module docstring; a
    label-disjoint model marks the topic's own).

    >>> from crawlproject.evaluation.topics import Topic
    >>> topic = Topic("c", "course/cornell", [], ["s1"], [], [], 5)
    >>> examples = Examples(["s1", "t1"], ["", ""], ["course/cornell", "course/texas"])
    >>> good_category(examples, topic)
    'course'
    """
    if protocol == "label-disjoint":
        return topic.category
    seeds = set(topic.seeds)
    path = topic.category
    while path:
        if any(
            url not in seeds and is_relevant(category, (path,))
            for url, category in zip(examples.urls, examples.categories, strict=True)
        ):
            return path
        path = parent_path(path)
    return topic.category


def topic_training_graph(
    graph: TrainingGraph, corpus: Corpus, topic: Topic, scope: str = "any", protocol: str = "host-disjoint"
) -> TrainingGraph:
    """The corpus's link graph under the same protocol: host-disjoint, the
    pages of the topic's hosts are left out except its seeds; label-disjoint,
    every page stays but the labels of the topic's relevant pages other than
    its seeds are gone. Targets are the labelled pages of the good category
    (:func:`good_category`), the seeds among them. A crawl kept to its sites
    (*scope*) learns from the links inside sites."""
    if protocol == "label-disjoint":
        hidden = hidden_labels(corpus, topic)
        kept = replace(graph, labels={url: c for url, c in graph.labels.items() if url not in hidden})
        return kept.within_sites(scope).with_targets((topic.category,))
    held_out = held_out_hosts(corpus, topic)
    seeds = set(topic.seeds)
    good = good_category(topic_training_examples(corpus, topic, held_out), topic)
    kept = graph.restricted(lambda url: url in seeds or host_of(url) not in held_out)
    return kept.within_sites(scope).with_targets((good,))


def value_scope_of(topic: Topic) -> str:
    """What a topic's link values count: ``domain`` — only the targets on
    the site a link sits on — when every example the user gave (its seeds)
    lies on one registered domain, as "the course pages of this university"
    does — that domain is then the crawl's home; ``any`` when the examples
    span sites, as "course pages" does.
    Decided from the topic's examples alone, never from its targets.

    >>> from crawlproject.evaluation.topics import Topic
    >>> value_scope_of(Topic("c", "course/x", [], ["http://www.cs.x.edu/a", "http://x.edu/b"], [], [], 2))
    'domain'
    >>> value_scope_of(Topic("c", "course", [], ["http://x.edu/a", "http://y.edu/b"], [], [], 2))
    'any'
    """
    return "domain" if len({site_of(url, "domain") for url in topic.seeds}) == 1 else "any"


def home_of_topic(topic: Topic) -> list[str]:
    """FOCUS_HOME for a crawl of *topic*: its examples, when
    :func:`value_scope_of` binds it to their site (every task: a Task 2
    crawl starts elsewhere, but its targets are the examples' site's);
    none for a topic that spans sites."""
    return sorted(topic.seeds) if value_scope_of(topic) != "any" else []


def train_lookahead_model(
    graph: TrainingGraph, corpus: Corpus, topic: Topic, kind: str, path: Path, scope: str = "any",
    protocol: str = "host-disjoint",
) -> Path:
    """Train (or reuse, when *path* exists) the topic's context-graph or
    link-value model, host-disjoint as :func:`train_topic_model`, on the
    links a crawl of *scope* follows; both count the targets
    :func:`value_scope_of` says (the context graph's layers, the link values)."""
    from crawlproject.models.layer_classifier import ContextGraphModel
    from crawlproject.models.link_value_model import LinkValueModel

    if path.exists():
        return path
    training = topic_training_graph(graph, corpus, topic, scope, protocol)
    model: ContextGraphModel | LinkValueModel
    value_scope = value_scope_of(topic)
    if kind == "context-graph":
        model = ContextGraphModel(value_scope=value_scope)
        model.home = home_of_topic(topic)
    else:
        model = LinkValueModel(window=graph.window, value_scope=value_scope)
        model.home = model.sites(home_of_topic(topic))  # the user's examples' site
    model.fit(training)
    model.report.update({"protocol": protocol, "topic": topic.id, "scope": scope})
    model.save(path)
    return path


def train_topic_model(
    corpus: Corpus, topic: Topic, path: Path, settings: ModelSettings | None = None, protocol: str = "host-disjoint"
) -> tuple[Path, str]:
    """Train (or reuse, when *path* exists) the model of *topic*; the model
    file and the good category to crawl with."""
    examples = topic_training_examples(corpus, topic, protocol=protocol)
    good = good_category(examples, topic, protocol)  # cheap: no need to load a reused model for it
    if path.exists():
        return path, good
    model = TaxonomyClassifier(settings).fit(examples.texts, examples.categories)
    model.report = {
        "protocol": protocol, "topic": topic.id, "good": good, "training_pages": len(examples),
    }
    tmp = path.with_suffix(".tmp")
    model.save(tmp)
    tmp.replace(path)
    return path, good


def draw_examples(corpus: Corpus, topic: Topic, count: int, seed: int) -> tuple[list[str], list[str]]:
    """*count* relevant example URLs of *topic* (its relevant pages but its
    seeds) and *count* irrelevant ones (pages labelled otherwise), drawn with
    *seed* and the topic's id: what a user would give as examples."""
    import random

    rng = random.Random(f"{seed}:{topic.id}")
    members = relevant_set(topic, corpus)
    relevant = sorted(members - set(topic.seeds))
    irrelevant = sorted(url for url in corpus.text if url in corpus.labels and url not in members)
    return rng.sample(relevant, min(count, len(relevant))), rng.sample(irrelevant, min(count, len(irrelevant)))


def train_examples_model(
    examples: tuple[list[str], list[str]], path: Path, proxy: str, cwd: Path
) -> Path:
    """A model trained by ``scrapy train --examples`` — the pages fetched
    through Scrapy from the replay at *proxy*, as a user's would be."""
    import subprocess
    import sys

    if path.exists():
        return path
    relevant, irrelevant = examples
    folder = path.with_suffix("")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "relevant.txt").write_text("\n".join(relevant) + "\n", encoding="utf-8")
    (folder / "irrelevant.txt").write_text("\n".join(irrelevant) + "\n", encoding="utf-8")
    command = [
        sys.executable, "-m", "scrapy", "train", "--examples", str(folder / "relevant.txt"),
        "--negatives", str(folder / "irrelevant.txt"), "-o", str(path), "--work-dir", str(folder / "pages"),
        "-s", f"FOCUS_REPLAY_PROXY={proxy}", "-s", "DOWNLOAD_DELAY=0", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8",
    ]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)  # noqa: S603
    if done.returncode != 0:
        raise RuntimeError(f"training from examples failed: {done.stderr[-1000:]}")
    (folder / "report.txt").write_text(done.stdout, encoding="utf-8")
    return path
