"""Search engine–crawler symbiosis on a labelled corpus (docs/methods.md §4): communities
simulated as the 2003 paper simulated one on ODP, each engine refocused every night by
``scrapy symbiosis``, against three controls that could show it does not work.

    .venv/bin/python -m bench.symbiosis --corpus ../shared/corpora/webkb [--communities 15] [--nights 4]

The simulation, per community (seeded):
- interests = 2 categories of the taxonomy's shallowest level with at least 3
  categories besides catch-alls (other, misc, …); on WebKB every pair of its six
  classes in turn; another, disjoint pair is the community's *other* interests;
- bookmarks = random pages of its categories; the initial collection = a
  breadth-first crawl from the bookmarks up to MAX_INDEX pages;
- the query pool = phrases of the titles and h1–h3 headings of the corpus's
  pages of those categories (2–4 content words; a phrase found in both
  categories is dropped), each with its category and the pages it was made from;
  each day draws REPRESENTATIVE queries for the night and HELD_BACK others to
  measure with, no query drawn twice in a run.

Measured after night n on day n + 1's held-back queries — unseen: never a
night's query — P@10 with each query's source pages removed from the ranking
(a result is relevant when its label lies in the query's category), the share
of queries whose source page the engine ranks in its top 10 (self-retrieval),
S(C, q) (the mean TF-IDF cosine of the collection's pages to the day's queries
concatenated, the corpus's IDF) and the collection's size; every arm on the
same queries, paired with the initial collection:
- **loop**: night n steered by day n's representative queries (the system);
- **no feedback**: day 1's queries every night;
- **off-community**: nights steered by the other interests' queries;
- **size-matched**: the first k pages of the initial breadth-first crawl, k the
  loop's size that night (is a smaller collection alone better?);
- **drift**: the loop until night DRIFT_NIGHT, then the other interests' queries —
  measured on the other interests' next-day queries beside the loop (which never
  asked them) and the off-community arm (which asked them from night 1);
- **repeated queries** (the papers' figure): the night's own queries, the next day;
- with ``--weekly`` on a dated corpus (phpdoc-evolving): night n crawls the
  replay as of week n; the stale share of the loop's collection a week after its
  night against the static initial collection's.

The primary metric, named before any run: P@10 on the next day's unseen queries
after the last night, loop − initial collection. The comparisons of the loop with
the initial collection and the three controls (P@10 and S) are one family,
Holm-corrected; differences have 95 % t intervals over communities. Writes
results.json and plots under --out, and a section of BENCHMARKS.md per corpus.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import ROOT, median, write_section
from bench.quality import corpus_files
from crawlproject.corpus.reader import Corpus, load_corpus
from crawlproject.evaluation.statistics import holm, mean_and_stderr, paired_one_tailed, t_interval
from crawlproject.refresh.workload import headings as headings_of
from crawlproject.replay import LOOPBACK_SPEED
from crawlproject.replay.process import ReplayProcess
from crawlproject.search.engine import IndexHome, QueryError, SearchEngine, parse_weights
from crawlproject.web.text import TermAnalyzer

CATCH_ALLS = {"other", "others", "misc", "miscellaneous", "unknown", "unlabelled", "unlabeled"}
WEIGHTS = {"votes only": "votes:1", "text+title only": "text:1,title:1", "all (default)": "votes:1,text:1,title:1"}
WORD = re.compile(r"[a-z][a-z0-9'+#-]*[a-z0-9+#]|[a-z]")
CRAWLED_ARMS = ("loop", "no feedback", "off-community", "drift")
PRIMARY = ("p_at_10", "loop", "initial")  #: named before any run: metric, arm, against
DRIFT_NIGHT = 3  #: the night the drifting community's interests change


# --- the community ------------------------------------------------------------------------

def community_level(corpus: Corpus) -> tuple[int, list[str]]:
    """The shallowest taxonomy level with ≥ 3 categories besides catch-alls."""
    depth = max(label.count("/") + 1 for label in corpus.labels.values())
    for level in range(1, depth + 1):
        names = {
            "/".join(label.split("/")[:level]) for label in corpus.labels.values() if label.count("/") + 1 >= level
        }
        usable = sorted(name for name in names if name.rsplit("/", 1)[-1].lower() not in CATCH_ALLS)
        if len(usable) >= 3:
            return level, usable
    raise SystemExit("the taxonomy has no level with three categories besides catch-alls")


def category_of(label: str | None, level: int) -> str | None:
    return "/".join(label.split("/")[:level]) if label and label.count("/") + 1 >= level else None


def headings(warc: Path, wanted: set[str]) -> dict[str, list[str]]:
    """Title and h1–h3 texts of the pages in *wanted* (first capture)."""
    from warcio.archiveiterator import ArchiveIterator

    from crawlproject.web.urls import canonicalize

    found: dict[str, list[str]] = {}
    with warc.open("rb") as f:
        for record in ArchiveIterator(f):
            if record.rec_type != "response" or record.http_headers is None:
                continue
            url = canonicalize(record.rec_headers.get_header("WARC-Target-URI"))
            if url not in wanted or url in found or record.http_headers.get_statuscode() != "200":
                continue
            body = record.content_stream().read(200_000).decode("utf-8", "replace")
            found[url] = headings_of(body)
    return found


@dataclass(frozen=True)
class Query:
    text: str
    category: str
    sources: frozenset[str]  #: the pages the phrase was made from: never counted relevant for it


def query_pool(corpus: Corpus, found: dict[str, list[str]], categories: list[str], level: int,
               analyzer: TermAnalyzer) -> dict[str, list[Query]]:
    """Per category, phrases of its pages' titles and headings (see module doc)."""
    pages = {url: category_of(label, level) for url, label in corpus.labels.items() if url in corpus.text}
    sources: dict[str, dict[str, set[str]]] = {category: {} for category in categories}
    for url, texts in found.items():
        if pages.get(url) not in sources:
            continue
        for text in texts:
            words = [word for word in WORD.findall(text.lower()) if analyzer.terms(word)][:4]
            if len(words) >= 2:
                sources[pages[url] or ""].setdefault(" ".join(words), set()).add(url)
    shared = set.intersection(*(set(found) for found in sources.values())) if len(sources) > 1 else set()
    return {category: [Query(text, category, frozenset(urls)) for text, urls in sorted(found.items())
                       if text not in shared] for category, found in sources.items()}


