"""``scrapy train --labels L --warc W -o model.npz``: train the focused
crawler's taxonomy classifier and report how good it is before a crawl."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy.exceptions import UsageError

from crawlproject.cli import ProjectCommand

if TYPE_CHECKING:
    import argparse


class Command(ProjectCommand):
    command_name = "train"
    requires_project = False
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012

    def syntax(self) -> str:
        return "--labels LABELS (--warc WARC | --pages CRAWL_DIR) -o MODEL.npz [options]"

    def short_desc(self) -> str:
        return "Train the focused crawler's taxonomy classifier (hierarchical naive Bayes)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--labels", required=True, help="url<TAB>category path per line (any depth)")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--warc", help="the pages, as a WARC file")
        source.add_argument("--pages", help="the pages, as a crawl's output folder (pages.jsonl)")
        parser.add_argument("-o", "--output", required=True, help="model file to write (.npz: arrays and JSON, no pickle)")
        parser.add_argument(
            "--holdout", type=float, default=0.2,
            help="fraction of pages held out to report accuracy per level (0: no report)",
        )
        parser.add_argument("--features", choices=("counts", "tfidf", "hashing"), default="counts")
        parser.add_argument("--no-stemming", action="store_true")
        parser.add_argument("--alpha", type=float, default=1.0, help="naive Bayes smoothing")
        parser.add_argument("--min-df", type=int, default=1, help="drop terms found in fewer pages (counts, tfidf)")
        parser.add_argument("--seed", type=int, default=1, help="random seed of the held-out split")
        parser.add_argument("--cache-dir", default=".cache")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        from crawlproject.classify.model import ModelError, ModelSettings, TaxonomyClassifier
        from crawlproject.classify.training import (
            examples_from_pages,
            examples_from_warc,
            format_report,
            holdout_report,
        )
        from crawlproject.labels import LabelsError

        for path in (opts.labels, opts.warc):
            if path and not Path(path).is_file():
                raise FileNotFoundError(2, "no such file", path)
        if not 0 <= opts.holdout < 1:
            raise UsageError(f"--holdout must be from 0 to below 1, got {opts.holdout}")
        started = time.monotonic()
        try:
            settings = ModelSettings(
                features=opts.features, stem=not opts.no_stemming, alpha=opts.alpha, min_df=opts.min_df
            )
            if opts.warc:
                examples = examples_from_warc(opts.labels, opts.warc, opts.cache_dir or None)
            else:
                examples = examples_from_pages(opts.labels, opts.pages)
            print(examples.describe())
            if not examples:
                source = opts.warc or opts.pages
                raise ValueError(f"no labelled URL of {opts.labels} has a usable page in {source}: nothing to train on")
            report = {}
            if opts.holdout > 0:
                report = holdout_report(examples, settings, opts.holdout, opts.seed)
                print(format_report(report))
            model = TaxonomyClassifier(settings).fit(examples.texts, examples.categories)
        except (ModelError, LabelsError) as exc:
            raise ValueError(str(exc)) from None
        model.report = report
        model.save(opts.output)
        print(
            f"\nModel of {len(model.taxonomy) - 1} categories trained on all {model.trained_pages} pages"
            f" written to {opts.output} ({time.monotonic() - started:.1f}s)"
        )
