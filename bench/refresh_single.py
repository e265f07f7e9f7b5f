"""What one refresh does to Q, and whether the user-centric estimate sees it
(issue 62; docs/methods.md §5).

    .venv/bin/python -m bench.refresh_single --corpus ../shared/corpora/phpdoc-evolving --weeks 52

The repository is left unrefreshed from week 0 (every page as crawled then).
At each week of --at, every stale page of it (a sample of --sample of them)
is refreshed alone and Q(W_L) measured again: the true ΔQ of that one
refresh. Beside it, the user-centric policy's estimate of the same refresh
(crawlproject.refresh.gain, ≥ 0 by construction). Per setting — the index
holding each page's main text or its whole text (template in), a query
answered by the pages with all its terms or any — the share of refreshes
that lower Q, how much the losses weigh against the gains, and how well the
estimate ranks the refreshes (Spearman; the true ΔQ of the estimate's top
tenth against a random tenth's).

This is the measurement behind "the estimate need not be signed": where
refreshes that lower Q are rare and light, an estimate that can be negative
has nothing to avoid.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from bench.common import ROOT, write_section
from bench.refresh import build_workloads, repository_pages
from crawlproject.refresh.changes import TEXTS
from crawlproject.refresh.gain import GainMeter
from crawlproject.refresh.quality import ANSWERS, QualityMeter, VersionIndex
from crawlproject.refresh.simulate import WEEK, load_evolving_web
from crawlproject.web.text import TermAnalyzer

LOWER = 1e-9  #: a ΔQ below −LOWER lowers Q (float noise is far below it)


def tries(web: object, index: VersionIndex, meter: QualityMeter, gains: GainMeter, week: int, sample: int,
          rng: np.random.Generator) -> tuple[list[tuple[float, float, float]], float]:
    """(true ΔQ, estimated ΔQ, signed estimate) of refreshing one stale page
    of the unrefreshed repository at *week*, for a sample of its stale pages;
    and the week's κ (the frequency-weighted mean of κ_w)."""
    absent = index.absent
    start = web.live(web.start, absent)  # type: ignore[attr-defined]
    held = np.flatnonzero(start != absent)
    live = web.live(web.start + week * WEEK, absent)  # type: ignore[attr-defined]
    repository = np.full_like(start, absent)
    repository[held] = start[held]
    own = np.full_like(live, absent)
    own[held] = live[held]
    stale = held[repository[held] != own[held]]
    if stale.size > sample:
        stale = rng.choice(stale, sample, replace=False)
    best = meter.best(own)
    before = meter.quality(repository, own, best)
    gains.fit(repository)
    kappa = sibling_relevance(index, gains, repository[held], own[held])
    found = []
    for page in stale.tolist():
        old, new = int(repository[page]), int(own[page])
        repository[page] = new
        after = meter.quality(repository, own, best)
        repository[page] = old
        found.append((after - before, gains.gain(old, new), gains.gain(old, new, kappa)))
    weights = {term: gains.frequency[term] for term in kappa}
    return found, sum(kappa[t] * w for t, w in weights.items()) / sum(weights.values()) if weights else 1.0


def sibling_relevance(index: VersionIndex, gains: GainMeter, copies: np.ndarray, live: np.ndarray) -> dict[int, float]:
    """κ_w as an oracle, per single term w of the workload: the live pages'
    scores for w as a share of their copies' (fresh pages count 1) — the most a
    signed estimate of this form could know."""
    terms = np.array(sorted(gains.frequency), dtype=int)
    stored = np.asarray(index.rows(copies)[:, terms].sum(axis=0)).ravel()
    now = np.asarray(index.rows(live)[:, terms].sum(axis=0)).ravel()
    return {int(t): float(n / s) for t, s, n in zip(terms, stored, now, strict=True) if s > 0}


