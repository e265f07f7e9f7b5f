"""The link model learnt across topics (issue 37), offline and
leave-one-corpus-out: how well it ranks the links a crawl of a topic meets,
trained without the corpus it is measured on, beside SharkSearch's score.

    .venv/bin/python -m bench.link_prior [--corpora webkb,phpdoc-evolving,docsweb] [--pages 300] [--ship]

For every topic of every corpus (crawlproject.evaluation.topics, the
queries the quality benchmark uses), an offline SharkSearch crawl of the
corpus's link graph from the topic's Task-2 start (its neighbours; Task 1's
seeds when it has none) visits 300 pages; every link of every page visited
is an example, worth 1 (to a relevant page), ½ (to a page linking to one) or
0 (crawlproject.models.link_prior). For each corpus, the prior is trained
on the other corpora's topics and measured on this corpus's: per topic, the
AUC of links to relevant pages against the rest, and of links worth
anything (within two links) against the rest, for the prior and for
SharkSearch's score alone. The models trained without each corpus are kept
under .cache/bench/link-prior/ (for bench.quality: ``FOCUS_LEARNER_PRIOR``);
``--ship`` writes the prior trained on every corpus into the package.
"""

from __future__ import annotations

import argparse
import statistics
import time
import zlib
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from bench.common import ROOT, code_stamp, write_section
from bench.quality import corpus_files, data_folder
from crawlproject.evaluation.link_prior_training import corpus_link_examples, fit_across_topics
from crawlproject.models.link_prior import FEATURES, SHIPPED, LinkPrior

CORPORA = ROOT.parent / "shared" / "corpora"


#: the modules whose code makes a corpus's examples: a change to any of them makes them anew
EXAMPLE_MAKERS = (
    "crawlproject.evaluation.link_prior_training", "crawlproject.evaluation.topics", "crawlproject.models.link_prior",
    "crawlproject.models.training_graph", "crawlproject.models.shark_score", "crawlproject.web.text",
)


def examples_version() -> int:
    """What the cached examples were made by: the features' names and the
    code of :data:`EXAMPLE_MAKERS` (a re-run after a change to how links
    are described or topics derived measures anew, not from old examples)."""
    return zlib.crc32(" ".join(FEATURES).encode(), int(code_stamp(*EXAMPLE_MAKERS), 16))


def examples_of(name: str, pages: int, data: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every topic's examples of corpus *name* (cached under *data*)."""
    version = examples_version()
    cache = data / f"{name}-{pages}-{version:08x}.npz"
    if cache.exists():
        with np.load(cache) as saved:
            count = int(saved["count"])
            return [(saved[f"rows{i}"], saved[f"values{i}"]) for i in range(count)]
    warc, labels = corpus_files(CORPORA / name)
    found = corpus_link_examples(warc, labels, pages, ROOT / ".cache")
    arrays = {"count": np.array(len(found))}
    for i, (rows, values) in enumerate(found):
        arrays[f"rows{i}"], arrays[f"values{i}"] = rows, values
    data.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(cache, **arrays)  # type: ignore[arg-type]
    return found


def auc(truth: np.ndarray, scores: np.ndarray) -> float | None:
    if truth.all() or not truth.any():
        return None
    return float(roc_auc_score(truth, scores))


def measure(prior: LinkPrior, topics: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, float | int]:
    """Mean per-topic AUCs of the prior and of SharkSearch's score (over
    every topic, and over the odd-numbered ones: the features were chosen
    looking at the even-numbered topics only)."""
    found: dict[str, list[float]] = {"prior relevant": [], "shark relevant": [], "prior near": [], "shark near": [],
                                     "prior odd": [], "shark odd": []}
    shark = FEATURES.index("shark_search")
    for number, (rows, values) in enumerate(topics):
        predicted = prior.predict(rows)
        if number % 2:
            for name, scores in (("prior", predicted), ("shark", rows[:, shark])):
                value = auc(values >= 1, scores)
                if value is not None:
                    found[f"{name} odd"].append(value)
        for kind, truth in (("relevant", values >= 1), ("near", values > 0)):
            for name, scores in (("prior", predicted), ("shark", rows[:, shark])):
                value = auc(truth, scores)
                if value is not None:
                    found[f"{name} {kind}"].append(value)
    means: dict[str, float | int] = {key: statistics.fmean(v) for key, v in found.items() if v}
    means["topics"] = len(found["prior relevant"])
    wins = [p > s for p, s in zip(found["prior relevant"], found["shark relevant"], strict=False)]
    means["prior ahead"] = sum(wins)
    return means


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", default="webkb,phpdoc-evolving,docsweb")
    parser.add_argument("--pages", type=int, default=300, help="pages each offline crawl of a topic visits")
    parser.add_argument("--ship", action="store_true", help="write the prior trained on every corpus into the package")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    started = time.monotonic()
    names = args.corpora.split(",")
    data = data_folder("link-prior")
    examples = {}
    for name in names:
        examples[name] = examples_of(name, args.pages, data)
        links = sum(len(v) for _, v in examples[name])
        print(f"{name}: {len(examples[name])} topics, {links} links ({time.monotonic() - started:.0f}s)", flush=True)
    lines = [
        f"`python -m bench.link_prior --corpora {args.corpora} --pages {args.pages}` — for every topic of each "
        f"corpus, the links an offline {args.pages}-page SharkSearch crawl of the corpus's link graph meets from "
        "the topic's start; the prior measured on a corpus was trained on the others only (leave-one-corpus-out). "
        "Its features were chosen among variants by the held-out AUC on the even-numbered topics; the last two "
        f"columns are the odd-numbered topics only. Mean per-topic AUC ({time.monotonic() - started:.0f}s):",
        "",
        "| corpus (held out) | topics | links to relevant pages: prior | SharkSearch | prior ahead (topics) "
        "| links within two of one: prior | SharkSearch | to relevant, odd topics: prior | SharkSearch |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    headline = []
    for name in names:
        others = [examples[other] for other in names if other != name]
        prior = fit_across_topics(others, {"trained_on": [o for o in names if o != name], "pages": args.pages})
        prior.save(data / f"prior-without-{name}.npz")
        m = measure(prior, examples[name])
        lines.append(
            f"| {name} | {m['topics']} | {m['prior relevant']:.3f} | {m['shark relevant']:.3f} | "
            f"{m['prior ahead']}/{m['topics']} | {m['prior near']:.3f} | {m['shark near']:.3f} | "
            f"{m['prior odd']:.3f} | {m['shark odd']:.3f} |"
        )
        print(lines[-1], flush=True)
        headline.append(f"{name} {m['prior relevant']:.3f} vs {m['shark relevant']:.3f}")
    everything = fit_across_topics([examples[name] for name in names], {"trained_on": names, "pages": args.pages})
    lines += ["", "Weights of the prior trained on every corpus (per standard deviation of the feature; "
              "the link learner's prior when FOCUS_LEARNER_PRIOR = shipped):", "",
              "| feature | weight |", "|---|---:|"]
    lines += [f"| {feature} | {weight:+.3f} |" for feature, weight in everything.named_weights()]
    lines.append(f"| (intercept) | {everything.intercept:+.3f} |")
    body = "\n".join(lines) + "\n"
    print(body)
    if args.ship:
        target = ROOT / "crawlproject" / "models" / SHIPPED
        everything.save(target)
        print(f"wrote {target}")
    if not args.no_write:
        write_section("link-prior", body,
                      figure="held-out AUC of links to relevant pages, prior vs SharkSearch: " + ", ".join(headline),
                      target="issue 37: a link model learnt across topics, measured on corpora it was not trained on")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
