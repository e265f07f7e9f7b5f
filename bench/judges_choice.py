"""The examples judge's two constants, chosen leaving one corpus out (issue 58):

    .venv/bin/python -m bench.judges_choice --sections judges-docsweb,judges-webkb,judges-phpdoc-evolving

* how it calibrates on the crawl's pages (crawlproject.judges.classifier,
  ``EXAMPLES_CALIBRATION``): the kind with the best F1 of the settled
  ``relevant`` flag, pooled over each other corpus's topics (10+10 and 10
  relevant examples alike), the mean of the two corpora's;
* how it states its precision — from its probabilities (their mean over its
  calls), told by its examples (crawlproject.models.topic_page,
  ``examples_precision``), or told by its examples with an interval that
  spans both — and the margin of the interval
  (crawlproject.models.intervals, ``PRECISION_MARGIN``): for each way, the
  least margin (in steps of 0.01) whose interval holds the measured
  precision in ≥ 80 % of the topics of each other corpus; the way that
  needs the smaller one (then the smaller mean gap there).

Each corpus is then measured with the constants chosen without it. It reads
what bench.judges recorded per topic (``bench/results/SECTION/per-topic.json``)
and runs no crawl.
"""

from __future__ import annotations

import argparse
import json
import statistics
from typing import Any

from bench.common import ROOT, write_section
from bench.judges import MEASURABLE
from crawlproject.models.intervals import stated_interval

JUDGES = ("examples 10+10", "examples 10")
KINDS = ("none", "em", "scott", "refit")
HOLDS = 0.8  #: the share of topics whose interval must hold the measured precision
MARGINS = [step / 100 for step in range(51)]


def load(section: str) -> list[dict[str, Any]]:
    return json.loads((ROOT / "bench" / "results" / section / "per-topic.json").read_text(encoding="utf-8"))