def summary(found: list[tuple[float, float, float]], rng: np.random.Generator) -> dict[str, float]:
    true = np.array([one[0] for one in found])
    gained, lost = float(true[true > LOWER].sum()), float(-true[true < -LOWER].sum()) + 0.0
    tenth = max(1, true.size // 10)
    random_tenths = [true[rng.choice(true.size, tenth, replace=False)].mean() for _ in range(200)]
    row = {"tries": int(true.size),
           "lower": float((true < -LOWER).mean()),
           "raise": float((true > LOWER).mean()),
           "loss_per_gain": float(lost / gained) if gained > 0 else float("nan"),
           "mean_true": float(true.mean()),
           "random_tenth_true": float(np.mean(random_tenths))}
    for name, column in (("estimate", 1), ("signed", 2)):
        estimate = np.array([one[column] for one in found])
        top = np.argsort(-estimate, kind="stable")[:tenth]
        row |= {f"{name}_negative": float((estimate < 0).mean()),
                f"{name}_positive_lowering": float(((estimate > 0) & (true < -LOWER)).mean()),
                f"{name}_spearman": float(spearmanr(estimate, true).statistic) if true.size > 2 else float("nan"),
                f"{name}_top_tenth_true": float(true[top].mean()),
                f"{name}_top_tenth_lower": float((true[top] < -LOWER).mean())}
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/phpdoc-evolving")
    parser.add_argument("--weeks", type=int, default=52, help="the weeks of the corpus the workload's first year spans")
    parser.add_argument(
        "--tune-weeks", type=int, default=13, help="the first-year workload's window (as bench.refresh)"
    )
    parser.add_argument("--at", default="", help="comma-separated weeks measured (default: 4 spread over --weeks)")
    parser.add_argument("--sample", type=int, default=300, help="stale pages refreshed alone per week")
    parser.add_argument("--workloads", default="generated")
    parser.add_argument("--workload", type=Path, default=None)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--head", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    started = time.monotonic()
    warcs = sorted(args.corpus.glob("*.warc.gz")) + sorted(args.corpus.glob("*.warc"))
    if not warcs:
        raise SystemExit(f"{args.corpus} holds no WARC")
    weeks = [int(w) for w in args.at.split(",") if w] or sorted({max(1, args.weeks * k // 4) for k in (1, 2, 3, 4)})
    out = args.out or ROOT / "bench" / "results" / f"refresh-single-{args.corpus.name}"
    out.mkdir(parents=True, exist_ok=True)
    analyzer = TermAnalyzer()
    rows = []
    for text in TEXTS:
        web = load_evolving_web(warcs[0], text=text)
        index = VersionIndex(web.texts, analyzer)
        for name, workload in build_workloads(args, web, analyzer, out, repository_pages(web, index, None)).items():
            gains = GainMeter(index, workload)
            for answers in ANSWERS:
                meter = QualityMeter(index, workload, answers=answers)
                rng = np.random.default_rng(args.seed)
                found, kappas = [], []
                for week in weeks:
                    week_found, kappa = tries(web, index, meter, gains, week, args.sample, rng)
                    found += week_found
                    kappas.append(kappa)
                row = {"index": text, "answers": answers, "workload": name, "kappa": kappas, **summary(found, rng)}
                rows.append(row)
                print(
                    f"  {text:5} {answers:3} {name}: {row['tries']} refreshes, {100 * row['lower']:.1f} % lower Q, "
                    f"losses {row['loss_per_gain']:.3g} of the gains, Spearman {row['estimate_spearman']:.2f} "
                    f"(signed {row['signed_spearman']:.2f}) ({(time.monotonic() - started) / 60:.0f} min)",
                    flush=True,
                )
    minutes = (time.monotonic() - started) / 60
    lines = [
        f"Command: `.venv/bin/python -m bench.refresh_single --corpus {args.corpus} --weeks {args.weeks} "
        f"--tune-weeks {args.tune_weeks} --at {','.join(map(str, weeks))} --sample {args.sample} "
        f"--workloads {args.workloads} --seed {args.seed}` ({minutes:.0f} min). The repository left as crawled at "
        "week 0; "
        f"at weeks {', '.join(map(str, weeks))}, each of (a sample of {args.sample} of) its stale pages refreshed "
        "alone "
        "and Q(W_L) measured again: the true ΔQ of one refresh. Deterministic: one run.",
        "",
        "| index | answers | workload | refreshes tried | lower Q | raise Q | losses / gains | mean true ΔQ of a "
        "random tenth |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    lines += [f"| {r['index']} | {r['answers']} | {r['workload']} | {r['tries']} | {100 * r['lower']:.1f} % | "
              f"{100 * r['raise']:.1f} % | {r['loss_per_gain']:.3g} | {r['random_tenth_true']:.2e} |" for r in rows]
    lines += [
        "",
        "The user-centric estimate of the same refreshes (crawlproject.refresh.gain: ΔQ = Σ_w f_w ΔI_w "
        "(S_new − κ·S_old)): as the policy uses it (κ = 1, the pages a refresh passes taken as fresh: ≥ 0 by "
        "construction), and **signed** with κ_w, per term w, the oracle share of the live pages' scores for w in "
        "their copies' "
        "(the best such a signed estimate could know; < 1 when stale copies overstate their pages) — how "
        "well each ranks the refreshes, and what the tenth it ranks highest (what a budget buys) does to Q:",
        "",
        "| index | answers | workload | κ by week (mean of κ_w) | estimate | Spearman with true ΔQ | estimated > 0 "
        "where Q fell "
        "| < 0 | true ΔQ of its top tenth | its top tenth's refreshes that lower Q |",
        "|---|---|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        for name, label in (("estimate", "κ = 1"), ("signed", "signed")):
            lines.append(
                f"| {r['index']} | {r['answers']} | {r['workload']} | {', '.join(f'{k:.3f}' for k in r['kappa'])} | "
                f"{label} | {r[f'{name}_spearman']:.2f} | {100 * r[f'{name}_positive_lowering']:.1f} % | "
                f"{100 * r[f'{name}_negative']:.1f} % | {r[f'{name}_top_tenth_true']:.2e} | "
                f"{100 * r[f'{name}_top_tenth_lower']:.1f} % |"
            )
    print("\n".join(lines))
    if not args.no_write:
        paper = next(r for r in rows if r["index"] == "main" and r["answers"] == "all")
        template = next(r for r in rows if r["index"] == "whole" and r["answers"] == "any")
        figure = (
            f"one refresh alone lowers Q in {100 * paper['lower']:.1f} % of {paper['tries']} tries with main text and "
            f"all-term answers (losses {paper['loss_per_gain']:.2f} of the gains), against "
            f"{100 * template['lower']:.1f} % (losses {template['loss_per_gain']:.2f}) with the template in and "
            f"any-term answers; the user-centric estimate ranks them at Spearman {paper['estimate_spearman']:.2f} "
            f"(signed with an oracle κ: {paper['signed_spearman']:.2f}), its top tenth lowering Q in "
            f"{100 * paper['estimate_top_tenth_lower']:.1f} % (signed: {100 * paper['signed_top_tenth_lower']:.1f} %)"
        )
        write_section(f"refresh-single-{args.corpus.name}",
                      f"### What one refresh does to Q on {args.corpus.name}\n\n" + "\n".join(lines), figure=figure,
                      target="issue 62: a signed gain estimate, or a measured reason it need not be")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
