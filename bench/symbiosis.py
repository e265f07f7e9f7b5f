"""Search engine–crawler symbiosis on a labelled corpus (docs/methods.md §4): a community
simulated as the 2003 paper simulated one on ODP, its engine refocused every
night by ``scrapy symbiosis``, measured day by day.

    .venv/bin/python -m bench.symbiosis --corpus ../shared/corpora/webkb [--communities 3] [--days 5]

The simulation, per community (seeded):
- interests = 2 random categories of the taxonomy's shallowest level that has
  at least 3 categories besides catch-alls (other, misc, …);
- bookmarks = random pages of those categories; the initial collection = a
  breadth-first crawl from the bookmarks up to MAX_INDEX pages, indexed as
  it is fetched;
- the query pool = phrases of the titles and h1–h3 headings of the corpus's
  pages of those categories (up to 4 content words of each, at least 2; a
  phrase found in both categories is dropped), each tagged with its category —
  as the paper derived queries from ODP's page summaries;
- each day samples REPRESENTATIVE queries for the night (half per category)
  and HELD_BACK other queries to measure the engine with; the night runs
  ``scrapy symbiosis`` with the representative queries;
- per day: P@10 on the held-back queries (a result is relevant when its label
  lies in the query's category; fewer than 10 results count as misses), the
  collection's size, cost = size / MAX_INDEX, P@10 ÷ cost, and S(C, q) = mean
  cosine (TF-IDF, IDF of the whole corpus) between the collection's pages and
  the day's queries concatenated. The initial collection, measured on the
  same held-back queries, is the baseline.
The loop runs twice per community: the crawler scoring by plain TF (the
paper) and by TF-IDF with the index's IDF (``--tfidf``). After the last day,
P@10 of the engine's field weights (votes only, text+title only, all) on
every day's held-back queries; then index speed, bytes per page and query
latency on the largest collection. Writes results.json and plots under
--out, and a section of BENCHMARKS.md (one per corpus).
"""

from __future__ import annotations

import argparse
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
from pathlib import Path
from typing import Any

from bench.common import ROOT, median, write_section
from bench.quality import corpus_files
from crawlproject.corpus.reader import Corpus, load_corpus
from crawlproject.evaluation.statistics import mean_and_stderr, paired_one_tailed
from crawlproject.refresh.workload import headings as headings_of
from crawlproject.replay import LOOPBACK_SPEED
from crawlproject.replay.process import ReplayProcess
from crawlproject.search.engine import IndexHome, QueryError, SearchEngine, parse_weights
from crawlproject.web.text import TermAnalyzer

CATCH_ALLS = {"other", "others", "misc", "miscellaneous", "unknown", "unlabelled", "unlabeled"}
VARIANTS = ("tf", "tfidf")
WEIGHTS = {"votes only": "votes:1", "text+title only": "text:1,title:1", "all (default)": "votes:1,text:1,title:1"}
WORD = re.compile(r"[a-z][a-z0-9'+#-]*[a-z0-9+#]|[a-z]")


# --- the community ------------------------------------------------------------------------

def community_level(corpus: Corpus) -> tuple[int, list[str]]:
    """The shallowest taxonomy level with ≥ 3 categories besides catch-alls."""
    depth = max(label.count("/") + 1 for label in corpus.labels.values())
    for level in range(1, depth + 1):
        names = {"/".join(label.split("/")[:level]) for label in corpus.labels.values() if label.count("/") + 1 >= level}
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


def query_pool(corpus: Corpus, warc: Path, categories: list[str], level: int,
               analyzer: TermAnalyzer) -> dict[str, list[str]]:
    """Per category, phrases of its pages' titles and headings (see module doc)."""
    pages = {url: category_of(label, level) for url, label in corpus.labels.items() if url in corpus.text}
    wanted = {url for url, category in pages.items() if category in categories}
    phrases: dict[str, set[str]] = {category: set() for category in categories}
    for url, texts in headings(warc, wanted).items():
        for text in texts:
            words = [word for word in WORD.findall(text.lower()) if analyzer.terms(word)][:4]
            if len(words) >= 2:
                phrases[pages[url] or ""].add(" ".join(words))
    shared = set.intersection(*phrases.values()) if len(phrases) > 1 else set()
    return {category: sorted(found - shared) for category, found in phrases.items()}


@dataclass
class Day:
    representative: list[tuple[str, str]]  #: (query, category) for the night
    held_back: list[tuple[str, str]]  #: measured on, never crawled for


