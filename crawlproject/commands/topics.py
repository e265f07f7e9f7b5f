"""``scrapy topics --warc W --labels L -o topics.jsonl``: topics from a labelled corpus."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from crawlproject.commands._cli import ProjectCommand
from crawlproject.evaluation.topics import QUERY_KINDS

if TYPE_CHECKING:
    import argparse


class Command(ProjectCommand):
    command_name = "topics"
    requires_project = False
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012

    def syntax(self) -> str:
        return "--warc WARC --labels LABELS -o TOPICS.jsonl [options]"

    def short_desc(self) -> str:
        return "Derive crawl topics (keywords, seeds, neighbors, targets) from a labelled corpus"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--warc", required=True)
        parser.add_argument("--labels", required=True, help="url<TAB>category path per line")
        parser.add_argument("-o", "--output", required=True)
        parser.add_argument("--min-pages", type=int, default=5, help="smallest category that is a topic")
        parser.add_argument("--max-seeds", type=int, default=10)
        parser.add_argument("--seed-fraction", type=float, default=0.25)
        parser.add_argument(
            "--query",
            choices=QUERY_KINDS,
            default="category",
            help="the crawler's keywords: the category path's words, its short name (first and last parts), "
            "or the seed pages' most telling terms",
        )
        parser.add_argument("--tfidf-terms", type=int, default=0, help="add the top K TF-IDF terms of the examples")
        parser.add_argument("--seed", type=int, default=1, help="random seed of the seed/target split")
        parser.add_argument("--cache-dir", default=".cache")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        from crawlproject.corpus.reader import load_corpus
        from crawlproject.evaluation.topics import derive_topics, has_meaningful_word, write_topics
        from crawlproject.models.examples import examples_from_corpus

        for path in (opts.warc, opts.labels):
            if not Path(path).is_file():
                raise FileNotFoundError(2, "no such file", path)
        corpus = load_corpus(opts.warc, opts.labels, opts.cache_dir or None)
        print(examples_from_corpus(corpus).describe())
        topics = derive_topics(
            corpus, opts.min_pages, opts.max_seeds, opts.seed_fraction, opts.tfidf_terms, opts.seed, query=opts.query
        )
        for topic in topics:
            if not has_meaningful_word(topic.query):
                print(
                    f"warning: topic {topic.id} ({topic.category}): its query {topic.query!r} has no "
                    "meaningful word (only stopwords or catch-all words like 'misc'): a query-driven "
                    "crawler cannot use it",
                    file=sys.stderr,
                )
        write_topics(topics, Path(opts.output))
        print(f"{len(topics)} topics written to {opts.output}")
