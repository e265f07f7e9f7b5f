"""Refresh policies under both protocols, side by side (docs/refresh.md, "Both
protocols, side by side"): what the method can do when the future is the past
(the paper's: every page's parameters fitted on the whole trace) and what a
user gets (online: each policy learns from its own refreshes), over several
seeded workloads, with intervals.

    .venv/bin/python -m bench.refresh_protocols --corpus ../shared/corpora/phpdoc-evolving --weeks 52 --warmup 13

For every workload kind and seed (the seed draws the workload's queries), a
scan of budgets, each policy run under both protocols (uniform needs no
parameter: one run serves both), and not refreshing. Read off each scan,
per seed: the refreshes a week for mean Q ≥ 0.99 and ≥ 0.995 over the
reported weeks (interpolated linearly between the two budgets of the scan
around the first that holds it; the paper reads mean Q) and, beside it, for
Q ≥ the target in every reported week; their mean over the seeds with a
95 % t interval. Beside them the web: its churn (the share of the
repository's pages with a new version a week), the stale share after a year
without refresh, no-refresh Q, and its forecastability (the paper's Fig. 3
check: Spearman of a page's gain between the trace's halves).

Nothing is tuned: τ is the default (0.1) for every policy; the workloads are
drawn from the repository's pages (``generated``: their first headings) or
from what changed in the warm-up weeks only (``changing``: the words pages
added or removed, queries aimed at what changes); every figure is over the
weeks after the warm-up.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.common import ROOT, SECTIONS, write_section
from crawlproject.evaluation.statistics import t_interval
from crawlproject.refresh.gain import GainMeter
from crawlproject.refresh.policies import DEFAULT_TAU, POLICIES, PageState, policy_named
from crawlproject.refresh.quality import QualityMeter, VersionIndex
from crawlproject.refresh.simulate import WEEK, EvolvingWeb, RefreshSimulation, load_evolving_web
from crawlproject.refresh.web_workloads import changing_workload, heading_workload
from crawlproject.refresh.workload import Query, write_workload
from crawlproject.web.text import TermAnalyzer

TARGETS = (0.99, 0.995)
#: where not refreshing already holds 0.995, the first of these it misses is a target too: policies differ only there
TIGHTER = (0.998, 0.999, 0.9995, 0.9998)
PROTOCOLS = ("paper", "online")
BASELINES = ("staleness", "embarrassment")

# Built before the worker processes fork, shared copy-on-write: per (workload kind, seed).
_SIMULATIONS: dict[tuple[str, int], RefreshSimulation] = {}
_FITTED: dict[tuple[str, int], list[PageState]] = {}


@dataclass(frozen=True)
class Cell:
    kind: str
    seed: int
    protocol: str  #: "paper", "online" ("" for a policy that learns nothing: uniform, no refresh)
    policy: str
    budget: int


@dataclass(frozen=True)
class Result:
    mean_q: float
    lowest_q: float
    stale: float
    stale_by_week: list[float]


def simulate(job: tuple[Cell, int, int]) -> tuple[Cell, Result]:
    cell, weeks, first = job
    simulation = _SIMULATIONS[(cell.kind, cell.seed)]
    fitted = _FITTED[(cell.kind, cell.seed)] if cell.protocol == "paper" else None
    outcome = simulation.run(policy_named(cell.policy, DEFAULT_TAU), cell.budget, weeks, fitted=fitted)
    return cell, Result(outcome.mean_quality(first), outcome.lowest_quality(first), outcome.mean_stale(first),
                        [week.stale for week in outcome.weeks])


def fit(job: tuple[tuple[str, int], int]) -> tuple[tuple[str, int], list[PageState]]:
    key, weeks = job
    return key, _SIMULATIONS[key].fit_on_trace(weeks, DEFAULT_TAU)


def fit_all(keys: list[tuple[str, int]], weeks: int, jobs: int) -> list[tuple[tuple[str, int], list[PageState]]]:
    """The paper's protocol's states of every simulation, fitted in worker processes."""
    if jobs <= 1:
        return [fit((key, weeks)) for key in keys]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return pool.map(fit, [(key, weeks) for key in keys])


def run_all(cells: list[Cell], weeks: int, first: int, jobs: int) -> dict[Cell, Result]:
    todo = [(cell, weeks, first) for cell in cells]
    done: dict[Cell, Result] = {}
    started = time.monotonic()
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for number, (cell, result) in enumerate(pool.imap_unordered(simulate, todo), 1):
                done[cell] = result
                if number % 20 == 0 or number == len(todo):
                    print(f"  {number}/{len(todo)} runs ({(time.monotonic() - started) / 60:.0f} min)", flush=True)
    else:
        done.update(map(simulate, todo))
    return done


def budget_for(scan: dict[int, float], target: float) -> float:
    """Refreshes a week for a quality ≥ *target*, read off a scan {budget:
    quality}: 0 if not refreshing holds it, else interpolated linearly between
    the budget before the first that holds it and that one; inf if none does.

    >>> budget_for({0: 0.98, 10: 0.985, 20: 0.995, 40: 0.999}, 0.99)
    15.0
    >>> budget_for({0: 0.991, 10: 0.99}, 0.99), budget_for({0: 0.9, 10: 0.95}, 0.99)
    (0, inf)
    """
    budgets = sorted(scan)
    for number, budget in enumerate(budgets):
        if scan[budget] >= target:
            if number == 0:
                return budget
            below = budgets[number - 1]
            share = (target - scan[below]) / (scan[budget] - scan[below])
            return below + share * (budget - below)
    return math.inf


def targets_for(no_refresh: float) -> list[float]:
    """0.99 and 0.995, and the first finer target not refreshing misses where it holds 0.995.

    >>> targets_for(0.97), targets_for(0.9991)
    ([0.99, 0.995], [0.99, 0.995, 0.9995])
    """
    if no_refresh < TARGETS[-1]:
        return list(TARGETS)
    return [*TARGETS, next((t for t in TIGHTER if t > no_refresh), TIGHTER[-1])]


def summarise(values: list[float], pages: int) -> str:
    """Mean refreshes a week over the seeds [95 % t interval], and its share of the repository."""
    if any(math.isinf(value) for value in values):
        reached = sum(not math.isinf(value) for value in values)
        return f"> scan in {len(values) - reached} of {len(values)} seeds"
    mean, low, high = t_interval(values)
    return f"{mean:.0f} [{max(low, 0):.0f}, {high:.0f}] ({100 * mean / pages:.1f} %)"


def build_workload(kind: str, seed: int, web: EvolvingWeb, analyzer: TermAnalyzer, held: np.ndarray, warmup: int,
                   size: int) -> list[Query]:
    own = set(held.tolist())
    if kind == "generated":
        return heading_workload(web, analyzer, size=size, seed=seed, pages=own)
    if kind == "changing":
        return changing_workload(web, warmup, analyzer, size=size, seed=seed, pages=own)
    raise SystemExit(f"unknown workload {kind!r}: generated or changing")


def churn(web: EvolvingWeb, held: np.ndarray, weeks: int) -> float:
    """Mean share of the repository's pages that got a new version (or went) a week."""
    changes = sum(1 for page in held.tolist() for live_from, _ in web.timeline[page][1:]
                  if web.start < live_from <= web.start + weeks * WEEK)
    return changes / len(held) / weeks


