"""Crawl throughput on the replay: our frontier scheduler + best-first
scoring vs Scrapy's stock scheduler with no scoring, and the focused crawler
(taxonomy classifier, soft focus) vs best-first; same run, same replay. Also
the per-page cost of classification, one page at a time and in batches.

    .venv/bin/python bench/throughput.py [--corpus ../shared/corpora/webkb] [--pages 2000] [--repeats 3]

All crawl the same seeds through one replay server with the same
pipelines; pages/s = pages fetched ÷ crawl time (from each crawl's
summary.json); runs alternate so machine noise hits all alike.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import median, write_section  # noqa: E402
from crawlproject.replay.process import ReplayProcess  # noqa: E402

SEEDS = "http://www.cs.cornell.edu/,http://www.cs.utexas.edu/,http://www.cs.washington.edu/,http://www.cs.wisc.edu/"
OURS, STOCK, FOCUSED = (
    "ours (FrontierScheduler + best-first)",
    "stock (Scrapy Scheduler, no scoring)",
    "focused (FrontierScheduler + taxonomy classifier, soft focus)",
)
CONFIGS: dict[str, tuple[str, list[str]]] = {
    OURS: ("bestfirst", []),
    STOCK: ("breadthfirst", ["-s", "SCHEDULER=scrapy.core.scheduler.Scheduler"]),
    FOCUSED: ("focused", ["-a", "model={model}", "-a", "good=course"]),
}


def train_model(corpus: Path, path: Path) -> None:
    command = [
        sys.executable, "-m", "scrapy", "train", "--labels", str(corpus / "labels.tsv"),
        "--warc", str(corpus / "webkb.warc.gz"), "-o", str(path), "--holdout", "0",
        "--cache-dir", str(ROOT / ".cache"),
    ]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)  # noqa: S603


def classification_cost(corpus: Path, model_path: Path, pages: int, batch: int) -> dict[str, float]:
    """µs per page: the analyzer alone, the classifier one page per call, and
    the classifier *batch* pages per call (the crawl's micro-batches)."""
    from crawlproject.classify.model import TaxonomyClassifier
    from crawlproject.evaluation.corpus import load_corpus
    from crawlproject.text import TermAnalyzer

    model = TaxonomyClassifier.load(model_path)
    corpus_pages = load_corpus(corpus / "webkb.warc.gz", corpus / "labels.tsv", ROOT / ".cache")
    texts = [t for t in corpus_pages.text.values() if t.strip()][:pages]
    analyzer = TermAnalyzer(stem=model.settings.stem)

    def per_page(run: object) -> float:
        started = time.perf_counter()
        run()  # type: ignore[operator]
        return (time.perf_counter() - started) / len(texts) * 1e6

    return {
        "analyzer": per_page(lambda: [analyzer.vector(t) for t in texts]),
        "single": per_page(lambda: [model.classify_texts([t]) for t in texts]),
        "batched": per_page(
            lambda: [model.classify_texts(texts[i:i + batch]) for i in range(0, len(texts), batch)]
        ),
    }


def crawl(spider: str, extra: list[str], proxy: str, pages: int, out: Path) -> float:
    command = [
        sys.executable, "-m", "scrapy", "crawl", spider, "-a", f"seeds={SEEDS}",
        "-a", "query=course syllabus lecture homework",
        "-s", f"FOCUS_REPLAY_PROXY={proxy}", "-s", f"CLOSESPIDER_ITEMCOUNT={pages}",
        "-s", f"FOCUS_OUTPUT_DIR={out}", "-s", "LOG_LEVEL=WARNING", *extra,
    ]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)  # noqa: S603
    summary = json.loads((out / "summary.json").read_text())
    return float(summary["pages_per_second"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/webkb")
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--classify-pages", type=int, default=2000)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rates: dict[str, list[float]] = {name: [] for name in CONFIGS}
    corpus = args.corpus.resolve()
    with ReplayProcess(str(corpus / "webkb.warc.gz")) as replay, tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "webkb.joblib"
        train_model(corpus, model)
        for run in range(args.repeats):
            for name, (spider, template) in CONFIGS.items():
                extra = [arg.format(model=model) for arg in template]
                rate = crawl(spider, extra, replay.proxy_url, args.pages, Path(tmp) / f"{run}-{spider}")
                rates[name].append(rate)
                print(f"run {run + 1}: {name}: {rate:.1f} pages/s", flush=True)
        costs = [classification_cost(corpus, model, args.classify_pages, 16) for _ in range(args.repeats)]
    ours, stock, focused = (median(rates[name]) for name in (OURS, STOCK, FOCUSED))
    cost = {key: median([c[key] for c in costs]) for key in costs[0]}
    print(f"median: ours {ours:.1f} pages/s, stock {stock:.1f} pages/s, ratio {ours / stock:.2f}")
    print(f"median: focused {focused:.1f} pages/s, best-first {ours:.1f} pages/s, ratio {focused / ours:.2f}")
    print(
        f"classification µs/page: analyzer {cost['analyzer']:.0f}, one page per call {cost['single']:.0f},"
        f" 16 pages per call {cost['batched']:.0f}"
    )
    rows = "".join(
        f"| {name} | {median(rates[name]):.1f} | {', '.join(f'{r:.1f}' for r in rates[name])} |\n"
        for name in CONFIGS
    )
    body = (
        "### Crawl throughput on the replay\n\n"
        f"Command: `.venv/bin/python bench/throughput.py --pages {args.pages} --repeats {args.repeats}`"
        f" — {args.pages} pages per crawl from the four WebKB department home pages, one replay "
        "server for all runs, runs alternating; the focused crawler's model is trained on the "
        "WebKB labels first (`scrapy train`), good = course.\n\n"
        f"| configuration | pages/s (median) | runs |\n|---|---:|---|\n{rows}\n"
        f"Ratio ours ÷ stock: **{ours / stock:.2f}**. "
        f"Ratio focused ÷ best-first: **{focused / ours:.2f}** (target ≥ 0.8).\n\n"
        f"Classification cost per page (median of {args.repeats}, {args.classify_pages} WebKB pages): "
        f"the analyzer alone (tokens, stoplist, stemming — best-first pays it too) {cost['analyzer']:.0f} µs; "
        f"analyzer + classifier, one page per call {cost['single']:.0f} µs; "
        f"16 pages per call (the crawl's micro-batches at most) {cost['batched']:.0f} µs."
    )
    if not args.no_write:
        write_section("throughput", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
