"""How steady a crawl is over runs of the same command (issue 73), read from
the crawls a bench.quality run left:

* relevant pages found at the budget, per run: the worst run ÷ the median
  run, per topic and strategy (a steady crawl stays ≥ 0.8);
* whether every seed's site got fetches beyond its seed, on every run;
* the estimate of what is left at the crawl's end against the truth from the
  labels: the relevant pages behind the links found and not fetched, and
  every relevant page not found (inside the interval or not).
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawlproject.evaluation.topics import relevant_set

if TYPE_CHECKING:
    from bench.runner import CrawlJob
    from crawlproject.corpus.reader import Corpus
    from crawlproject.evaluation.topics import Topic

#: The band a user would not notice: the worst run finds at least this share of the median run's.
BAND = 0.8


def host_of(url: str) -> str:
    return url.split("/")[2] if "://" in url else ""


def crawl_figures(folder: Path, topic: Topic, relevant: set[str], budget: int) -> dict[str, Any]:
    """One crawl's figures at *budget* fetches."""
    history = [json.loads(line) for line in (folder / "history.jsonl").read_text(encoding="utf-8").splitlines()]
    history = history[:budget]
    fetched = {record["canonical_url"] for record in history}
    found = len(fetched & relevant)
    seeds = set(topic.seeds)
    per_site: dict[str, int] = defaultdict(int)
    for record in history:
        if record["canonical_url"] not in seeds:
            per_site[host_of(record["canonical_url"])] += 1
    seed_sites = {host_of(url) for url in topic.seeds}
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    remaining = summary.get("remaining") or {}
    links = folder / "links.tsv"
    queued: set[str] = set()
    if links.exists():
        for line in links.read_text(encoding="utf-8").splitlines():
            parts = line.split("\t")
            if len(parts) >= 2 and parts[0] in fetched:
                queued.add(parts[1])
    ok = {record["canonical_url"] for record in history if record.get("status") == 200}
    return {
        "found": found,
        "seed_sites": {site: per_site.get(site, 0) for site in sorted(seed_sites)},
        "seconds": float(summary.get("elapsed_seconds", 0.0)),
        "remaining": remaining,
        "truth_in_queue": len((queued - fetched) & relevant),
        "truth_not_found": len(relevant - ok),
    }


def inside(remaining: dict[str, Any], truth: int, suffix: str = "") -> bool | None:
    """Whether the estimate's interval holds *truth* (None: no estimate);
    *suffix* ``_all``: the interval of every relevant page left, where the
    estimate gives one, else its interval of the queue's."""
    if not remaining or "low" not in remaining:
        return None
    low = remaining.get(f"low{suffix}", remaining["low"])
    high = remaining.get(f"high{suffix}", remaining["high"])
    return bool(low <= truth <= high)


def steadiness(jobs: list[CrawlJob], corpus: Corpus, budget: int) -> dict[str, Any]:
    """Per (topic, strategy): every run's figures, and the summary rows."""
    relevant = {job.topic.id: relevant_set(job.topic, corpus) for job in jobs}
    runs: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for job in jobs:
        label = job.variant.label
        runs[(job.topic.id, label)].append(crawl_figures(job.folder, job.topic, relevant[job.topic.id], budget))
    rows = []
    for (topic_id, label), figures in sorted(runs.items()):
        found = [f["found"] for f in figures]
        median = statistics.median(found)
        worst = min(found)
        every_site = all(all(count > 0 for count in f["seed_sites"].values()) for f in figures)
        in_queue = [inside(f["remaining"], f["truth_in_queue"]) for f in figures]
        not_found = [inside(f["remaining"], f["truth_not_found"], "_all") for f in figures]
        rows.append({
            "topic": topic_id, "strategy": label, "found": found, "median": median, "worst": worst,
            "ratio": worst / median if median else 1.0, "steady": worst >= BAND * median,
            "every_seed_site": every_site, "seconds": statistics.median(f["seconds"] for f in figures),
            "estimate_in_queue": [v for v in in_queue if v is not None],
            "estimate_not_found": [v for v in not_found if v is not None],
            "seed_sites": [f["seed_sites"] for f in figures],
        })
    return {"rows": rows}


def steadiness_table(result: dict[str, Any], relevant_counts: dict[str, int], manner: str = "polite") -> str:
    """The markdown table of :func:`steadiness`, and a line per strategy."""
    lines = [
        f"**Steadiness over runs, {manner}** — relevant pages found at the budget in each run; the worst run ÷ the "
        f"median run (steady: ≥ {BAND}); every seed's site fetched beyond its seed in every run; the crawl's "
        "own estimate of what is left (at its end) holding the truth from the labels:",
        "",
        "| topic | relevant | strategy | found per run | worst ÷ median | every seed site | estimate holds: "
        "in queue | estimate holds: not found |",
        "|---|---:|---|---|---:|---|---:|---:|",
    ]

    def share(values: list[bool]) -> str:
        return f"{sum(values)}/{len(values)}" if values else "—"

    for row in result["rows"]:
        lines.append(f"| {row['topic']} | {relevant_counts.get(row['topic'], 0)} | {row['strategy']} | "
                     f"{' / '.join(str(n) for n in row['found'])} | {row['ratio']:.2f} | "
                     f"{'yes' if row['every_seed_site'] else 'no'} | {share(row['estimate_in_queue'])} | "
                     f"{share(row['estimate_not_found'])} |")
    lines += [
        "",
        "| strategy | topics steady (worst ≥ 0.8 × median) | topics with every seed site fetched in every run "
        "| estimate holds, in queue | estimate holds, not found |",
        "|---|---:|---:|---:|---:|",
    ]
    by_strategy: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in result["rows"]:
        by_strategy[row["strategy"]].append(row)
    for label, rows in sorted(by_strategy.items()):
        steady = sum(row["steady"] for row in rows)
        sites = sum(row["every_seed_site"] for row in rows)
        queue = [v for row in rows for v in row["estimate_in_queue"]]
        missing = [v for row in rows for v in row["estimate_not_found"]]
        lines.append(f"| {label} | {steady}/{len(rows)} | {sites}/{len(rows)} | "
                     f"{100 * sum(queue) / len(queue):.0f} % of {len(queue)} |" if queue else
                     f"| {label} | {steady}/{len(rows)} | {sites}/{len(rows)} | — |")
        lines[-1] += f" {100 * sum(missing) / len(missing):.0f} % of {len(missing)} |" if missing else " — |"
    return "\n".join(lines) + "\n"