def sample_days(pool: dict[str, list[str]], days: int, representative: int, held_back: int,
                rng: random.Random) -> list[Day]:
    plan = []
    for _ in range(days):
        night, measured = [], []
        for category, phrases in pool.items():
            drawn = rng.sample(phrases, min(len(phrases), (representative + held_back) // len(pool)))
            cut = representative // len(pool)
            night += [(query, category) for query in drawn[:cut]]
            measured += [(query, category) for query in drawn[cut:]]
        plan.append(Day(night, measured))
    return plan


@dataclass
class Community:
    number: int
    categories: list[str]
    bookmarks: list[str]
    days: list[Day]
    folder: Path
    rows: dict[str, list[dict[str, float]]] = field(default_factory=dict)  #: variant → per-day metrics
    ablation: dict[str, dict[str, float]] = field(default_factory=dict)
    nights: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


# --- measuring a collection ------------------------------------------------------------------

class Measure:
    def __init__(self, corpus: Corpus, level: int, max_index: int):
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.corpus, self.level, self.max_index = corpus, level, max_index
        self.analyzer = TermAnalyzer()
        # S(C, q) weighs terms by the IDF of the whole corpus (the web), the same for every collection.
        self.tfidf = TfidfVectorizer(analyzer=self.analyzer.terms)
        self.tfidf.fit(corpus.text.values())

    def precision_at_10(self, index: Path, queries: list[tuple[str, str]], weights: str = "") -> float:
        engine = SearchEngine(index, parse_weights(weights) if weights else None)
        scores = []
        for query, category in queries:
            try:
                hits = engine.search(query, limit=10).hits
            except QueryError:
                continue
            scores.append(sum(category_of(self.corpus.category(hit.key), self.level) == category
                              for hit in hits) / 10)
        engine.collection.close()
        return statistics.fmean(scores) if scores else 0.0

    def quality(self, keys: list[str], queries: list[tuple[str, str]]) -> float:
        """S(C, q): mean cosine between the pages and the day's queries concatenated."""
        texts = [self.corpus.text[key] for key in keys if self.corpus.text.get(key)]
        if not texts:
            return 0.0
        query = self.tfidf.transform([" ".join(q for q, _ in queries)])
        return float((self.tfidf.transform(texts) @ query.T).mean())

    def day(self, index: Path, day: Day) -> dict[str, float]:
        from crawlproject.search.collection import IndexedCollection

        collection = IndexedCollection(IndexHome(index).current())
        keys = collection.keys()
        collection.close()
        precision = self.precision_at_10(index, day.held_back)
        cost = len(keys) / self.max_index
        return {"p_at_10": precision, "size": len(keys), "cost": cost,
                "precision_per_cost": precision / cost if cost else 0.0,
                "quality": self.quality(keys, day.representative + day.held_back)}


# --- running the crawls ----------------------------------------------------------------------

def scrapy(arguments: list[str], log: Path, timeout: float = 3600) -> None:
    with log.open("a") as out:
        completed = subprocess.run([sys.executable, "-m", "scrapy", *arguments], cwd=ROOT,  # noqa: S603
                                   stdout=out, stderr=subprocess.STDOUT, timeout=timeout, check=False)
    if completed.returncode != 0:
        raise SystemExit(f"scrapy {arguments[0]} failed; see {log}")


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


def run_community(community: Community, measure: Measure, proxy: str, args: argparse.Namespace) -> None:
    initial = initial_collection(community, proxy, args.max_index)
    community.rows["initial"] = [measure.day(initial, day) for day in community.days]
    for variant in VARIANTS:
        index = community.folder / variant / "index"
        shutil.rmtree(index.parent, ignore_errors=True)
        shutil.copytree(initial, index, symlinks=True)
        rows, nights = [], []
        for number, day in enumerate(community.days, 1):
            queries = index.parent / f"day{number}.txt"
            queries.write_text("".join(f"{query}\n" for query, _ in day.representative))
            started = time.monotonic()
            scrapy(["symbiosis", "--index", str(index), "--queries", str(queries), "--max-index", str(args.max_index),
                    "--n-hits", str(args.n_hits), "--max-iter", str(args.max_iter), "--theta", str(args.theta),
                    *(["--tfidf"] if variant == "tfidf" else []), *speed_settings(proxy)], index.parent / "log.txt")
            report = json.loads(sorted((index / "nights").glob("*/report.json"))[-1].read_text())
            nights.append({"seconds": time.monotonic() - started,
                           "crawls": sum(len(q["iterations"]) for q in report["queries"]),
                           "fetched": sum(i["fetched"] for q in report["queries"] for i in q["iterations"])})
            rows.append(measure.day(index, day))
            print(f"  community {community.number} {variant:5} day {number}: P@10 {rows[-1]['p_at_10']:.3f} "
                  f"(initial {community.rows['initial'][number - 1]['p_at_10']:.3f}), "
                  f"{rows[-1]['size']} pages, S {rows[-1]['quality']:.4f}, "
                  f"{nights[-1]['crawls']} crawls in {nights[-1]['seconds']:.0f}s", flush=True)
        community.rows[variant], community.nights[variant] = rows, nights
    measured = [query for day in community.days for query in day.held_back]
    for name, weights in WEIGHTS.items():
        community.ablation[name] = {
            "initial": measure.precision_at_10(initial, measured, weights),
            "tf": measure.precision_at_10(community.folder / "tf" / "index", measured, weights),
        }


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
    for repeat in range(repeats):
        target = crawl.parent / f"reindex{repeat}"
        shutil.rmtree(target, ignore_errors=True)
        home = IndexHome(target)
        collection = home.open_or_create()
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
    largest = max((c.folder / variant / "index" for c in communities for variant in VARIANTS),
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

METRICS = (("p_at_10", "P@10", "{:.3f}"), ("size", "collection size (pages)", "{:.0f}"),
           ("cost", "cost = size / MAX_INDEX", "{:.2f}"), ("precision_per_cost", "P@10 ÷ cost", "{:.3f}"),
           ("quality", "S(C, q)", "{:.4f}"))


def cell(values: list[float], form: str) -> str:
    mean, error = mean_and_stderr(values)
    return f"{form.format(mean)} ± {form.format(error)}"


def plot(communities: list[Community], days: int, folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for key, title, _ in METRICS:
        figure, axes = plt.subplots(figsize=(5, 3.4))
        for variant, style in (("initial", "k--"), ("tf", "o-"), ("tfidf", "s-")):
            means, errors = zip(*(mean_and_stderr([c.rows[variant][d][key] for c in communities]) for d in range(days)),
                                strict=True)
            axes.errorbar(range(1, days + 1), means, yerr=errors, fmt=style, capsize=3,
                          label={"initial": "initial collection", "tf": "symbiosis, TF crawler",
                                 "tfidf": "symbiosis, TF-IDF crawler"}[variant])
        axes.set_xlabel("day")
        axes.set_title(title)
        axes.set_xticks(range(1, days + 1))
        axes.legend(fontsize=7)
        figure.tight_layout()
        path = folder / f"{key}.png"
        figure.savefig(path, dpi=110)
        plt.close(figure)
        paths.append(path)
    return paths


def report(communities: list[Community], args: argparse.Namespace, level: int, speed: dict[str, float],
           plots: list[Path], minutes: float) -> str:
    days = args.days
    last = days - 1
    lines = [
        f"### Search engine–crawler symbiosis on {args.corpus.name}",
        "",
        f"Command: `.venv/bin/python -m bench.symbiosis --corpus {args.corpus_arg} --communities {args.communities} "
        f"--days {days} --seed {args.seed}` ({minutes:.0f} min). {len(communities)} communities, each 2 categories of "
        f"taxonomy level {level} ({'; '.join(' + '.join(c.categories) for c in communities)}); "
        f"{args.bookmarks} bookmarks per category; MAX_INDEX = {args.max_index}, {args.representative} representative "
        f"queries a night (MAX_PAGES = {args.max_index // args.representative}), N_HITS = {args.n_hits}, "
        f"MAX_ITER = {args.max_iter}, THETA = {args.theta}; P@10 on {args.held_back} held-back queries a day. "
        "Mean ± s.e. over communities; the initial collection is measured on the same day's queries.",
        "",
        "| metric | initial collection | day 1 TF | day " + str(days) + " TF | day 1 TF-IDF | day " + str(days)
        + " TF-IDF |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key, title, form in METRICS:
        initial = [statistics.fmean(row[key] for row in c.rows["initial"]) for c in communities]
        cells = [cell(initial, form)]
        for variant in VARIANTS:
            cells += [cell([c.rows[variant][0][key] for c in communities], form),
                      cell([c.rows[variant][last][key] for c in communities], form)]
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    lines += ["", "Day by day (TF crawler): P@10 / size / S(C, q), mean over communities:", "",
              "| day | " + " | ".join(str(d + 1) for d in range(days)) + " |",
              "|---|" + "---:|" * days]
    for key, title, form in (METRICS[0], METRICS[1], METRICS[4]):
        lines.append(f"| {title} | " + " | ".join(
            form.format(statistics.fmean(c.rows["tf"][d][key] for c in communities)) for d in range(days)) + " |")
    findings = []
    for variant in VARIANTS:
        for key, title, _ in (METRICS[0], METRICS[4]):
            final = [c.rows[variant][last][key] for c in communities]
            first = [c.rows[variant][0][key] for c in communities]
            initial = [c.rows["initial"][last][key] for c in communities]
            p_first = paired_one_tailed(final, first)[1] if days > 1 else float("nan")
            p_initial = paired_one_tailed(final, initial)[1]
            findings.append(f"{variant.upper()} crawler, {title}: day {days} − day 1 = "
                            f"{statistics.fmean(final) - statistics.fmean(first):+.4f} (one-tailed p = {p_first:.3f}); "
                            f"day {days} − initial = {statistics.fmean(final) - statistics.fmean(initial):+.4f} "
                            f"(p = {p_initial:.3f})")
    lines += ["", *(f"- {finding}" for finding in findings)]
    lines += ["", "Field weights (P@10 over every day's held-back queries, mean over communities):", "",
              "| weights | initial collection | after the last night (TF) |", "|---|---:|---:|"]
    for name, weights in WEIGHTS.items():
        lines.append(f"| {name} (`{weights}`) | "
                     f"{statistics.fmean(c.ablation[name]['initial'] for c in communities):.3f} | "
                     f"{statistics.fmean(c.ablation[name]['tf'] for c in communities):.3f} |")
    seconds = [n["seconds"] for c in communities for v in VARIANTS for n in c.nights[v]]
    lines += ["", f"A night took {median(seconds):.0f} s (median; "
              f"{median([n['crawls'] for c in communities for v in VARIANTS for n in c.nights[v]]):.0f} crawls, "
              f"{median([n['fetched'] for c in communities for v in VARIANTS for n in c.nights[v]]):.0f} pages).",
              "",
              f"Index: {speed['pages_per_second']:.0f} pages/s indexed (a {speed['pages']}-page crawl re-indexed, "
              f"median of {args.repeats}); {speed['bytes_per_page'] / 1024:.1f} KiB of index per page; "
              f"query latency over 1,000 queries on the largest collection ({speed['largest_pages']} pages): "
              f"p50 {speed['p50_ms']:.2f} ms, p99 {speed['p99_ms']:.2f} ms.", ""]
    lines += [f"![{path.stem}]({os.path.relpath(path, ROOT)})" for path in plots]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/webkb")
    parser.add_argument("--communities", type=int, default=3)
    parser.add_argument("--days", type=int, default=5)
    parser.add_argument("--bookmarks", type=int, default=5, help="bookmarked pages per category")
    parser.add_argument("--max-index", type=int, default=1000)
    parser.add_argument("--representative", type=int, default=10, help="queries a night")
    parser.add_argument("--held-back", type=int, default=20, help="queries measured a day")
    parser.add_argument("--n-hits", type=int, default=25)
    parser.add_argument("--max-iter", type=int, default=3)
    parser.add_argument("--theta", type=float, default=0.8)
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
    analyzer = TermAnalyzer()
    rng = random.Random(args.seed)
    measure = Measure(corpus, level, args.max_index)
    communities: list[Community] = []
    for _ in range(20 * args.communities):
        if len(communities) == args.communities:
            break
        number = len(communities) + 1
        chosen = sorted(rng.sample(categories, 2))
        pool = query_pool(corpus, warc, chosen, level, analyzer)
        if min(len(phrases) for phrases in pool.values()) < (args.representative + args.held_back) // 2:
            print(f"  ({' + '.join(chosen)}: too few title/heading phrases; drawing again)")
            continue
        members = {c: sorted(u for u, label in corpus.labels.items()
                             if category_of(label, level) == c and corpus.text.get(u)) for c in chosen}
        bookmarks = [url for c in chosen for url in rng.sample(members[c], min(args.bookmarks, len(members[c])))]
        days = sample_days(pool, args.days, args.representative, args.held_back, rng)
        communities.append(Community(number, chosen, bookmarks, days, out / f"community{number}"))
        print(f"community {number}: {' + '.join(chosen)} ({sum(map(len, pool.values()))} phrases in the query pool)")
    if len(communities) < args.communities:
        raise SystemExit(f"only {len(communities)} communities with enough query phrases could be drawn")
    with ReplayProcess(str(warc)) as replay, ThreadPoolExecutor(args.jobs) as pool_:
        for future in [pool_.submit(run_community, c, measure, replay.proxy_url, args) for c in communities]:
            future.result()
    all_queries = [q for c in communities for d in c.days for q, _ in d.held_back + d.representative]
    speed = index_figures(communities, all_queries, args.repeats)
    out.mkdir(parents=True, exist_ok=True)
    plots = plot(communities, args.days, out)
    (out / "results.json").write_text(json.dumps(
        {"level": level, "speed": speed, "communities": [
            {"categories": c.categories, "bookmarks": c.bookmarks, "rows": c.rows, "nights": c.nights,
             "ablation": c.ablation} for c in communities]}, indent=1))
    body = report(communities, args, level, speed, plots, (time.monotonic() - started) / 60)
    print("\n" + body)
    if not args.no_write:
        write_section(f"symbiosis-{args.corpus.name}", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