@dataclass
class Day:
    representative: list[Query]  #: the night's queries
    held_back: list[Query]  #: measured on, never a night's query


def sample_days(pool: dict[str, list[Query]], days: int, representative: int, held_back: int,
                rng: random.Random) -> list[Day]:
    """*days* days of queries, half per category, no query drawn twice."""
    per_day = (representative + held_back) // len(pool)
    drawn = {category: rng.sample(queries, per_day * days) for category, queries in pool.items()}
    cut = representative // len(pool)
    plan = []
    for day in range(days):
        chunks = {category: queries[day * per_day:(day + 1) * per_day] for category, queries in drawn.items()}
        plan.append(Day([q for chunk in chunks.values() for q in chunk[:cut]],
                        [q for chunk in chunks.values() for q in chunk[cut:]]))
    return plan


@dataclass
class Community:
    number: int
    categories: list[str]
    other: list[str]  #: the other interests: off-community steering, the drift's new interests
    bookmarks: list[str]
    days: list[Day]  #: nights + 1 days of the community's queries
    other_days: list[Day]
    folder: Path
    rows: dict[str, list[dict[str, float]]] = field(default_factory=dict)  #: arm → per-night metrics
    ablation: dict[str, dict[str, float]] = field(default_factory=dict)
    nights: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


# --- measuring a collection ------------------------------------------------------------------

class Measure:
    def __init__(self, corpus: Corpus, level: int, max_index: int, changes: dict[str, list[float]] | None):
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.corpus, self.level, self.max_index, self.changes = corpus, level, max_index, changes
        self.analyzer = TermAnalyzer()
        # S(C, q) weighs terms by the IDF of the whole corpus (the web), the same for every collection.
        self.tfidf = TfidfVectorizer(analyzer=self.analyzer.terms)
        self.tfidf.fit(corpus.text.values())

    def precision(self, index: Path, queries: list[Query], weights: str = "") -> tuple[float, float]:
        """P@10 with each query's source pages removed from its ranking, and
        the share of queries whose source page is in the engine's top 10."""
        engine = SearchEngine(index, parse_weights(weights) if weights else None)
        scores, selves = [], []
        for query in queries:
            try:
                hits = engine.search(query.text, limit=10 + len(query.sources)).hits
            except QueryError:
                continue
            selves.append(any(hit.key in query.sources for hit in hits[:10]))
            ranked = [hit for hit in hits if hit.key not in query.sources][:10]
            scores.append(sum(category_of(self.corpus.category(hit.key), self.level) == query.category
                              for hit in ranked) / 10)
        engine.collection.close()
        return (statistics.fmean(scores) if scores else 0.0), (statistics.fmean(selves) if selves else 0.0)

    def quality(self, keys: list[str], queries: list[Query]) -> float:
        """S(C, q): mean cosine between the pages and the day's queries concatenated."""
        texts = [self.corpus.text[key] for key in keys if self.corpus.text.get(key)]
        if not texts:
            return 0.0
        query = self.tfidf.transform([" ".join(q.text for q in queries)])
        return float((self.tfidf.transform(texts) @ query.T).mean())

    def stale(self, keys: list[str], fetched: float, now: float) -> float:
        """The share of *keys* changed or deleted between *fetched* and *now* (versions.tsv)."""
        assert self.changes is not None
        return statistics.fmean(any(fetched < moment <= now for moment in self.changes.get(key, ()))
                                for key in keys) if keys else 0.0

    def collection(self, index: Path, next_day: Day, other_day: Day | None = None,
                   repeated: list[Query] | None = None) -> dict[str, float]:
        from crawlproject.search.collection import IndexedCollection

        collection = IndexedCollection(IndexHome(index).current())
        keys = collection.keys()
        collection.close()
        precision, selves = self.precision(index, next_day.held_back)
        row = {"p_at_10": precision, "self_retrieval": selves, "size": len(keys),
               "cost": len(keys) / self.max_index, "quality": self.quality(keys, next_day.held_back),
               "keys": keys}
        if other_day is not None:
            row["p_at_10_other"] = self.precision(index, other_day.held_back)[0]
        if repeated is not None:
            row["p_at_10_repeated"] = self.precision(index, repeated)[0]
        return row