def plot(results: dict[Cell, Result], kinds: list[str], seeds: list[int], budgets: list[int], pages: int,
         folder: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2 * len(kinds), figsize=(4.6 * 2 * len(kinds), 3.6), squeeze=False, sharey=True)
    for column, (kind, protocol) in enumerate((k, p) for k in kinds for p in PROTOCOLS):
        axis = axes[0][column]
        for name in POLICIES:
            means = []
            for budget in budgets:
                cell_protocol = "" if name == "uniform" else protocol
                means.append([results[Cell(kind, seed, cell_protocol, name, budget)].mean_q for seed in seeds])
            centre = [float(np.mean(row)) for row in means]
            axis.plot([100 * b / pages for b in budgets], centre, "o-", label=name, markersize=3)
            axis.fill_between(
                [100 * b / pages for b in budgets], [min(row) for row in means], [max(row) for row in means], alpha=0.15
            )
        for target in TARGETS:
            axis.axhline(target, color="grey", linestyle=":", linewidth=1)
        axis.set_xscale("log")
        axis.set_title(f"{kind} workload, {protocol} protocol", fontsize=9)
        axis.set_xlabel("refreshes a week (% of the repository)")
        axis.set_ylabel("mean Q (band: the seeds' range)")
        axis.legend(fontsize=7)
    figure.tight_layout()
    path = folder / "quality-by-budget-both-protocols.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def overhead(args: argparse.Namespace, simulation: RefreshSimulation, budgets: list[int], pages: int) -> list[str]:
    """The user-centric bookkeeping timed inside the indexer's pass, one run
    per budget in this process (an idle machine's times)."""
    import tempfile

    from crawlproject.search.collection import IndexedCollection

    lines = ["| refreshes a week | indexing (s) | bookkeeping in the pass (s) | overhead | weekly F_w refits (s) | "
             "refits / indexing | F_w refitted a week |", "|---|---:|---:|---:|---:|---:|---:|"]
    for budget in budgets:
        with tempfile.TemporaryDirectory() as folder:
            collection = IndexedCollection(folder, create=True)
            try:
                run = simulation.run(policy_named("user-centric", DEFAULT_TAU), budget, args.weeks, collection)
            finally:
                collection.close()
        in_pass = run.in_pass_seconds
        lines.append(f"| {budget} ({100 * budget / pages:.1f} %) | {run.indexing_seconds:.2f} | {in_pass:.2f} | "
                     f"{100 * in_pass / run.indexing_seconds:.0f} % | {run.refit_seconds:.2f} | "
                     f"{100 * run.refit_seconds / run.indexing_seconds:.0f} % | {run.refits / args.weeks:.0f} |")
        print(lines[-1], flush=True)
    return lines


