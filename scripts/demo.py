"""The demo: a breadth-first and a best-first crawl of the replayed WebKB
corpus, 500 pages each, from the four universities' department home pages,
and each crawl's harvest rate of course pages (from labels.tsv)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEEDS = [
    "http://www.cs.cornell.edu/",
    "http://www.cs.utexas.edu/",
    "http://www.cs.washington.edu/",
    "http://www.cs.wisc.edu/",
]
QUERY = "course syllabus lecture homework"


def crawl(spider: str, corpus: Path, pages: int, out: Path) -> dict[str, object]:
    command = [
        sys.executable, "-m", "scrapy", "crawl", spider,
        "-a", f"seeds={','.join(SEEDS)}", "-a", f"query={QUERY}",
        "-s", f"FOCUS_REPLAY_WARC={corpus / 'webkb.warc.gz'}",
        "-s", f"FOCUS_LABELS={corpus / 'labels.tsv'}",
        "-s", "FOCUS_RELEVANT=course",
        "-s", f"CLOSESPIDER_PAGECOUNT={pages}",
        "-s", f"FOCUS_OUTPUT_DIR={out}",
        "-s", "FOCUS_PROGRESS_INTERVAL=1",
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
    parser.add_argument("--out", type=Path, default=ROOT / "crawls" / "demo")
    args = parser.parse_args()
    corpus = args.corpus.resolve()
    if not (corpus / "webkb.warc.gz").is_file():
        raise SystemExit(f"no WebKB corpus at {corpus}: put ../shared beside the checkout")
    results = {s: crawl(s, corpus, args.pages, args.out / s) for s in ("breadthfirst", "bestfirst")}
    print(f"\nQuery {QUERY!r}; relevant = WebKB category 'course'; budget {args.pages} pages")
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
