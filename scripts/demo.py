"""The demo: focused crawls of the replayed WebKB corpus from the four
universities' department home pages, looking for course pages — the same
500 fetches (dead links count: they cost a crawler as much as a page) for:

* breadth-first (the blind baseline),
* best-first and SharkSearch for the query "course syllabus lecture homework",
* the focused crawler of Chakrabarti et al. (soft focus) and the online link
  learner, both judging pages by a taxonomy classifier with good = course,
* the path oracle, which knows the corpus's links and labels: the ceiling.

The classifier is trained first (`scrapy train`) on the labelled pages of the
*other* schools in the corpus only, so it has never seen a page of the four
universities it crawls. Prints each crawl's course pages (from labels.tsv)
and writes a plot of course pages against pages fetched.

Every crawl fetches one page at a time, the next chosen only once the last
was processed (FOCUS_REPEATABLE): with 16 downloads in flight the pages
arrive in whatever order the machine allows, and a crawl that learns from
what arrives takes another path each run; one at a time, each strategy
makes the same crawl on every run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from bench.common import ROOT
from bench.corpora import WEBKB_DEPARTMENT_HOMES as SEEDS

QUERY = "course syllabus lecture homework"
#: label, spider, arguments and settings of each crawl (the model's path filled in)
CRAWLS: list[tuple[str, str, list[str]]] = [
    ("breadth-first", "breadthfirst", []),
    ("best-first", "bestfirst", []),
    ("SharkSearch", "sharksearch", []),
    ("focused (soft)", "focused", ["-a", "model={model}", "-a", "good=course", "-s", "FOCUS_FOCUSED_MODE=soft"]),
    ("link learner", "linklearner", ["-a", "model={model}", "-a", "good=course"]),
    ("path oracle", "pathoracle", []),
]


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
    print(f"\n=== train the classifier on other schools' pages: {' '.join(command[3:])}", flush=True)
    subprocess.run(command, cwd=ROOT, check=True)  # noqa: S603
    return model


def crawl(label: str, spider: str, arguments: list[str], corpus: Path, pages: int, out: Path) -> dict[str, object]:
    command = [
        sys.executable, "-m", "scrapy", "crawl", spider, *arguments,
        "-a", f"seeds={','.join(SEEDS)}", "-a", f"query={QUERY}",
        "-s", f"FOCUS_REPLAY_WARC={corpus / 'webkb.warc.gz'}",
        "-s", f"FOCUS_LABELS={corpus / 'labels.tsv'}",
        "-s", "FOCUS_RELEVANT=course",
        "-s", f"FOCUS_ORACLE_WARC={corpus / 'webkb.warc.gz'}",
        "-s", f"CLOSESPIDER_ITEMCOUNT={pages}",
        "-s", f"FOCUS_OUTPUT_DIR={out}",
        "-s", "FOCUS_STORE_PAGES=false",
        "-s", "LOGSTATS_INTERVAL=2",
        # the replay is nobody's site: no delay; one page at a time, each chosen once the
        # last was processed, so that every run is the same crawl
        "-s", "DOWNLOAD_DELAY=0", "-s", "FOCUS_REPEATABLE=true",
        "-s", "LOG_FORMAT=%(levelname)s: %(message)s",
    ]
    print(f"\n=== {label}: scrapy crawl {spider} {' '.join(arguments)}", flush=True)
    completed = subprocess.run(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)  # noqa: S603
    for line in completed.stderr.splitlines():
        if "Progress:" in line or "Link learner:" in line or line.startswith(("ERROR", "CRITICAL", "Traceback")):
            print("  " + line, flush=True)
    if completed.returncode != 0:
        print(completed.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"{spider} crawl failed (exit code {completed.returncode})")
    summary: dict[str, object] = json.loads((out / "summary.json").read_text())
    return summary


def relevant_curve(folder: Path, labels: dict[str, str]) -> list[int]:
    """Course pages found after each fetch, in the order fetched — counted as
    the crawl's summary counts them (the table): a near-copy of a page
    fetched before brings nothing new."""
    from crawlproject.corpus.labels import is_relevant

    found, curve = 0, []
    for line in (folder / "history.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        found += (record["status"] == 200 and not record.get("near_duplicate_of")
                  and is_relevant(labels.get(record["canonical_url"]), ("course",)))
        curve.append(found)
    return curve


def left_in_queue(folder: Path, labels: dict[str, str]) -> tuple[int, int]:
    """The truths beside the crawl's estimate of what is left: course pages
    behind the links it found and did not fetch (links.tsv, history.jsonl),
    and every course page of the corpus it did not fetch."""
    from crawlproject.corpus.labels import is_relevant

    history = [json.loads(line) for line in (folder / "history.jsonl").read_text(encoding="utf-8").splitlines()]
    fetched = {record["canonical_url"] for record in history}
    queued = {line.split("\t")[1] for line in (folder / "links.tsv").read_text(encoding="utf-8").splitlines()
              if line.count("\t") >= 1} - fetched
    found = {record["canonical_url"] for record in history if record.get("status") == 200}
    course = {url for url, category in labels.items() if is_relevant(category, ("course",))}
    return sum(url in course for url in queued), len(course - found)


def plot(curves: dict[str, list[int]], path: Path, pages: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5))
    for label, curve in curves.items():
        style = {"linestyle": "--", "color": "grey"} if label == "path oracle" else {}
        axes.plot(range(1, len(curve) + 1), curve, label=f"{label} ({curve[-1] if curve else 0})", **style)
    axes.set_xlabel("pages fetched (dead links included)")
    axes.set_ylabel("course pages found")
    axes.set_xlim(0, pages)
    axes.set_title("WebKB: course pages from the four department home pages")
    axes.legend(loc="upper left", fontsize="small")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/webkb")
    parser.add_argument("--pages", type=int, default=500, help="fetches per crawl, dead links included")
    parser.add_argument("--out", type=Path, default=None, help="default: crawls/demo-<time>, new each run")
    args = parser.parse_args()
    if args.out is None:
        args.out = ROOT / "crawls" / f"demo-{time.strftime('%Y-%m-%dT%H-%M-%S')}"
    corpus = args.corpus.resolve()
    if not (corpus / "webkb.warc.gz").is_file():
        raise SystemExit(f"no WebKB corpus at {corpus}: put ../shared beside the checkout")
    model = train(corpus, args.out / "model")
    from crawlproject.corpus.labels import load_labels

    labels = load_labels(corpus / "labels.tsv")
    results, curves = {}, {}
    for label, spider, arguments in CRAWLS:
        folder = args.out / spider if label != "focused (soft)" else args.out / "focused-soft"
        filled = [a.format(model=model) for a in arguments]
        results[label] = crawl(label, spider, filled, corpus, args.pages, folder)
        curves[label] = relevant_curve(folder, labels)
    png = args.out / "course-pages.png"
    plot(curves, png, args.pages)
    print(
        f"\nquery {QUERY!r} (best-first, SharkSearch; the link learner's prior); classifier with good = course, "
        f"trained on other schools (focused, link learner); relevant = WebKB category 'course'; "
        f"budget {args.pages} fetches, one at a time"
    )
    print(f"{'crawl':<16}{'fetched':>9}{'ok (200)':>10}{'course':>8}{'harvest':>9}{'of oracle':>11}{'pages/s':>9}")
    ceiling = results["path oracle"]["relevant_pages"]
    for label, s in results.items():
        share = s["relevant_pages"] / ceiling if ceiling else 0.0  # type: ignore[operator]
        print(
            f"{label:<16}{s['pages_fetched']:>9}{s['pages_ok']:>10}{s['relevant_pages']:>8}"
            f"{s['harvest_rate']:>9.1%}{share:>11.0%}{s['pages_per_second']:>9}"
        )
    print("\nHow much is left (the crawl's own estimate from its judge's verdicts, 90 % interval) and the truth "
          "(labels): course pages behind the links found but not fetched, and every course page not found")
    for label, spider, _ in CRAWLS:
        left = results[label].get("remaining")
        if isinstance(left, dict) and spider in ("linklearner", "focused"):
            folder = args.out / spider if label != "focused (soft)" else args.out / "focused-soft"
            in_queue, not_found = left_in_queue(folder, labels)
            print(f"  {label:<16} behind the queued links: estimated {left['expected']:.0f} "
                  f"({left['low']:.0f}–{left['high']:.0f}), truth {in_queue}; in all: up to "
                  f"{left['high_all']:.0f}, truth {not_found}; "
                  f"{left['rate_now']:.3f} per fetch next")
    print(f"\nPlot of course pages against pages fetched: {png}")
    print(f"Outputs (history.jsonl, links.tsv, summary.json, report.html) in {args.out}/<crawl>/")
    print(f"The link learner's crawl report (open it in a browser): {args.out / 'linklearner' / 'report.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
