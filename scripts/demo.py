"""The demo: crawls of the replayed WebKB corpus, 500 pages each, from the
four universities' department home pages — breadth-first, best-first, and the
focused crawler (taxonomy classifier, good = course) — and each crawl's
harvest rate of course pages (from labels.tsv).

The focused crawler's classifier is trained first (`scrapy train`) on the
labelled pages of the *other* schools in the corpus only, so it has never
seen a page of the four universities it crawls."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from bench.common import ROOT
from bench.corpora import WEBKB_DEPARTMENT_HOMES as SEEDS
from crawlproject.replay import LOOPBACK_SPEED

QUERY = "course syllabus lecture homework"


def train(corpus: Path, out: Path) -> Path:
    """A model trained on the labelled pages outside the seeds' universities."""
    from urllib.parse import urlsplit

    domains = tuple("." + ".".join(urlsplit(seed).hostname.split(".")[-2:]) for seed in SEEDS)  # type: ignore[union-attr]
    out.mkdir(parents=True, exist_ok=True)
    labels = out / "other-schools-labels.tsv"
    with (corpus / "labels.tsv").open(encoding="utf-8") as source, labels.open("w", encoding="utf-8") as kept:
        for line in source:
            host = urlsplit(line.split("\t", 1)[0]).hostname or ""
            if not ("." + host).endswith(domains):
                kept.write(line)
    model = out / "model.npz"
    command = [
        sys.executable, "-m", "scrapy", "train", "--labels", str(labels),
        "--warc", str(corpus / "webkb.warc.gz"), "-o", str(model),
    ]
    print(f"\n=== train the focused crawler's classifier on other schools' pages: {' '.join(command[3:])}", flush=True)
    subprocess.run(command, cwd=ROOT, check=True)  # noqa: S603
    return model


def crawl(spider: str, corpus: Path, pages: int, out: Path, extra: list[str]) -> dict[str, object]:
    command = [
        sys.executable, "-m", "scrapy", "crawl", spider, *extra,
        "-a", f"seeds={','.join(SEEDS)}", "-a", f"query={QUERY}",
        "-s", f"FOCUS_REPLAY_WARC={corpus / 'webkb.warc.gz'}",
        "-s", f"FOCUS_LABELS={corpus / 'labels.tsv'}",
        "-s", "FOCUS_RELEVANT=course",
        "-s", f"CLOSESPIDER_PAGECOUNT={pages}",
        "-s", f"FOCUS_OUTPUT_DIR={out}",
        "-s", "LOGSTATS_INTERVAL=1",
        *[arg for name, value in LOOPBACK_SPEED.items() for arg in ("-s", f"{name}={value}")],
        "-s", "LOG_FORMAT=%(levelname)s: %(message)s",
    ]
    print(f"\n=== {spider}: {' '.join(command[3:])}", flush=True)
    completed = subprocess.run(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)  # noqa: S603
    for line in completed.stderr.splitlines():
        if "Progress:" in line or line.startswith(("ERROR", "CRITICAL", "Traceback")):
            print("  " + line, flush=True)
    if completed.returncode != 0:
        print(completed.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"{spider} crawl failed (exit code {completed.returncode})")
    summary: dict[str, object] = json.loads((out / "summary.json").read_text())
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/webkb")
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--out", type=Path, default=None, help="default: crawls/demo-<time>, new each run")
    args = parser.parse_args()
    if args.out is None:
        args.out = ROOT / "crawls" / f"demo-{time.strftime('%Y-%m-%dT%H-%M-%S')}"
    corpus = args.corpus.resolve()
    if not (corpus / "webkb.warc.gz").is_file():
        raise SystemExit(f"no WebKB corpus at {corpus}: put ../shared beside the checkout")
    model = train(corpus, args.out / "model")
    spiders = {
        "breadthfirst": [],
        "bestfirst": [],
        "focused": ["-a", f"model={model}", "-a", "good=course"],
    }
    results = {s: crawl(s, corpus, args.pages, args.out / s, extra) for s, extra in spiders.items()}
    print(
        f"\nbest-first: query {QUERY!r}; focused: classifier with good = course; "
        f"relevant = WebKB category 'course'; budget {args.pages} pages"
    )
    print(f"{'spider':<14}{'fetched':>9}{'ok (200)':>10}{'course':>8}{'harvest':>9}{'pages/s':>9}")
    for spider, s in results.items():
        print(
            f"{spider:<14}{s['pages_fetched']:>9}{s['pages_ok']:>10}{s['relevant_pages']:>8}"
            f"{s['harvest_rate']:>9.1%}{s['pages_per_second']:>9}"
        )
    print(f"\nOutputs (history.jsonl, links.tsv, pages/, summary.json) in {args.out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