# --- running the crawls ----------------------------------------------------------------------

def scrapy(arguments: list[str], log: Path, timeout: float = 3600, allowed: tuple[int, ...] = (0,)) -> int:
    with log.open("a") as out:
        completed = subprocess.run([sys.executable, "-m", "scrapy", *arguments], cwd=ROOT,  # noqa: S603
                                   stdout=out, stderr=subprocess.STDOUT, timeout=timeout, check=False)
    if completed.returncode not in allowed:
        raise RuntimeError(f"scrapy {arguments[0]} failed; see {log}")
    return completed.returncode


def speed_settings(proxy: str) -> list[str]:
    pairs = {**LOOPBACK_SPEED, "FOCUS_REPLAY_PROXY": proxy, "LOG_LEVEL": "WARNING"}
    return [part for name, value in pairs.items() for part in ("-s", f"{name}={value}")]


def initial_collection(community: Community, proxy: str, max_index: int) -> Path:
    folder = community.folder / "initial"
    if (folder / "index" / "current").exists():
        return folder / "index"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "bookmarks.txt").write_text("".join(f"{url}\n" for url in community.bookmarks))
    scrapy(["crawl", "breadthfirst", "-a", f"seeds={folder / 'bookmarks.txt'}",
            # MAX_INDEX pages for the collection (2xx), as the nights count them; dead links do not count.
            "-s", f"FOCUS_OK_PAGECOUNT={max_index}", "-s", f"CLOSESPIDER_ITEMCOUNT={10 * max_index}",
            "-s", f"FOCUS_INDEX_DIR={folder / 'index'}",
            "-s", f"FOCUS_OUTPUT_DIR={folder / 'crawl'}", *speed_settings(proxy)], folder / "log.txt")
    return folder / "index"


def size_matched(community: Community, size: int, analyzer: TermAnalyzer) -> Path:
    """An index of the initial breadth-first crawl's first *size* pages."""
    from crawlproject.search.document import pages_from_crawl

    target = community.folder / "size-matched" / str(size)
    if (target / "current").exists():
        return target
    home = IndexHome(target)
    collection = home.open_or_create()
    writer = collection.writer()
    for page in itertools.islice(pages_from_crawl(community.folder / "initial" / "crawl", analyzer, 10), size):
        writer.add(page)
    writer.commit(analyzer)
    writer.close()
    collection.close()
    return target


class Nights:
    """One arm's nights on its own copy of an index."""

    def __init__(self, community: Community, arm: str, start: Path, args: argparse.Namespace):
        self.community, self.arm, self.args = community, arm, args
        self.index = community.folder / arm.replace(" ", "-") / "index"
        shutil.rmtree(self.index.parent, ignore_errors=True)
        shutil.copytree(start, self.index, symlinks=True)

    def run(self, number: int, queries: list[Query], proxy: str) -> dict[str, Any]:
        file = self.index.parent / f"night{number}.txt"
        file.write_text("".join(f"{query.text}\n" for query in queries))
        started = time.monotonic()
        args = self.args
        before = set((self.index / "nights").glob("*/report.json"))
        # exit 1: a night that kept the current collection (too few pages, most fetches failed) — an outcome
        scrapy(["symbiosis", "--index", str(self.index), "--queries", str(file), "--max-index", str(args.max_index),
                "--n-hits", str(args.n_hits), "--max-iter", str(args.max_iter), "--theta", str(args.theta),
                *speed_settings(proxy)], self.index.parent / "log.txt", allowed=(0, 1))
        reports = sorted(set((self.index / "nights").glob("*/report.json")) - before)
        if not reports:
            raise RuntimeError(f"the night wrote no report; see {self.index.parent / 'log.txt'}")
        report = json.loads(reports[-1].read_text())
        return {"seconds": time.monotonic() - started, "swapped": report["swapped"],
                "crawls": sum(len(q["iterations"]) for q in report["queries"]),
                "fetched": sum(i["fetched"] for q in report["queries"] for i in q["iterations"])}


