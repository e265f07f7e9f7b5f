"""Crawl throughput on the replay, like against like, and what a long crawl
costs per page.

    .venv/bin/python -m bench.throughput [--corpus ../shared/corpora/webkb] [--pages 1000] [--repeats 5] \
        [--long-pages 11000]

* FIFO: our scheduler in FIFO order *with best-first scoring computed*
  against stock Scrapy's scheduler in FIFO order (ScrapyPriorityQueue over
  FifoMemoryQueue, no priorities): the same spider, the same pages in the
  same order; what our scheduler, leases and outputs cost.
* Best-first: our scheduler in score order against the same stock FIFO run.
* Focused: the focused crawler (taxonomy classifier, soft focus) against
  best-first; the online link learner (query judge) against best-first,
  and beside it SharkSearch (its prior) and the learner with every link
  exploring (SharkSearch's order with all of the learner's own work): the
  learner's own cost apart from the pages it chooses. A fetch that answers
  404 counts as a page and costs less than one to parse; the learner
  chooses fewer of them, so the table also gives status-200 pages per
  second.
* Dashboard: best-first with the live dashboard and metrics served
  (FOCUS_DASHBOARD_PORT) and ``/metrics`` scraped every second, as a
  Prometheus would, against best-first without: CPU per page of the crawl
  process.
* The long run: one focused crawl with online learning and the distiller on,
  of --long-pages pages, its process CPU time read at every page: the last
  1,000 pages against the first 1,000 (no O(pages crawled) work per page).

All crawl from the four WebKB department home pages through one replay
server; runs alternate so machine noise hits all alike; pages/s = pages
fetched ÷ crawl time (summary.json).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from bench.common import ROOT, median, write_section
from bench.corpora import WEBKB_DEPARTMENT_HOMES
from crawlproject.replay import LOOPBACK_SPEED
from crawlproject.replay.process import ReplayProcess

QUERY = "course syllabus lecture homework"
STOCK_FIFO = [
    "-s", "SCHEDULER=scrapy.core.scheduler.Scheduler",
    "-s", "SCHEDULER_PRIORITY_QUEUE=scrapy.pqueues.ScrapyPriorityQueue",
    "-s", "SCHEDULER_MEMORY_QUEUE=scrapy.squeues.FifoMemoryQueue",
]
CONFIGS: dict[str, tuple[str, list[str]]] = {
    "ours, FIFO (best-first scores computed)": ("bestfirst", ["-s", "FOCUS_FRONTIER_ORDER=fifo"]),
    "stock Scheduler, FIFO (same spider)": ("bestfirst", STOCK_FIFO),
    "ours, best-first": ("bestfirst", []),
    "focused (taxonomy classifier, soft focus)": (
        "focused", ["-a", "model={model}", "-a", "good=course", "-s", "FOCUS_FOCUSED_MODE=soft"]
    ),
    "SharkSearch (the link learner's prior)": ("sharksearch", []),
    "link learner (query)": ("linklearner", []),
    "link learner, every link exploring (FOCUS_LEARNER_EXPLORE=1: SharkSearch's order, all its own work)": (
        "linklearner", ["-s", "FOCUS_LEARNER_EXPLORE=1"]
    ),
    "link learner, whole queue re-scored 4× as often (FOCUS_LEARNER_RESCORE_LINKS=100)": (
        "linklearner", ["-s", "FOCUS_LEARNER_RESCORE_LINKS=100"]
    ),
    "best-first, dashboard and metrics scraped every second": (
        "bestfirst", ["-s", "FOCUS_DASHBOARD_PORT=-1", "-s", "FOCUS_METRICS_LINGER=0"]
    ),
    "best-first, near-copies not told (FOCUS_NEAR_DUPLICATES=0)": ("bestfirst", ["-s", "FOCUS_NEAR_DUPLICATES=0"]),
}
(OURS_FIFO, STOCK, BEST_FIRST, FOCUSED, SHARK_SEARCH, LEARNER, LEARNER_EXPLORING, LEARNER_RESCORING_MORE, DASHBOARD,
 NO_NEAR_COPIES) = CONFIGS


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
    from crawlproject.corpus.reader import load_corpus
    from crawlproject.models.taxonomy_classifier import TaxonomyClassifier
    from crawlproject.web.text import TermAnalyzer

    model = TaxonomyClassifier.load(model_path)
    corpus_pages = load_corpus(corpus / "webkb.warc.gz", corpus / "labels.tsv", ROOT / ".cache")
    texts = [t for t in corpus_pages.text.values() if t.strip()][:pages]
    analyzer = TermAnalyzer(stem=model.settings.stem)

    def per_page(run: object) -> float:
        started = time.perf_counter()
        run()  # type: ignore[operator]
        return (time.perf_counter() - started) / len(texts) * 1e6

    from crawlproject.policy.near_duplicates import NearDuplicates

    near_copies = NearDuplicates(0.8)
    return {
        "near_duplicates": per_page(lambda: [near_copies.check(str(i), t) for i, t in enumerate(texts)]),
        "analyzer": per_page(lambda: [analyzer.vector(t) for t in texts]),
        "single": per_page(lambda: [model.classify_texts([t]) for t in texts]),
        "batched": per_page(
            lambda: [model.classify_texts(texts[i:i + batch]) for i in range(0, len(texts), batch)]
        ),
    }


def scrape_metrics(out: Path, done: threading.Event) -> None:
    """Scrape the crawl's /metrics every second while it runs (a Prometheus)."""
    while not done.is_set():
        marker = out / "dashboard.json"
        if marker.is_file():
            with contextlib.suppress(OSError, ValueError):
                url = json.loads(marker.read_text())["url"]
                urllib.request.urlopen(url + "metrics", timeout=5).read()  # noqa: S310 (loopback)
        done.wait(1.0 if marker.is_file() else 0.05)