def runs(results: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """Each topic's and judge's figures under one calibration *kind*."""
    return [r["judges"][judge]["calibrations"][kind] for r in results for judge in JUDGES]


def pooled_f1(results: list[dict[str, Any]], kind: str) -> float:
    """F1 of the settled flag over every topic's pages together."""
    flags = [run["settled"] for run in runs(results, kind)]
    hits, calls, relevant = (sum(f[k] for f in flags) for k in ("hits", "calls", "relevant"))
    return 2 * hits / (calls + relevant) if calls + relevant else 0.0


STATED = ("probabilities", "examples", "both")


def statements(results: list[dict[str, Any]], kind: str, margin: float, stated: str = "probabilities"
               ) -> list[tuple[float, float, float, float]]:
    """(stated, low, high, measured) of each topic that states a precision,
    the *stated* way."""
    found = []
    for run in runs(results, kind):
        tally, measured, told = run.get("tally") or {}, run.get("stated_measured"), run.get("examples_told")
        if measured is None:
            continue
        if stated in ("examples", "both"):
            if told is None or (stated == "both" and not tally.get("calls")):
                continue
            low, high = told["low"], told["high"]
            if stated == "both":  # the interval that spans both estimates
                by_probabilities = stated_interval(tally["probability_sum"], tally["variance_sum"], tally["calls"], 0.0)
                low, high = min(low, by_probabilities[0]), max(high, by_probabilities[1])
            found.append((told["value"], max(0.0, low - margin), min(1.0, high + margin), measured))
        elif tally.get("calls"):
            low, high = stated_interval(tally["probability_sum"], tally["variance_sum"], tally["calls"], margin)
            found.append((tally["probability_sum"] / tally["calls"], low, high, measured))
    return found


def mean_gap(pairs: list[tuple[float, float, float, float]]) -> float:
    return statistics.fmean(abs(stated - measured) for stated, _, _, measured in pairs) if pairs else 1.0


def held(pairs: list[tuple[float, float, float, float]]) -> float:
    return sum(low <= measured <= high for _, low, high, measured in pairs) / len(pairs) if pairs else 0.0


def least_margin(corpora: list[list[dict[str, Any]]], kind: str, stated: str) -> float:
    for margin in MARGINS:
        if all(held(statements(results, kind, margin, stated)) >= HOLDS for results in corpora):
            return margin
    return MARGINS[-1]


def median_flag(results: list[dict[str, Any]], kind: str, judge: str) -> tuple[float, float]:
    """The median topic's settled flag, over the topics bench.judges measures one on."""
    flags = [r["judges"][judge]["calibrations"][kind]["settled"] for r in results]
    flags = [f for f in flags if f["recall"] is not None and f["relevant"] >= MEASURABLE]
    return (statistics.median(f["precision"] or 0.0 for f in flags), statistics.median(f["recall"] for f in flags))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sections", default="judges-docsweb,judges-webkb,judges-phpdoc-evolving")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    sections = args.sections.split(",")
    data = {section: load(section) for section in sections}
    lines = [
        "| held-out corpus | calibration chosen on the others (pooled F1 there) | precision stated (shipped "
        "calibration), margin: chosen on the others | settled flag, 10+10: P / R (median topic) | 10 relevant: P / R | "
        "stated interval holds | mean \\|stated − measured\\| |",
        "|---|---|---|---|---|---|---|---|",
    ]
    # the calibration: each fold's choice, and one kind for every crawl — the one whose pooled F1
    # falls least short of each fold's choice
    fold_scores = {section: {kind: statistics.fmean(pooled_f1(data[other], kind) for other in sections
                                                     if other != section) for kind in KINDS} for section in sections}
    shortfall = {kind: max(max(fold.values()) - fold[kind] for fold in fold_scores.values()) for kind in KINDS}
    kind = min(KINDS, key=lambda k: shortfall[k])
    chosen: dict[str, tuple[str, float]] = {}
    for section in sections:
        others = [data[s] for s in sections if s != section]
        scores = fold_scores[section]
        best = max(KINDS, key=lambda k: scores[k])
        # the statement, for the shipped calibration: the way that needs the least margin on the others
        margins = {way: least_margin(others, kind, way) for way in STATED}
        way = min(STATED, key=lambda w: (margins[w], statistics.fmean(
            mean_gap(statements(results, kind, margins[w], w)) for results in others)))
        chosen[section] = (way, margins[way])
        pairs = statements(data[section], kind, margins[way], way)
        both, relevant_only = median_flag(data[section], kind, JUDGES[0]), median_flag(data[section], kind, JUDGES[1])
        lines.append(f"| {section.removeprefix('judges-')} | {best} ({scores[best]:.3f}; "
                     + ", ".join(f"{k} {v:.3f}" for k, v in scores.items() if k != best)
                     + f") | by its {way}, ± {margins[way]:.2f} ("
                     + ", ".join(f"{w}: ± {m:.2f}" for w, m in margins.items() if w != way)
                     + f") | {both[0]:.2f} / {both[1]:.2f} | {relevant_only[0]:.2f} / "
                     f"{relevant_only[1]:.2f} | {held(pairs):.0%} of {len(pairs)} | {mean_gap(pairs):.3f} |")
    # the statement: where folds chose differently, the widest of their ways (both spans examples)
    way = max((way for way, _ in chosen.values()), key=STATED.index)
    shipped = (kind, way, max(margin for _, margin in chosen.values()))
    with_shipped = {section.removeprefix("judges-"): statements(data[section], kind, shipped[2], way)
                    for section in sections}
    text = ("`python -m bench.judges_choice` — the examples judge's calibration on the crawl's pages and the margin "
            "of its stated precision's interval, each chosen on two corpora and measured on the third (the judge's "
            "settled calls on the pages met by a polite 300-fetch link-learner crawl, bench.judges; the statement: "
            "the precision the crawl states at its end against the labels' precision of its calls).\n\n"
            + "\n".join(lines)
            + f"\n\nShipped: calibration `{shipped[0]}` (the kind whose pooled F1 falls least short of each fold's "
              "choice: " + ", ".join(f"{k} {v:.3f}" for k, v in shortfall.items())
            + "; the flag's figures above are its"
            + f"), the precision stated by its {shipped[1]} (the widest a fold chose), margin {shipped[2]:.2f} (the "
              "largest a fold chose). With those on every corpus (each corpus then had a say): the interval holds in "
            + ", ".join(f"{name} {held(pairs):.0%}" for name, pairs in with_shipped.items()) + ".")
    print(text)
    if not args.no_write:
        write_section("judges-choice", text, figure=f"calibration {shipped[0]}, precision by its {shipped[1]} "
                                                    f"± {shipped[2]:.2f}",
                      target="each corpus: 10+10 P ≥ 0.8 R ≥ 0.7; interval holds in ≥ 80 %; gap ≤ 0.10")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