def run_community(community: Community, measure: Measure, proxies: list[str], args: argparse.Namespace) -> None:
    """Every arm's nights, each measured on the next day's queries."""
    days, other, last = community.days, community.other_days, args.nights
    initial = initial_collection(community, proxies[0], args.max_index)
    rows: dict[str, list[dict[str, Any]]] = {arm: [] for arm in ("initial", "size-matched", *CRAWLED_ARMS)}
    for night in range(1, last + 1):
        rows["initial"].append(measure.collection(initial, days[night], other[night], days[night - 1].representative))
    plans = {"loop": [day.representative for day in days[:last]],
             "no feedback": [days[0].representative] * last,
             "off-community": [day.representative for day in other[:last]],
             "drift": [day.representative for day in days[:DRIFT_NIGHT - 1]]
             + [day.representative for day in other[DRIFT_NIGHT - 1:last]]}
    forks: dict[int, Path] = {}
    for arm in CRAWLED_ARMS:
        # An arm that begins as the loop begins takes the loop's collection from where they part.
        shared = {"no feedback": 1, "drift": DRIFT_NIGHT - 1}.get(arm, 0)
        nights = Nights(community, arm, forks.get(shared, initial), args)
        community.nights[arm] = []
        for night in range(1, last + 1):
            if night <= shared:
                rows[arm].append(rows["loop"][night - 1])
                continue
            done = nights.run(night, plans[arm][night - 1], proxies[night if args.weekly else 0])
            community.nights[arm].append(done)
            row = measure.collection(nights.index, days[night], other[night], plans[arm][night - 1])
            if args.weekly:
                row["stale"] = measure.stale(row["keys"], args.week(night), args.week(night + 1))
                row["stale_static"] = measure.stale(rows["initial"][0]["keys"], args.week(0), args.week(night + 1))
            rows[arm].append(row)
            if arm == "loop":
                forks[night] = nights.index.parent / f"after{night}"
                shutil.copytree(nights.index, forks[night], symlinks=True)
                matched = size_matched(community, row["size"], measure.analyzer)
                rows["size-matched"].append(measure.collection(matched, days[night]))
            print(f"  community {community.number} {arm:13} night {night}: P@10 {row['p_at_10']:.3f} "
                  f"(initial {rows['initial'][night - 1]['p_at_10']:.3f}), {row['size']} pages, "
                  f"S {row['quality']:.4f}, {done['crawls']} crawls in {done['seconds']:.0f}s", flush=True)
    for arm_rows in rows.values():
        for row in arm_rows:
            row.pop("keys", None)
    community.rows = rows
    measured = [query for day in days[1:last + 1] for query in day.held_back]
    for name, weights in WEIGHTS.items():
        community.ablation[name] = {"initial": measure.precision(initial, measured, weights)[0],
                                    "loop": measure.precision(community.folder / "loop" / "index", measured,
                                                              weights)[0]}


# --- index speed, size and latency ----------------------------------------------------------

def index_figures(communities: list[Community], queries: list[str], repeats: int) -> dict[str, float]:
    """Index the largest initial crawl's pages anew (median of *repeats*),
    its bytes per page, and query latency over 1,000 queries."""
    from crawlproject.search.collection import IndexedCollection
    from crawlproject.search.document import pages_from_crawl

    crawl = max((c.folder / "initial" / "crawl" for c in communities),
                key=lambda folder: sum(1 for _ in (folder / "pages.jsonl").open()))
    analyzer = TermAnalyzer()
    rates, sizes = [], []
    count = 0
    for repeat in range(repeats):
        target = crawl.parent / f"reindex{repeat}"
        shutil.rmtree(target, ignore_errors=True)
        collection = IndexHome(target).open_or_create()
        started = time.perf_counter()
        writer = collection.writer()
        count = 0
        for page in pages_from_crawl(crawl, analyzer, 10):
            writer.add(page)
            count += 1
        writer.commit(analyzer)
        writer.close()
        rates.append(count / (time.perf_counter() - started))
        sizes.append(sum(path.stat().st_size for path in Path(collection.folder).rglob("*") if path.is_file()) / count)
        collection.close()
    largest = max((c.folder / "loop" / "index" for c in communities),
                  key=lambda index: IndexedCollection(IndexHome(index).current()).page_count())
    engine = SearchEngine(largest)
    latencies = []
    rng = random.Random(7)
    for _ in range(1000):
        query = rng.choice(queries)
        started = time.perf_counter()
        engine.search(query, limit=10)
        latencies.append((time.perf_counter() - started) * 1000)
    latencies.sort()
    return {"pages_per_second": median(rates), "bytes_per_page": median(sizes), "pages": count,
            "largest_pages": engine.page_count(), "p50_ms": latencies[499], "p99_ms": latencies[989]}


