"""``scrapy evaluate --warc W --labels L --topics T CRAWL_DIR… -o eval.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy.exceptions import UsageError

from crawlproject.commands._cli import ProjectCommand

if TYPE_CHECKING:
    import argparse


class Command(ProjectCommand):
    command_name = "evaluate"
    requires_project = False
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012

    def syntax(self) -> str:
        return "--warc WARC --labels LABELS --topics TOPICS.jsonl CRAWL_DIR [CRAWL_DIR …] -o EVAL.json"

    def short_desc(self) -> str:
        return "Evaluate crawls of topics: metrics, significance, a report with plots"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--warc", required=True)
        parser.add_argument("--labels", required=True)
        parser.add_argument("--topics", required=True)
        parser.add_argument("-o", "--output", required=True, help="JSON of all metrics")
        parser.add_argument("--report", default="", help="Markdown report (plots beside it)")
        parser.add_argument("--budgets", default="200,500,1000")
        parser.add_argument(
            "--axis", choices=("ok", "fetches"), default="ok",
            help="count pages fetched with status 200 (dead fetches reported apart), or every fetch",
        )
        parser.add_argument("--top-n", type=int, default=50, help="n of the static coverage of the pool's top-n")
        parser.add_argument("--cache-dir", default=".cache")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        from crawlproject.corpus.reader import load_corpus
        from crawlproject.evaluation.evaluate import Evaluator, read_crawl
        from crawlproject.evaluation.report import plot_trajectories, write_report
        from crawlproject.evaluation.topics import read_topics

        if not args:
            raise UsageError("name at least one crawl output folder")
        try:
            budgets = sorted(int(b) for b in opts.budgets.split(","))
        except ValueError:
            raise UsageError(f"--budgets must be whole numbers, comma-separated, got {opts.budgets!r}") from None
        for path in (opts.warc, opts.labels, opts.topics):
            if not Path(path).is_file():
                raise FileNotFoundError(2, "no such file", path)
        crawls = [read_crawl(Path(folder)) for folder in args]
        corpus = load_corpus(opts.warc, opts.labels, opts.cache_dir or None)
        evaluator = Evaluator(corpus, read_topics(Path(opts.topics)), top_n=opts.top_n)
        result = evaluator.evaluate(crawls, budgets, axis=opts.axis)
        Path(opts.output).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(f"metrics of {len(crawls)} crawls written to {opts.output}")
        if opts.report:
            report = Path(opts.report)
            plots = plot_trajectories(result, report.parent, prefix=report.stem + "-")
            write_report(result, report, "Crawl evaluation", plots)
            print(f"report written to {report}")