def main(argv: list[str] | None = None) -> int:  # noqa: PLR0915 (one report, top to bottom)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--seeds", default="", help="URLs the week-0 crawl starts from (default: every live page)")
    parser.add_argument("--weeks", type=int, default=52)
    parser.add_argument("--warmup", type=int, default=13, help="weeks the changing workload is drawn from; "
                                                                "figures are over the weeks after")
    parser.add_argument("--budgets", default="0.5,1,2,5,10,20", help="percent of the repository a week (a scan)")
    parser.add_argument("--workloads", default="generated,changing")
    parser.add_argument("--workload-seeds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--name", default="", help="the section's name (default: refresh-protocols-<corpus>)")
    parser.add_argument("--scoring", choices=("tfidf", "inlinks"), default="tfidf",
                        help="S(p, q): the TF-IDF cosine, or the paper's in-link variant (1 + the pages linking to p "
                             "at week 0, on q's answer)")
    parser.add_argument("--overhead", action="store_true",
                        help="instead: time the user-centric bookkeeping inside the indexer's pass (first workload "
                             "kind, seed 1, online), its own section")
    parser.add_argument("--out", type=Path, default=None, help="results folder (default: bench/results/<name>)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    started = time.monotonic()
    warcs = sorted(args.corpus.glob("*.warc.gz")) + sorted(args.corpus.glob("*.warc"))
    if not warcs:
        raise SystemExit(f"{args.corpus} holds no WARC")
    if not 0 < args.warmup < args.weeks:
        raise SystemExit("--warmup must be between 0 and --weeks")
    name = args.name or (f"refresh-{'overhead' if args.overhead else 'protocols'}-{args.corpus.name}"
                         + ("-inlinks" if args.scoring == "inlinks" else ""))
    out = args.out or ROOT / "bench" / "results" / name
    out.mkdir(parents=True, exist_ok=True)
    web = load_evolving_web(warcs[0], text="main")
    analyzer = TermAnalyzer()
    index = VersionIndex(web.texts, analyzer)
    crawl_seeds = [url for url in args.seeds.split(",") if url]
    held_pages = web.reachable(web.start, crawl_seeds) if crawl_seeds else None
    held = held_pages if held_pages is not None else np.flatnonzero(web.live(web.start, index.absent) != index.absent)
    kinds = args.workloads.split(",")
    seeds = list(range(1, args.workload_seeds + 1))
    if args.overhead:
        kinds, seeds = kinds[:1], [1]
    by_version = by_page = None
    if args.scoring == "inlinks":  # the paper's in-link variant: S(p, q) = p's in-link score on q's answer
        in_links = web.in_link_scores(web.start, index.absent)
        by_version, by_page = web.by_version(in_links, index.absent), in_links[held]
    forecast: dict[tuple[str, int], float] = {}
    sizes: dict[tuple[str, int], int] = {}
    for kind in kinds:
        for seed in seeds:
            workload = build_workload(kind, seed, web, analyzer, held, args.warmup, args.queries)
            write_workload(workload, out / f"workload-{kind}-{seed}.tsv")
            sizes[(kind, seed)] = len(workload)
            simulation = RefreshSimulation(web, index, QualityMeter(index, workload, static=by_version),
                                           GainMeter(index, workload, static=by_page), DEFAULT_TAU, held_pages)
            for week in range(1, args.weeks + 1):  # every week's live web once, before the workers fork
                simulation.live_web(week)
            _SIMULATIONS[(kind, seed)] = simulation
    if args.overhead:
        pages = len(held)
        budgets = sorted({max(1, round(pages * float(p) / 100)) for p in args.budgets.split(",")})
        table = overhead(args, _SIMULATIONS[(kinds[0], 1)], budgets, pages)
        body = "\n".join(
            [
                f"### The user-centric measurement's overhead on {args.corpus.name}",
                "",
                f"Command: `.venv/bin/python -m bench.refresh_protocols --overhead --corpus "
                f"{os.path.relpath(args.corpus, ROOT)} --weeks {args.weeks} --budgets {args.budgets} --workloads "
                f"{kinds[0]}` "
                f"({(time.monotonic() - started) / 60:.0f} min). The paper measures its bookkeeping inside the "
                "indexer's own "
                "pass: here each refreshed page is indexed into a search collection (SQLite store + tantivy, committed "
                "weekly) and, in the same pass, its TF-IDF row is computed from its text, its workload-term postings "
                "replaced and ΔQ estimated; the weekly refits of F_w for the terms whose scores moved are counted "
                "apart. "
                f"User-centric, online, {kinds[0]} workload (seed 1), {args.weeks} weeks, one run per budget in one "
                "process on an otherwise idle machine.",
                "",
                *table,
            ]
        )
        print("\n" + body)
        if not args.no_write:
            write_section(name, body)
        return 0
    for key, states in fit_all(list(_SIMULATIONS), args.weeks, args.jobs):
        _FITTED[key] = states
        forecast[key] = RefreshSimulation.forecastability(states, args.weeks)
    pages = len(held)
    budgets = sorted({max(1, round(pages * float(p) / 100)) for p in args.budgets.split(",")})
    first = args.warmup + 1
    print(
        f"{len(web.urls)} URLs, {pages} pages held, {len(web.texts)} versions; workloads {kinds} × seeds {seeds}; "
        f"budgets {budgets}; weeks {first}–{args.weeks} reported (set up in {(time.monotonic() - started) / 60:.0f} "
        "min)",
        flush=True,
    )
    cells = [Cell(kind, seed, "", "uniform", budget) for kind in kinds for seed in seeds for budget in [0, *budgets]]
    cells += [Cell(kind, seed, protocol, policy, budget) for kind in kinds for seed in seeds for protocol in PROTOCOLS
              for policy in POLICIES if policy != "uniform" for budget in budgets]
    results = run_all(cells, args.weeks, first, args.jobs)

    def result(kind: str, seed: int, protocol: str, policy: str, budget: int) -> Result:
        return results[Cell(kind, seed, "" if policy == "uniform" or budget == 0 else protocol, policy, budget)]

    def scan(kind: str, seed: int, protocol: str, policy: str, worst: bool) -> dict[int, float]:
        """{budget: mean Q (or the worst week's)}, not refreshing at 0."""
        runs = {
            budget: result(kind, seed, protocol, policy if budget else "uniform", budget) for budget in [0, *budgets]
        }
        return {budget: run.lowest_q if worst else run.mean_q for budget, run in runs.items()}

    year = min(52, args.weeks)
    lines = [
        f"### Refresh policies under both protocols on {args.corpus.name}",
        "",
        f"Command: `.venv/bin/python -m bench.refresh_protocols --corpus {os.path.relpath(args.corpus, ROOT)}"
        + (f" --seeds {args.seeds}" if crawl_seeds else "")
        + f" --weeks {args.weeks} --warmup {args.warmup} --budgets {args.budgets} --workloads {args.workloads} "
        f"--workload-seeds {args.workload_seeds} --scoring {args.scoring}` ({(time.monotonic() - started) / 60:.0f} "
        "min, "
        f"{len(cells)} runs). "
        + (
            "**In-link scoring** (the paper's variant): S(p, q) = 1 + the pages linking to p at week 0, for every page "
            "in q's answer; the answers and what refreshing changes in them as with TF-IDF. "
            if args.scoring == "inlinks"
            else ""
        )
        + f"The repository: {pages} pages ({'reached from the seeds' if crawl_seeds else 'every page live'} at week 0; "
        f"{len(web.urls)} URLs, {len(web.texts)} versions in the corpus). Each page indexed by its main text; a query "
        "answered by the pages holding all its terms; τ = 0.1 for every policy (nothing tuned). "
        f"**Every figure is over weeks {first}–{args.weeks}**; the `changing` workloads are drawn from weeks "
        f"1–{args.warmup} only. {len(seeds)} seeds per workload kind (a seed draws the queries); intervals are 95 % t "
        "intervals over the seeds.",
        "",
        f"**The web.** Churn: {100 * churn(web, held, args.weeks):.1f} % of the repository's pages get a new version a "
        f"week; stale share after {year} weeks without refresh "
        f"{100 * result(kinds[0], seeds[0], '', 'uniform', 0).stale_by_week[year - 1]:.1f} % (τ = 0.1).",
        "",
        "| workload | queries (seed 1) | no-refresh mean Q [95 % CI] | no-refresh worst week (lowest seed) | "
        "forecastability, mean [min, max] |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind in kinds:
        none = [result(kind, seed, "", "uniform", 0) for seed in seeds]
        mean, low, high = t_interval([r.mean_q for r in none])
        values = [forecast[(kind, seed)] for seed in seeds]
        lines.append(
            f"| {kind} | {sizes[(kind, 1)]} | {mean:.4f} [{low:.4f}, {high:.4f}] | "
            f"{min(r.lowest_q for r in none):.4f} | {np.mean(values):.2f} [{min(values):.2f}, {max(values):.2f}] |"
        )
    lines += [
        "",
        "**Refreshes a week for mean Q ≥ target** (the paper's reading), mean over the seeds [95 % t interval] "
        "(share of the repository); *every week*: for Q ≥ target in every reported week:",
        "",
        "| workload | target | policy | paper's protocol | online | paper's, every week | online, every week |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    needed: dict[tuple[str, float, str, str, bool], list[float]] = {}
    targets = {kind: targets_for(max(result(kind, seed, "", "uniform", 0).mean_q for seed in seeds)) for kind in kinds}
    for kind in kinds:
        for target in targets[kind]:
            for policy in POLICIES:
                row = []
                for worst in (False, True):
                    for protocol in PROTOCOLS:
                        values = [budget_for(scan(kind, seed, protocol, policy, worst), target) for seed in seeds]
                        needed[(kind, target, policy, protocol, worst)] = values
                        row.append(summarise(values, pages))
                lines.append(f"| {kind} | {target} | {policy} | " + " | ".join(row) + " |")
    lines += ["", "**Mean Q at each budget**, mean over the seeds [95 % t interval]:", "",
              "| workload | refreshes a week | " + " | ".join(f"{p} ({pr})" for p in POLICIES for pr in PROTOCOLS
                                                       if p != "uniform" or pr == "paper") + " |",
              "|---|---|" + "---:|" * (2 * len(POLICIES) - 1)]
    for kind in kinds:
        for budget in budgets:
            row = []
            for policy in POLICIES:
                for protocol in PROTOCOLS if policy != "uniform" else PROTOCOLS[:1]:
                    mean, low, high = t_interval([result(kind, s, protocol, policy, budget).mean_q for s in seeds])
                    row.append(f"{mean:.4f} [{low:.4f}, {high:.4f}]")
            lines.append(f"| {kind} | {budget} ({100 * budget / pages:.1f} %) | " + " | ".join(row) + " |")
    lines += ["", "**The paper's claims**, each per protocol (paired over the seeds):", ""]
    for protocol in PROTOCOLS:
        fewer = []
        for kind in kinds:
            for target in targets[kind]:
                uc = needed[(kind, target, "user-centric", protocol, False)]
                best = [
                    min(a, b)
                    for a, b in zip(
                        needed[(kind, target, "staleness", protocol, False)],
                        needed[(kind, target, "embarrassment", protocol, False)],
                        strict=True,
                    )
                ]
                wins = sum(u < b for u, b in zip(uc, best, strict=True))
                neither = sum(math.isinf(u) and math.isinf(b) for u, b in zip(uc, best, strict=True))
                unneeded = sum(u == b == 0 for u, b in zip(uc, best, strict=True))
                fewer.append(f"{kind}, Q ≥ {target}: fewer in {wins} of {len(seeds)} seeds"
                             + (f" (none of them within the scan in {neither})" if neither else "")
                             + (f" (no refresh needed in {unneeded})" if unneeded else ""))
        gaps = []
        for kind in kinds:
            low_budget = budgets[0]
            differences = [result(kind, s, protocol, "user-centric", low_budget).mean_q
                           - max(result(kind, s, protocol, b, low_budget).mean_q for b in BASELINES) for s in seeds]
            mean, low, high = t_interval(differences)
            gaps.append(f"{kind} at {low_budget} a week: user-centric − the better of SBR and EBR {mean:+.4f} "
                        f"[{low:+.4f}, {high:+.4f}]")
        lines += [f"- *{protocol}* — (1) user-centric needs fewer refreshes than both SBR and EBR for the same mean Q: "
                  + "; ".join(fewer) + ". (2) a higher Q than SBR and EBR on the same budget: " + "; ".join(gaps) + "."]
    lines += ["- (3) the measurement's overhead: not measured here (bench.refresh, refresh-* sections)."]
    path = plot(results, kinds, seeds, budgets, pages, out)
    lines += ["", f"![{path.stem}]({os.path.relpath(path, SECTIONS)})"]
    (out / "results.json").write_text(json.dumps(
        [{**vars(cell), "mean_q": r.mean_q, "lowest_q": r.lowest_q, "stale": r.stale} for cell, r in results.items()]
        + [{"kind": k, "seed": s, "forecastability": v} for (k, s), v in forecast.items()]))
    body = "\n".join(lines)
    print("\n" + body)
    if not args.no_write:
        write_section(name, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