# --- the report ------------------------------------------------------------------------------

METRICS = {"p_at_10": ("P@10, next day's unseen queries", "{:.3f}"),
           "self_retrieval": ("self-retrieval (source page in the top 10)", "{:.2f}"),
           "quality": ("S(C, q), next day's queries", "{:.4f}"),
           "size": ("collection size (pages)", "{:.0f}"),
           "cost": ("cost = size / MAX_INDEX", "{:.2f}")}
ARM_COLUMNS = ("initial", "loop", "size-matched", "no feedback", "off-community")
CONTROLS = ("initial", "size-matched", "no feedback", "off-community")


def cell(values: list[float], form: str) -> str:
    mean, error = mean_and_stderr(values)
    return f"{form.format(mean)} ± {form.format(error)}"


def family(communities: list[Community], last: int) -> list[dict[str, Any]]:
    """The loop against the initial collection and each control, after the
    last night: P@10 and S, one-tailed paired t-tests, Holm-adjusted."""
    tests = []
    for metric in ("p_at_10", "quality"):
        for control in CONTROLS:
            loop = [c.rows["loop"][last][metric] for c in communities]
            other = [c.rows[control][last][metric] for c in communities]
            mean, low, high = t_interval([a - b for a, b in zip(loop, other, strict=True)])
            tests.append({"metric": metric, "control": control, "difference": mean, "low": low, "high": high,
                          "p": paired_one_tailed(loop, other)[1],
                          "primary": (metric, "loop", control) == PRIMARY})
    for test, adjusted in zip(tests, holm([t["p"] for t in tests]), strict=True):
        test["holm"] = adjusted
    return tests


