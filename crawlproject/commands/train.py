"""``scrapy train --labels L --warc W -o model.npz``: train the focused
crawler's taxonomy classifier and report how good it is before a crawl.

``--examples URLS`` trains a topic from example pages instead (docs/strategies.md,
"A topic from examples"): the example pages and the pages near the seeds (what
a crawl from them meets) are fetched through Scrapy, and the report states the
precision and recall the model expects on those pages
(crawlproject.models.topic_page: positive-unlabelled learning).

``--kind link-prior`` trains the link learner's prior across every topic the
labels give (crawlproject.models.link_prior).

``--kind context-graph`` or ``--kind link-value`` (with ``--good CATEGORY``)
trains a look-ahead model instead, on the labels and the WARC's link graph
(a corpus, or a crawl written with FOCUS_WARC_OUTPUT): the context graph's
layer classifier, or the learned value of a link (crawlproject.models).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy.exceptions import UsageError

from crawlproject.commands._cli import ProjectCommand
from crawlproject.policy.scope import SCOPES

if TYPE_CHECKING:
    import argparse


class Command(ProjectCommand):
    command_name = "train"
    requires_project = False
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012

    def syntax(self) -> str:
        return (
            "--labels LABELS (--warc WARC | --pages CRAWL_DIR) -o MODEL.npz [--kind KIND --good CATEGORY] [options]\n"
            "  scrapy train --examples URLS [--negatives URLS] [--seeds URLS] -o MODEL.npz [-s FOCUS_REPLAY_WARC=…]"
        )

    def short_desc(self) -> str:
        return "Train a crawler's model: taxonomy classifier, context graph or link value"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--labels", help="url<TAB>category path per line (any depth)")
        source = parser.add_mutually_exclusive_group()
        source.add_argument("--warc", help="the pages, as a WARC file")
        source.add_argument("--pages", help="the pages, as a crawl's output folder (pages.jsonl)")
        source.add_argument(
            "--index", help="context graph only: layers from a search index's backlink queries (FOCUS_INDEX_DIR)",
        )
        parser.add_argument(
            "-o", "--output", required=True, help="model file to write (.npz: arrays and JSON, no pickle)"
        )
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
        examples = parser.add_argument_group("a topic from example pages (--examples)")
        examples.add_argument("--examples", help="relevant example URLs: a file (one per line) or a comma list")
        examples.add_argument("--negatives", default="", help="irrelevant example URLs (optional)")
        examples.add_argument("--seeds", default="", help="where the crawl will start (default: the examples): "
                              "the pages near them are what the model is judged on")
        examples.add_argument("--sample", type=int, default=200, help="pages fetched near the seeds")
        examples.add_argument("--work-dir", default="", help="where the fetched pages go (default: beside -o)")
        lookahead = parser.add_argument_group("look-ahead models (--kind context-graph | link-value)")
        lookahead.add_argument(
            "--kind", choices=("taxonomy", "context-graph", "link-value", "link-prior"), default="taxonomy",
            help="taxonomy: the focused crawler's classifier; context-graph, link-value: look-ahead models; "
            "link-prior: the link learner's prior, learnt across every topic of the labels (FOCUS_LEARNER_PRIOR)",
        )
        lookahead.add_argument("--good", default="", help="the target categories, comma-separated (look-ahead models)")
        lookahead.add_argument("--depth", type=int, default=3, help="context graph: layers before the targets")
        lookahead.add_argument("--vocabulary", type=int, default=5000, help="context graph: terms kept (by TF-IDF)")
        lookahead.add_argument(
            "--threshold", type=float, default=0.0, help="context graph: below this posterior a page is 'other'",
        )
        lookahead.add_argument("--gamma", type=float, default=0.5, help="link value: discount per link")
        lookahead.add_argument("--horizon", type=int, default=6, help="link value: links looked ahead")
        lookahead.add_argument("--window", type=int, default=10, help="words each side of a link that are its context")
        lookahead.add_argument(
            "--within", choices=SCOPES, default="any",
            help="learn from the links inside one registered domain / host only: for crawls with -a scope=domain|host",
        )
        lookahead.add_argument(
            "--value-scope", choices=SCOPES, default="any",
            help="count only the targets on the site (registered domain / host) of the page a link is on (link"
            " value) or of the page (context graph's layers) — for a topic bound to its sites (this university's"
            " course pages) learnt from other sites",
        )
        lookahead.add_argument(
            "--home", default="",
            help="with --value-scope: URLs on the sites whose targets count while crawling,"
            " comma-separated (default: FOCUS_HOME, or each crawl's seeds' sites)",
        )

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        from crawlproject.store_lock import lock_file

        # One writer: a second `train -o` of the same file stops at once (the
        # file itself is replaced whole when written: a crawl never reads half).
        with lock_file(opts.output, f"the model file {opts.output!r}"):
            self._train(args, opts)

    def _train(self, args: list[str], opts: argparse.Namespace) -> None:
        if opts.examples:
            self._train_from_examples(opts)
            return
        if not opts.labels or not (opts.warc or opts.pages or opts.index):
            raise UsageError("give --labels and the pages (--warc, --pages or --index), or --examples URLS")
        if opts.index and opts.kind == "taxonomy":
            raise UsageError(
                "--index trains the context graph (--kind context-graph); the taxonomy model takes --warc or --pages"
            )
        for path in (opts.labels, opts.warc):
            if path and not Path(path).is_file():
                raise FileNotFoundError(2, "no such file", path)
        if opts.kind == "link-prior":
            self._train_link_prior(opts)
            return
        if opts.kind != "taxonomy":
            self._train_lookahead(opts)
            return
        if not 0 <= opts.holdout < 1:
            raise UsageError(f"--holdout must be from 0 to below 1, got {opts.holdout}")
        # scikit-learn's import takes a second or two: after the checks, so a mistake is said at once
        from crawlproject.corpus.labels import LabelsError
        from crawlproject.models.examples import (
            examples_from_pages,
            examples_from_warc,
            format_report,
            holdout_report,
        )
        from crawlproject.models.taxonomy_classifier import (
            ModelError,
            ModelSettings,
            TaxonomyClassifier,
        )

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

    def _train_from_examples(self, opts: argparse.Namespace) -> None:
        from crawlproject.commands._examples import crawl_failures, fetch
        from crawlproject.models.topic_page import TopicPageModel, format_report
        from crawlproject.spiders.seeds import parse_seeds

        if opts.kind != "taxonomy" or opts.labels or opts.warc or opts.pages or opts.index:
            raise UsageError(
                "--examples trains a classifier from example URLs alone: no --labels, --warc, --pages or --kind"
            )
        relevant = parse_seeds(opts.examples, "--examples ")
        negatives = parse_seeds(opts.negatives, "--negatives ") if opts.negatives else []
        near = parse_seeds(opts.seeds, "--seeds ") if opts.seeds else relevant
        if not relevant:
            raise UsageError("--examples names no URL")
        started = time.monotonic()
        work = Path(opts.work_dir or Path(opts.output).with_suffix("")).resolve()
        print(f"Fetching {len(relevant)} relevant and {len(negatives)} irrelevant example pages, and up to "
              f"{opts.sample} pages near {len(near)} seeds (what a crawl from them meets) into {work}/")
        assert self.crawler_process is not None
        pages, nearby = fetch(self.crawler_process, work, relevant + negatives, near, opts.sample)
        failures = crawl_failures(work)
        texts = {url: text for url, text in pages.items() if text and text.strip()}
        for url in pages:
            if url not in texts:
                print(f"  not used: {url} ({failures.get(url, 'not fetched, or not HTML')})")
        from crawlproject.web.urls import canonicalize

        positive = [url for url in dict.fromkeys(canonicalize(u) for u in relevant) if url in texts]
        negative = [url for url in dict.fromkeys(canonicalize(u) for u in negatives) if url in texts]
        if not positive:
            raise ValueError("no relevant example page could be fetched: nothing to train on")
        unlabelled = [url for url, text in nearby.items() if text and text.strip() and url not in texts]
        if not negative and not unlabelled:
            raise ValueError("no irrelevant example and no page near the seeds: give --negatives, "
                             "or --seeds whose neighbourhood can be fetched")
        model = TopicPageModel(stem=not opts.no_stemming).fit(
            [texts[url] for url in positive], [texts[url] for url in negative],
            [str(nearby[url]) for url in unlabelled], opts.seed,
        )
        model.report["examples"] = {"relevant": positive, "irrelevant": negative}
        print(format_report(model.report))
        model.save(opts.output)
        print(
            f"\nModel of a topic from {len(positive)} relevant and {len(negative)} irrelevant pages and "
            f"{len(unlabelled)} pages near the seeds written to {opts.output} "
            f"({time.monotonic() - started:.1f}s); {self._crawl_with(opts.output)}"
        )

    def _crawl_with(self, model: str) -> str:
        """How to crawl with a topic model, naming a spider this project has."""
        assert self.crawler_process is not None
        spiders = self.crawler_process.spider_loader.list()
        if "focus" in spiders:
            return f"crawl with it: scrapy crawl focus -a model={model} -a seeds=…  (any strategy: -a strategy=NAME)"
        shown = ", ".join(spiders[:8]) + (", …" if len(spiders) > 8 else "") if spiders else "none yet"
        return (
            f"crawl with it from a spider of yours derived from crawlproject.spiders.any_strategy.AnyStrategySpider: "
            f"scrapy crawl SPIDER -a model={model} -a seeds=…  (this project's spiders: {shown})"
        )

    def _train_link_prior(self, opts: argparse.Namespace) -> None:
        """The link model learnt across topics, on every topic the labels
        give (docs/strategies.md, "A link model learnt across topics")."""
        from crawlproject.evaluation.link_prior_training import (
            corpus_link_examples,
            fit_across_topics,
        )

        if not opts.warc:
            raise UsageError("--kind link-prior learns from a corpus's link graph: give --warc and --labels")
        started = time.monotonic()
        examples = corpus_link_examples(opts.warc, opts.labels, cache_dir=opts.cache_dir or None)
        links = sum(len(values) for _, values in examples)
        print(f"{len(examples)} topics, {links} links met by their offline crawls")
        prior = fit_across_topics([examples], {"trained_on": [str(opts.warc)], "pages": 300})
        prior.save(opts.output)
        print("weights (per standard deviation):")
        for feature, weight in prior.named_weights():
            print(f"  {feature:<15} {weight:+.3f}")
        print(f"Link prior written to {opts.output} ({time.monotonic() - started:.1f}s); "
              f"crawl with -s FOCUS_LEARNER_PRIOR={opts.output}")

    def _train_lookahead(self, opts: argparse.Namespace) -> None:
        from crawlproject.corpus.labels import LabelsError, load_labels, parse_categories

        try:  # the labels' categories keep a --good category whole when its name holds a comma
            categories = set(load_labels(opts.labels).values()) if opts.good and "," in opts.good else set()
        except LabelsError as exc:
            raise ValueError(str(exc)) from None
        good = parse_categories(opts.good, categories)
        if not good:
            raise UsageError(f"--kind {opts.kind} needs --good CATEGORY[,CATEGORY…]: the pages to look ahead to")
        if opts.index and opts.kind != "context-graph":
            raise UsageError(
                "--index serves the context graph only: its links have no anchors to learn link values from"
            )
        if not (opts.warc or opts.index):
            raise UsageError(
                f"--kind {opts.kind} learns from a link graph: give --warc (a corpus, or a crawl's WARC)"
                + (" or --index (a search index)" if opts.kind == "context-graph" else "")
            )
        if opts.home and opts.value_scope == "any":
            raise UsageError("--home names the sites of a site-bound model: give --value-scope domain|host too")
        if opts.depth < 1 or opts.horizon < 0 or not 0 <= opts.gamma < 1 or opts.window < 0:
            raise UsageError("--depth must be ≥ 1, --horizon ≥ 0, --gamma in [0, 1), --window ≥ 0")
        # scikit-learn's import takes a second or two: after the checks, so a mistake is said at once
        from crawlproject.models.layer_classifier import ContextGraphModel
        from crawlproject.models.link_value_model import LinkValueModel
        from crawlproject.models.training_graph import training_graph, training_graph_from_index

        started = time.monotonic()
        try:
            if opts.index:
                graph = training_graph_from_index(opts.index, opts.labels, good, opts.depth)
            else:
                graph = training_graph(opts.warc, opts.labels, good, opts.window, opts.cache_dir or None)
        except LabelsError as exc:
            raise ValueError(str(exc)) from None
        graph = graph.within_sites(opts.within)
        print(
            f"{len(graph.text)} pages, {sum(map(len, graph.links.values()))} links, "
            f"{len(graph.targets)} targets ({', '.join(good)})"
        )
        home = [url.strip() for url in opts.home.split(",") if url.strip()]
        model: ContextGraphModel | LinkValueModel
        if opts.kind == "context-graph":
            model = ContextGraphModel(opts.depth, opts.vocabulary, opts.threshold, value_scope=opts.value_scope)
            model.home = home
            model.fit(graph)
            print("pages per layer (the last: other):", model.report["pages_per_layer"])
        else:
            model = LinkValueModel(opts.gamma, opts.horizon, opts.window, value_scope=opts.value_scope)
            model.home = model.sites(home)
            model.fit(graph)
            print("link values: bins", model.report["bin_edges"], "links per bin", model.report["links_per_bin"])
        model.save(opts.output)
        print(f"{opts.kind} model written to {opts.output} ({time.monotonic() - started:.1f}s)")