def crawl(spider: str, extra: list[str], proxy: str, pages: int, out: Path) -> dict[str, object]:
    """One crawl; its summary, with the crawl process's CPU seconds."""
    command = [
        sys.executable, "-m", "scrapy", "crawl", spider, "-a", f"seeds={','.join(WEBKB_DEPARTMENT_HOMES)}",
        "-a", f"query={QUERY}",
        "-s", f"FOCUS_REPLAY_PROXY={proxy}", "-s", f"CLOSESPIDER_ITEMCOUNT={pages}",
        "-s", f"FOCUS_OUTPUT_DIR={out}", "-s", "LOG_LEVEL=WARNING", "-s", "LOGSTATS_INTERVAL=0",
        *[arg for name, value in LOOPBACK_SPEED.items() for arg in ("-s", f"{name}={value}")],
        *extra,
    ]
    done = threading.Event()
    scraper = threading.Thread(target=scrape_metrics, args=(out, done), daemon=True)
    if "FOCUS_DASHBOARD_PORT=-1" in extra:
        scraper.start()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True, timeout=3600)  # noqa: S603
    finally:
        done.set()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary: dict[str, object] = json.loads((out / "summary.json").read_text())
    summary["cpu_seconds"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return summary


def long_run(proxy: str, model: Path, pages: int, out: Path) -> dict[str, float]:
    """CPU seconds per page over the first and the last 1,000 pages."""
    probe = out / "cpu.tsv"
    summary = crawl(
        "focused",
        [
            "-a", f"model={model}", "-a", "good=course",
            "-s", "FOCUS_RETRAIN_EVERY=100", "-s", "FOCUS_DISTILL_EVERY=100",
            "-s", "FOCUS_STORE_PAGES=false",
            "-s", 'EXTENSIONS={"bench.cpu_probe.CpuPerPage": 900}', "-s", f"CPU_PROBE_FILE={probe}",
        ],
        proxy, pages, out,
    )
    rows = [line.split("\t") for line in probe.read_text().splitlines()]
    cpu = [float(row[1]) for row in rows]
    ok = [row[2] == "200" for row in rows]
    window = 1000
    first, last = cpu[window] - cpu[0], cpu[-1] - cpu[-window - 1]
    first_ok, last_ok = sum(ok[1 : window + 1]), sum(ok[-window:])
    focused = summary.get("focused", {})
    return {
        "pages": len(cpu),
        "first_ms": first / window * 1000,
        "last_ms": last / window * 1000,
        "ratio": last / first,
        "first_ok": first_ok,
        "last_ok": last_ok,
        "first_ok_ms": first / first_ok * 1000,
        "last_ok_ms": last / last_ok * 1000,
        "ratio_ok": (last / last_ok) / (first / first_ok),
        "rescored": float(focused.get("learning/reclassified", 0)),  # type: ignore[union-attr]
        "distiller_runs": float(focused.get("distiller/runs", 0)),  # type: ignore[union-attr]
        "learning_rounds": float(focused.get("learning/rounds", 0)),  # type: ignore[union-attr]
    }


def spread(values: list[float], digits: int = 1) -> str:
    return f"{min(values):.{digits}f} / {median(values):.{digits}f} / {max(values):.{digits}f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/webkb")
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--long-pages", type=int, default=11000)
    parser.add_argument("--classify-pages", type=int, default=2000)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rates: dict[str, list[float]] = {name: [] for name in CONFIGS}
    cpu: dict[str, list[float]] = {name: [] for name in CONFIGS}  # ms per page
    parsed: dict[str, list[float]] = {name: [] for name in CONFIGS}  # status-200 pages per second
    corpus = args.corpus.resolve()
    with ReplayProcess(str(corpus / "webkb.warc.gz")) as replay, tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "webkb.npz"
        train_model(corpus, model)
        for run in range(args.repeats):
            for index, (name, (spider, template)) in enumerate(CONFIGS.items()):
                extra = [arg.format(model=model) for arg in template]
                summary = crawl(spider, extra, replay.proxy_url, args.pages, Path(tmp) / f"{run}-{index}")
                rates[name].append(float(summary["pages_per_second"]))  # type: ignore[arg-type]
                cpu[name].append(1000 * float(summary["cpu_seconds"]) / int(summary["pages_fetched"]))  # type: ignore[call-overload]
                parsed[name].append(int(summary["pages_ok"]) / float(summary["elapsed_seconds"]))  # type: ignore[call-overload, arg-type]
                print(f"run {run + 1}: {name}: {rates[name][-1]:.1f} pages/s ({parsed[name][-1]:.1f} status 200), "
                      f"{cpu[name][-1]:.2f} ms CPU/page", flush=True)
        long = long_run(replay.proxy_url, model, args.long_pages, Path(tmp) / "long") if args.long_pages else None
        costs = [classification_cost(corpus, model, args.classify_pages, 16) for _ in range(3)]
    fifo, stock, best, focused, shark, learner, exploring, rescoring_more = (
        median(rates[n])
        for n in (
            OURS_FIFO,
            STOCK,
            BEST_FIRST,
            FOCUSED,
            SHARK_SEARCH,
            LEARNER,
            LEARNER_EXPLORING,
            LEARNER_RESCORING_MORE,
        )
    )
    parsed_ratio = median(parsed[LEARNER]) / median(parsed[BEST_FIRST])
    dashboard_cost = median(cpu[DASHBOARD]) / median(cpu[BEST_FIRST])
    near_copies_cost = median(cpu[BEST_FIRST]) / median(cpu[NO_NEAR_COPIES])
    cost = {key: median([c[key] for c in costs]) for key in costs[0]}
    print(f"FIFO ours ÷ stock {fifo / stock:.2f}; best-first ÷ stock {best / stock:.2f}; focused ÷ best-first "
          f"{focused / best:.2f}; link learner ÷ best-first {learner / best:.2f} (re-scoring 4× as often: "
          f"{rescoring_more / best:.2f}; every link exploring: {exploring / best:.2f}; status-200 pages/s: "
          f"{parsed_ratio:.2f}); SharkSearch ÷ best-first {shark / best:.2f}; CPU per page with the dashboard and "
          f"metrics ÷ without {dashboard_cost:.3f}; with near-copies told ÷ without {near_copies_cost:.3f}")
    if long is not None:
        print(
            f"long run: {long['pages']:.0f} pages, CPU {long['first_ms']:.2f} ms/page (first 1,000) vs "
            f"{long['last_ms']:.2f} (last 1,000): ratio {long['ratio']:.2f}; per status-200 page "
            f"{long['first_ok_ms']:.2f} vs {long['last_ok_ms']:.2f}: ratio {long['ratio_ok']:.2f}"
        )
    rows = "".join(
        f"| {name} | {median(rates[name]):.1f} | {spread(rates[name])} | {', '.join(f'{r:.1f}' for r in rates[name])} "
        f"| {median(parsed[name]):.1f} | {median(cpu[name]):.2f} | {spread(cpu[name], 2)} |\n"
        for name in CONFIGS
    )
    long_text = ""
    if long is not None:
        long_text = (
            f"\n**Long run** (`--long-pages {args.long_pages}`): one focused crawl with online learning "
            "and the distiller every 100 pages (`FOCUS_RETRAIN_EVERY=100`, `FOCUS_DISTILL_EVERY=100`), "
            f"{long['pages']:.0f} pages; process CPU per page: first 1,000 pages "
            f"{long['first_ms']:.2f} ms, last 1,000 pages {long['last_ms']:.2f} ms — ratio "
            f"**{long['ratio']:.2f}** (target ≤ 1.5). WebKB is a partial snapshot: most late fetches "
            f"are dead links (status 200: {long['first_ok']:.0f} of the first 1,000, {long['last_ok']:.0f} "
            f"of the last), which cost less; per page with status 200 the same CPU is "
            f"{long['first_ok_ms']:.2f} ms then {long['last_ok_ms']:.2f} ms — ratio "
            f"**{long['ratio_ok']:.2f}**. It learned {long['learning_rounds']:.0f} times, "
            f"re-classified {long['rescored']:.0f} pages in all for re-scores, and ran the distiller "
            f"{long['distiller_runs']:.0f} times.\n"
        )
    body = (
        "### Crawl throughput on the replay\n\n"
        f"Command: `.venv/bin/python -m bench.throughput --pages {args.pages} --repeats {args.repeats} "
        f"--long-pages {args.long_pages}` — {args.pages} pages per crawl from the four WebKB department "
        "home pages, one replay server for all runs, runs alternating; the focused crawler's model is "
        "trained on the WebKB labels first (`scrapy train`), good = course. Stock = Scrapy's `Scheduler` "
        "with `ScrapyPriorityQueue` over `FifoMemoryQueue` (FIFO, the order ours has in FIFO mode).\n\n"
        "| configuration | pages/s (median) | min / median / max | runs | status-200 pages/s (median) "
        "| CPU ms per page (median) | min / median / max |\n|---|---:|---:|---|---:|---:|---:|\n"
        f"{rows}\n"
        f"Ratios of medians: ours FIFO ÷ stock FIFO **{fifo / stock:.2f}** (target ≥ 0.95); "
        f"ours best-first ÷ stock FIFO **{best / stock:.2f}** (target ≥ 0.9); "
        f"focused ÷ best-first **{focused / best:.2f}** (target ≥ 0.8); "
        f"link learner ÷ best-first **{learner / best:.2f}** (target ≥ 0.8; re-scoring the whole queue 4× as "
        f"often, 100 links per fetch: {rescoring_more / best:.2f}; every link exploring, SharkSearch's pages with "
        f"all of the learner's work: **{exploring / best:.2f}**; in status-200 pages per second: "
        f"**{parsed_ratio:.2f}**); SharkSearch ÷ best-first {shark / best:.2f}; "
        f"CPU per page of best-first with the dashboard served and /metrics scraped every second ÷ without "
        f"**{dashboard_cost:.3f}** (target ≤ 1.05; the spread of each in the table); CPU per page of best-first "
        f"telling near-copies (the default, `FOCUS_NEAR_DUPLICATES=0.8`) ÷ without **{near_copies_cost:.3f}**.\n"
        f"{long_text}\n"
        f"Classification cost per page (median of 3, {args.classify_pages} WebKB pages): "
        f"the analyzer alone (tokens, stoplist, stemming — best-first pays it too) {cost['analyzer']:.0f} µs; "
        f"analyzer + classifier, one page per call {cost['single']:.0f} µs; "
        f"16 pages per call (the crawl's micro-batches at most) {cost['batched']:.0f} µs. "
        f"Telling near-copies (MinHash of the 5-word shingles, 64 permutations, and the banded index: "
        f"`NearDuplicates.check`, threshold 0.8) {cost['near_duplicates']:.0f} µs per page."
    )
    if not args.no_write:
        write_section("throughput", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