def plot(communities: list[Community], nights: int, folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    panels = (("p_at_10", "P@10 on the next day's unseen queries", ARM_COLUMNS),
              ("quality", "S(C, q) of the next day's queries", ARM_COLUMNS),
              ("size", "collection size (pages)", ("initial", "loop", "no feedback", "off-community")),
              ("p_at_10_other", "P@10 on the other interests' queries (drift)",
               ("initial", "loop", "drift", "off-community")))
    for key, title, arms in panels:
        figure, axes = plt.subplots(figsize=(5.4, 3.6))
        for arm in arms:
            means, errors = zip(*(mean_and_stderr([c.rows[arm][n][key] for c in communities])
                                  for n in range(nights)), strict=True)
            axes.errorbar(range(1, nights + 1), means, yerr=errors, capsize=3, label=arm,
                          fmt="k--" if arm == "initial" else "o-")
        if key == "p_at_10_other":
            axes.axvline(DRIFT_NIGHT - 0.5, color="grey", lw=0.8)
        axes.set_xlabel("after night")
        axes.set_title(title, fontsize=9)
        axes.set_xticks(range(1, nights + 1))
        axes.legend(fontsize=7)
        figure.tight_layout()
        path = folder / f"{key}.png"
        figure.savefig(path, dpi=110)
        plt.close(figure)
        paths.append(path)
    return paths


def mean_of(communities: list[Community], arm: str, night: int, key: str) -> float:
    return statistics.fmean(c.rows[arm][night][key] for c in communities)


def report(communities: list[Community], args: argparse.Namespace, level: int, speed: dict[str, float],
           plots: list[Path], minutes: float) -> str:
    nights, last = args.nights, args.nights - 1
    lines = [
        f"### Search engine–crawler symbiosis on {args.corpus.name}, against three controls",
        "",
        f"Command: `.venv/bin/python -m bench.symbiosis --corpus {args.corpus_arg} --communities {args.communities} "
        f"--nights {nights} --max-index {args.max_index} --seed {args.seed}"
        f"{' --weekly' if args.weekly else ''}` ({minutes:.0f} min). {len(communities)} communities, each 2 "
        f"categories of taxonomy level {level} and another pair as its other interests "
        f"({'; '.join(' + '.join(c.categories) + ' / ' + ' + '.join(c.other) for c in communities)}); "
        f"{args.bookmarks} bookmarks per category; MAX_INDEX = {args.max_index}, {args.representative} queries a night "
        f"(MAX_PAGES = {args.max_index // args.representative}), N_HITS = {args.n_hits}, MAX_ITER = {args.max_iter}, "
        f"THETA = {args.theta}, the TF crawler (the paper's); {args.held_back} unseen queries measured a day. "
        "A query's source pages are removed from its ranking. Every arm is measured on the same queries "
        "(module doc of bench/symbiosis.py). Mean ± s.e. over communities.",
        "",
        f"**Primary metric, named before the run:** {METRICS[PRIMARY[0]][0]} after the last night, "
        f"{PRIMARY[1]} − {PRIMARY[2]} collection.",
        "",
        f"After night {nights}:",
        "",
        "| metric | " + " | ".join(ARM_COLUMNS) + " |",
        "|---|" + "---:|" * len(ARM_COLUMNS),
    ]
    for key, (title, form) in METRICS.items():
        cells = [cell([c.rows[arm][last][key] for c in communities], form) if key in c.rows[arm][last] else ""
                 for arm in ARM_COLUMNS for c in communities[:1]]
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    tests = family(communities, last)
    lines += ["", f"The loop against each control after night {nights} (paired over {len(communities)} communities; "
              "one-tailed t-test that the loop is higher; Holm over the 8 tests):", "",
              "| metric | loop − | difference | 95 % interval | p | Holm p | |", "|---|---|---:|---|---:|---:|---|"]
    for test in tests:
        form = METRICS[test["metric"]][1]
        verdict = "higher" if test["holm"] <= 0.05 else "not shown"
        lines.append(f"| {METRICS[test['metric']][0]}{' (primary)' if test['primary'] else ''} | {test['control']} | "
                     f"{test['difference']:+.4f} | [{test['low']:+.4f}, {test['high']:+.4f}] | {test['p']:.3f} | "
                     f"{test['holm']:.3f} | {verdict} |")
    lines += ["", "Night by night, P@10 on the next day's unseen queries (mean over communities):", "",
              "| arm | " + " | ".join(f"after night {n + 1}" for n in range(nights)) + " |",
              "|---|" + "---:|" * nights]
    for arm in (*ARM_COLUMNS, "drift"):
        lines.append(f"| {arm} | " + " | ".join(f"{mean_of(communities, arm, n, 'p_at_10'):.3f}"
                                                for n in range(nights)) + " |")
    repeated = [c.rows["loop"][n]["p_at_10_repeated"] - c.rows["initial"][n]["p_at_10_repeated"]
                for c in communities for n in range(nights)]
    unseen = [
        c.rows["loop"][n]["p_at_10"] - c.rows["initial"][n]["p_at_10"] for c in communities for n in range(nights)
    ]
    r_mean, r_low, r_high = t_interval(repeated)
    u_mean, u_low, u_high = t_interval(unseen)
    lines += ["", "Repeated queries (the papers' figure: a night's own queries asked again the next day) against "
              "unseen ones, loop − initial P@10, every night of every community:", "",
              f"- repeated: {r_mean:+.3f} [{r_low:+.3f}, {r_high:+.3f}]; unseen: {u_mean:+.3f} "
              f"[{u_low:+.3f}, {u_high:+.3f}] (intervals over community-nights, not independent: a guide)."]
    lines += ["", f"Drift: the community's interests become its other pair's on night {DRIFT_NIGHT}; P@10 on the "
              "other interests' next-day queries:", "",
              "| arm | " + " | ".join(f"after night {n + 1}" for n in range(nights)) + " |", "|---|" + "---:|" * nights]
    for arm in ("initial", "loop", "drift", "off-community"):
        lines.append(f"| {arm} | " + " | ".join(f"{mean_of(communities, arm, n, 'p_at_10_other'):.3f}"
                                                for n in range(nights)) + " |")
    drifted = [c.rows["drift"][last]["p_at_10_other"] for c in communities]
    stayed = [c.rows["loop"][last]["p_at_10_other"] for c in communities]
    f_mean, f_low, f_high = t_interval([a - b for a, b in zip(drifted, stayed, strict=True)])
    lines += ["", f"- drift − loop on the new interests after night {nights}: {f_mean:+.3f} [{f_low:+.3f}, "
              f"{f_high:+.3f}] (one-tailed p = {paired_one_tailed(drifted, stayed)[1]:.3f}, outside the family)."]
    if args.weekly:
        lines += ["", "Freshness: night n crawls the web as of week n; the stale share (changed or deleted since "
                  "fetched) of each collection a week after the loop's night:", "",
                  "| collection | " + " | ".join(f"week {n + 2}" for n in range(nights)) + " |",
                  "|---|" + "---:|" * nights,
                  "| static (the initial crawl, week 0) | " + " | ".join(
                      f"{100 * mean_of(communities, 'loop', n, 'stale_static'):.1f} %" for n in range(nights)) + " |",
                  "| the loop's | " + " | ".join(
                      f"{100 * mean_of(communities, 'loop', n, 'stale'):.1f} %" for n in range(nights)) + " |"]
    lines += ["", "Against the papers (docs/methods.md §4; one sentence per claim):", "",
              "| claim (2003 run) | here | |", "|---|---|---|"]
    final_size = mean_of(communities, "loop", last, "size")
    lines.append(f"| the collection shrinks (100,000 → ~65,000 pages, 65 %) | {args.max_index} → "
                 f"{final_size:.0f} ({final_size / args.max_index:.0%}); size-matched breadth-first P@10 "
                 f"{mean_of(communities, 'size-matched', last, 'p_at_10'):.3f} vs loop "
                 f"{mean_of(communities, 'loop', last, 'p_at_10'):.3f} | "
                 f"{'reproduced' if final_size < args.max_index else 'not reproduced'} |")
    primary = next(t for t in tests if t["primary"])
    p_first = mean_of(communities, "loop", 0, "p_at_10")
    p_final = mean_of(communities, "loop", last, "p_at_10")
    lines.append(f"| P@10 recovers above day 1 | after night 1 {p_first:.3f}, after night {nights} {p_final:.3f}; "
                 f"loop − initial {primary['difference']:+.3f} (Holm p {primary['holm']:.3f}) | "
                 f"{'reproduced' if p_final >= p_first and primary['holm'] <= 0.05 else 'not reproduced'} |")
    s_means = [mean_of(communities, "loop", n, "quality") for n in range(nights)]
    rises = all(b >= a for a, b in itertools.pairwise(s_means))
    s_test = next(t for t in tests if t["metric"] == "quality" and t["control"] == "no feedback")
    lines.append(f"| S(C, q) rises day over day | {' → '.join(f'{v:.4f}' for v in s_means)}; loop − no feedback "
                 f"{s_test['difference']:+.4f} (Holm p {s_test['holm']:.3f}) | "
                 f"{'reproduced' if rises and s_test['holm'] <= 0.05 else 'not reproduced'} |")
    lines += ["", "Field weights (P@10 over every day's unseen queries, mean over communities):", "",
              "| weights | initial collection | after the last night (loop) |", "|---|---:|---:|"]
    for name, weights in WEIGHTS.items():
        lines.append(f"| {name} (`{weights}`) | "
                     f"{statistics.fmean(c.ablation[name]['initial'] for c in communities):.3f} | "
                     f"{statistics.fmean(c.ablation[name]['loop'] for c in communities):.3f} |")
    done = [n for c in communities for arm in CRAWLED_ARMS for n in c.nights[arm]]
    lines += ["", f"A night took {median([n['seconds'] for n in done]):.0f} s (median of {len(done)}; "
              f"{median([n['crawls'] for n in done]):.0f} crawls, {median([n['fetched'] for n in done]):.0f} pages); "
              "nights that kept the current collection (the floor: fewer than half its pages, or most fetches "
              "failed — the night's collection is then the last one): " + ", ".join(
                  f"{arm} {sum(not n['swapped'] for c in communities for n in c.nights[arm])} of "
                  f"{sum(len(c.nights[arm]) for c in communities)}" for arm in CRAWLED_ARMS) + ".",
              "",
              f"Index: {speed['pages_per_second']:.0f} pages/s indexed (a {speed['pages']}-page crawl re-indexed, "
              f"median of {args.repeats}); {speed['bytes_per_page'] / 1024:.1f} KiB of index per page; "
              f"query latency over 1,000 queries on the largest collection ({speed['largest_pages']} pages): "
              f"p50 {speed['p50_ms']:.2f} ms, p99 {speed['p99_ms']:.2f} ms.", ""]
    lines += [f"![{path.stem}]({os.path.relpath(path, ROOT)})" for path in plots]
    return "\n".join(lines)


# --- the run ---------------------------------------------------------------------------------

def draw_communities(corpus: Corpus, warc: Path, level: int, categories: list[str], args: argparse.Namespace,
                     rng: random.Random, out: Path, live: set[str] | None) -> list[Community]:
    """Category pairs in a seeded order, each with a disjoint other pair; pairs
    with too few title and heading phrases for the run's days are passed over."""
    analyzer = TermAnalyzer()
    members = {c: sorted(u for u, label in corpus.labels.items() if category_of(label, level) == c
                         and corpus.text.get(u) and (live is None or u in live)) for c in categories}
    found = headings(warc, {u for urls in members.values() for u in urls})
    needed = (args.representative + args.held_back) // 2 * (args.nights + 1)
    pools = {c: query_pool(corpus, found, [c], level, analyzer)[c] for c in categories}
    usable = [c for c in categories if len(pools[c]) >= needed and len(members[c]) >= args.bookmarks]
    pairs = list(itertools.combinations(usable, 2))
    rng.shuffle(pairs)
    communities: list[Community] = []
    for number, chosen in enumerate(pairs[:args.communities], 1):
        others = [pair for pair in pairs if not set(pair) & set(chosen)]
        if not others:
            raise SystemExit("too few categories for a disjoint other pair")
        other = list(rng.choice(others))
        own_pool = query_pool(corpus, found, list(chosen), level, analyzer)
        other_pool = query_pool(corpus, found, other, level, analyzer)
        if min(map(len, (*own_pool.values(), *other_pool.values()))) < needed:
            continue  # phrases shared by the pair leave too few
        bookmarks = [url for c in chosen for url in rng.sample(members[c], args.bookmarks)]
        communities.append(Community(
            number, list(chosen), other, bookmarks,
            sample_days(own_pool, args.nights + 1, args.representative, args.held_back, rng),
            sample_days(other_pool, args.nights + 1, args.representative, args.held_back, rng),
            out / f"community{number}"))
        print(f"community {number}: {' + '.join(chosen)} (other interests {' + '.join(other)})")
    if len(communities) < args.communities:
        raise SystemExit(f"only {len(communities)} communities with enough query phrases could be drawn")
    return communities


def versions(corpus: Path) -> tuple[float, dict[str, list[float]], set[str]]:
    """From a dated corpus's versions.tsv: its first moment, every page's
    moments of change (a new version or deletion) and the pages live then."""
    from crawlproject.replay.archive import parse_time

    changes: dict[str, list[float]] = {}
    rows = [line.split("\t") for line in (corpus / "versions.tsv").read_text().splitlines()[1:] if line]
    start = min(parse_time(row[2]) for row in rows)
    live = {row[0] for row in rows if parse_time(row[2]) <= start}
    for row in rows:
        if row[3]:
            changes.setdefault(row[0], []).append(parse_time(row[3]))
    return start, changes, live


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/webkb")
    parser.add_argument("--communities", type=int, default=15)
    parser.add_argument("--nights", type=int, default=4)
    parser.add_argument("--bookmarks", type=int, default=5, help="bookmarked pages per category")
    parser.add_argument("--max-index", type=int, default=300)
    parser.add_argument("--representative", type=int, default=10, help="queries a night")
    parser.add_argument("--held-back", type=int, default=10, help="unseen queries measured a day")
    parser.add_argument("--n-hits", type=int, default=25)
    parser.add_argument("--max-iter", type=int, default=3)
    parser.add_argument("--theta", type=float, default=0.8)
    parser.add_argument("--weekly", action="store_true",
                        help="a dated corpus (versions.tsv): night n crawls the web as of week n; stale shares")
    parser.add_argument("--repeats", type=int, default=3, help="runs of the indexing-speed measurement")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2, help="communities simulated at once")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-write", action="store_true", help="do not touch BENCHMARKS.md")
    args = parser.parse_args()
    args.corpus_arg = args.corpus
    args.corpus = args.corpus.resolve()
    out = args.out or ROOT / "bench" / "results" / f"symbiosis-{args.corpus.name}"
    started = time.monotonic()
    warc, labels = corpus_files(args.corpus)
    corpus = load_corpus(warc, labels)
    level, categories = community_level(corpus)
    changes, live = None, None
    moments = [0.0]
    if args.weekly:
        first, changes, live = versions(args.corpus)
        moments = [first + 7 * 86400 * week for week in range(args.nights + 2)]
    args.week = moments.__getitem__
    measure = Measure(corpus, level, args.max_index, changes)
    communities = draw_communities(corpus, warc, level, categories, args, random.Random(args.seed), out, live)
    stamps = [datetime.fromtimestamp(m, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") for m in moments[:-1]]
    replays = ([ReplayProcess(str(warc), as_of=stamp) for stamp in stamps] if args.weekly
               else [ReplayProcess(str(warc))])
    try:
        proxies = [replay.proxy_url for replay in replays]
        with ThreadPoolExecutor(args.jobs) as pool:
            for future in [pool.submit(run_community, c, measure, proxies, args) for c in communities]:
                future.result()
    finally:
        for replay in replays:
            replay.stop()
    all_queries = [q.text for c in communities for d in c.days for q in d.held_back + d.representative]
    speed = index_figures(communities, all_queries, args.repeats)
    out.mkdir(parents=True, exist_ok=True)
    plots = plot(communities, args.nights, out)
    (out / "results.json").write_text(json.dumps(
        {"level": level, "speed": speed, "primary": PRIMARY, "communities": [
            {"categories": c.categories, "other": c.other, "bookmarks": c.bookmarks, "rows": c.rows,
             "nights": c.nights, "ablation": c.ablation} for c in communities]}, indent=1))
    body = report(communities, args, level, speed, plots, (time.monotonic() - started) / 60)
    print("\n" + body)
    if not args.no_write:
        write_section(f"symbiosis-{args.corpus.name}", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
