"""How well a host-disjoint link-value model ranks the links of the hosts it
never saw — offline, without crawling (issue 15).

    .venv/bin/python -m bench.link_value_offline --corpus ../shared/corpora/webkb [--scope domain]

Per topic: train (or reuse) the topic's link-value model as bench/quality
does (bench.topic_models), then take every link of the topic's
held-out hosts (inside one site when --scope says so), its true value
Σ γ^d over the topic's targets within the horizon, and the model's
prediction. Reports the AUC of "this link leads to a target", Spearman's ρ
against the true value, and the share of the top 10 % of links (by score)
that lead to a target — beside the same figures for a baseline that scores
a link by its page alone (the model's page classifier: what a crawler that
follows the links of target-like pages sees).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score

from bench.common import ROOT, median, write_section
from bench.quality import corpus_files, sample_topics, topic_ids
from bench.topic_models import held_out_hosts, models_folder, train_lookahead_model
from crawlproject.corpus.reader import load_corpus
from crawlproject.evaluation.topics import derive_topics, relevant_set
from crawlproject.models.graph import discounted_targets
from crawlproject.models.link_value_model import LinkValueModel
from crawlproject.models.training_graph import link_graph
from crawlproject.policy.scope import SCOPES
from crawlproject.web.urls import host_of

MIN_TARGETS = 5  # a topic with fewer targets on its held-out hosts says nothing about ranking


def ranking(scores: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    leads = truth > 0
    top = np.argsort(-scores, kind="stable")[: max(1, len(scores) // 10)]
    constant = np.ptp(scores) == 0
    return {
        "auc": float(roc_auc_score(leads, scores)) if not constant else 0.5,
        "spearman": float(spearmanr(scores, truth).statistic) if not constant else 0.0,
        "top10": float(leads[top].mean()),
    }


def held_out_pages(held: set[str]) -> Callable[[str], bool]:
    return lambda url: host_of(url) in held


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/webkb")
    parser.add_argument("--topics", type=int, default=20, help="seeded sample of topics (0: all)")
    parser.add_argument(
        "--topics-file", type=Path, default=None, help="a topics.jsonl or topic-ids.txt to take the topics from"
    )
    parser.add_argument("--scope", choices=SCOPES, default="domain")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--models", type=Path, default=None, help="where the models are (reused) or go")
    parser.add_argument("--name", default="link-value-offline")
    parser.add_argument("--no-write", action="store_true",
                        help="print only: BENCHMARKS.md and the tracked rows.json stay as they are")
    args = parser.parse_args()
    started = time.monotonic()
    warc, labels = corpus_files(args.corpus.resolve())
    corpus = load_corpus(warc, labels, ROOT / ".cache")
    topics = derive_topics(corpus, rng_seed=args.seed, query="seed-terms")
    if args.topics_file:
        wanted = topic_ids(args.topics_file)
        topics = [t for t in topics if t.id in wanted]
    else:
        topics = sample_topics(topics, args.topics, args.seed)
    out = ROOT / "bench" / "results" / args.name
    # models a user names are theirs to reuse; the bench's own are trained anew after a code change
    models = args.models.resolve() if args.models else models_folder(out / "models")
    graph = link_graph(warc, window=10, cache_dir=ROOT / ".cache")
    graph.labels = corpus.labels
    rows: list[dict[str, Any]] = []
    for topic in topics:
        held = held_out_hosts(corpus, topic)
        test = graph.restricted(held_out_pages(held)).within_sites(args.scope)
        targets = relevant_set(topic, corpus) & set(test.text)
        if len(targets) < MIN_TARGETS:
            print(f"  {topic.id}: {len(targets)} targets on its held-out hosts, skipped", flush=True)
            continue
        path = train_lookahead_model(
            graph, corpus, topic, "link-value", models / f"link-value-{topic.id}.npz", args.scope
        )
        model = LinkValueModel.load(path)
        home = model.home or model.sites(
            topic.seeds
        )  # a crawl's home: the model's, else the seeds' (HomeSites.of_model)
        value = discounted_targets(targets, test.inlinks(), model.gamma, model.horizon)
        tokens, page_scores, truth = [], [], []
        page_probability = {url: model.page_probability(text) for url, text in test.text.items()}
        for url, link in test.links_between_pages(test.links):
            page = page_probability[url]
            tokens.append(
                model.features(link.anchor, link.context, link.target, page > 0.5, model.link_home(url, home))
            )
            page_scores.append(page)
            truth.append(value.get(link.target, 0.0))
        truth_array = np.asarray(truth)
        row: dict[str, Any] = {
            "topic": topic.id, "links": len(truth), "leading": float((truth_array > 0).mean()),
            "model": ranking(model.predict(tokens), truth_array),
            "page": ranking(np.asarray(page_scores), truth_array),
        }
        rows.append(row)
        print(f"  {topic.id}: {len(truth)} links, {row['leading']:.1%} lead to a target; "
              f"model AUC {row['model']['auc']:.3f}, page-only AUC {row['page']['auc']:.3f}", flush=True)
    if not args.no_write:
        out.mkdir(parents=True, exist_ok=True)
        (out / "rows.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    lines = [
        "| topic | links | lead to a target | AUC model (page only) | Spearman ρ model (page only) | top 10 % "
        "leading: model (page only) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        m, p = r["model"], r["page"]
        lines.append(f"| {r['topic']} | {r['links']} | {r['leading']:.1%} | {m['auc']:.3f} ({p['auc']:.3f}) | "
                     f"{m['spearman']:.3f} ({p['spearman']:.3f}) | {m['top10']:.1%} ({p['top10']:.1%}) |")
    med = {k: {s: median([r[k][s] for r in rows]) for s in ("auc", "spearman", "top10")} for k in ("model", "page")}
    better = sum(r["model"]["auc"] > r["page"]["auc"] for r in rows)
    lines.append(f"| **median** ({len(rows)} topics) | | | {med['model']['auc']:.3f} ({med['page']['auc']:.3f}) | "
                 f"{med['model']['spearman']:.3f} ({med['page']['spearman']:.3f}) | "
                 f"{med['model']['top10']:.1%} ({med['page']['top10']:.1%}) |")
    table = "\n".join(lines)
    print(table)
    print(
        f"model's AUC above the page-only baseline's in {better}/{len(rows)} topics ({time.monotonic() - started:.0f}s)"
    )
    if not args.no_write:
        source = f" --topics-file {args.topics_file}" if args.topics_file else f" --topics {args.topics}"
        write_section(
            args.name,
            f"### Link-value model offline: {args.name}\n\nCommand: `.venv/bin/python -m bench.link_value_offline "
            f"--corpus {args.corpus}{source} --scope {args.scope} --seed {args.seed}"
            + (f" --models {args.models}" if args.models else "") + f" --name {args.name}` "
            f"({time.monotonic() - started:.0f} s). Each topic's model is trained without the topic's hosts; "
            "it is judged on every link of those hosts"
            + (f" inside one {args.scope}" if args.scope != "any" else "")
            + f" (topics with fewer than {MIN_TARGETS} targets there are skipped). In brackets the baseline: "
            "the link's page alone, scored by the model's page classifier. The model's AUC is above the "
            f"baseline's in {better} of {len(rows)} topics.\n\n{table}\n",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
