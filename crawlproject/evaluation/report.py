"""The evaluation report: Markdown tables and matplotlib plots like the
literature's (harvest rate and target recall vs pages crawled, one line per
strategy, ±1 s.e. error bars)."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

from crawlproject.evaluation.evaluate import TRAJECTORY_STEP  # noqa: E402
from crawlproject.evaluation.statistics import mean_and_stderr  # noqa: E402

ORDER = [
    "random", "breadth-first", "best-first", "fish-search", "shark-search", "focused",
    "context-graph", "infospiders", "link-value", "oracle", "path-oracle",
]


def _strategy_order(names: set[str]) -> list[str]:
    return [s for s in ORDER if s in names] + sorted(names - set(ORDER))


def plot_trajectories(result: dict[str, Any], folder: Path, prefix: str = "") -> list[Path]:
    """One PNG per task and metric; returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for task in sorted({c["task"] for c in result["crawls"]}):
        crawls = [c for c in result["crawls"] if c["task"] == task]
        for key, label in (("harvest_trajectory", "harvest rate"), ("recall_trajectory", "target recall")):
            figure, axes = plt.subplots(figsize=(6.4, 4.2))
            by_strategy: dict[str, list[list[float]]] = defaultdict(list)
            for crawl in crawls:
                by_strategy[crawl["strategy"]].append(crawl[key])
            for strategy in _strategy_order(set(by_strategy)):
                series = by_strategy[strategy]
                xs, means, errors = mean_curve(series)
                every = max(1, len(xs) // 12)
                axes.errorbar(
                    xs, means, yerr=errors, errorevery=every, capsize=2, label=f"{strategy} (n={len(series)})"
                )
            axes.set_xlabel("pages fetched with status 200" if result.get("axis") == "ok" else "pages fetched")
            axes.set_ylabel(f"{label} (mean ± 1 s.e. over topics)")
            axes.set_title(f"Task {task}: {label}")
            axes.grid(alpha=0.3)
            axes.legend(fontsize=8)
            path = folder / f"{prefix}task{task}-{key.split('_')[0]}.png"
            figure.tight_layout()
            figure.savefig(path, dpi=110)
            plt.close(figure)
            written.append(path)
    return written


def mean_curve(series: list[list[float]]) -> tuple[list[int], list[float], list[float]]:
    """Pages crawled, mean and standard error over crawls, point by point.

    Past the point where half the crawls have ended (ran out of links), a
    mean would follow only the survivors, so the curve stops there.

    >>> mean_curve([[1.0, 0.5, 0.5], [0.0, 0.5], [1.0]])[1]
    [0.6666666666666666, 0.5]
    """
    length = sorted(len(s) for s in series)[(len(series) - 1) // 2]
    xs, means, errors = [], [], []
    for i in range(length):
        mean, stderr = mean_and_stderr([s[i] for s in series if i < len(s)])
        xs.append((i + 1) * TRAJECTORY_STEP)
        means.append(mean)
        errors.append(0.0 if math.isnan(stderr) else stderr)
    return xs, means, errors


def _cell(stat: dict[str, float] | None, percent: bool = True) -> str:
    if not stat or math.isnan(stat["mean"]):
        return "–"
    scale = 100 if percent else 1
    stderr = stat["stderr"]
    se = "" if math.isnan(stderr) else f" ± {stderr * scale:.1f}"
    return f"{stat['mean'] * scale:.1f}{se}" if percent else f"{stat['mean']:.2f}{se}"


AXIS_TEXT = {
    "ok": "pages = pages fetched with status 200 (dead fetches counted apart)",
    "fetches": "pages = every fetch, dead links included",
}


def _p(test: dict[str, Any] | None) -> str:
    if not test:
        return "–"
    holm = test.get("p_holm")
    return f"{test['p']:.2g}" + ("" if holm is None else f" → {holm:.2g}")


def _length(stat: dict[str, Any] | None) -> str:
    if not stat or stat["n"] == 0:
        return "–"
    median = stat["median"]
    shown = "never" if math.isinf(median) else f"{median:.0f}"
    ratio = stat["ratio_to_breadth_first"]
    times = "" if math.isnan(ratio) else f" (×{ratio:.2f})"
    return f"{shown}{times} [{stat['reached']}/{stat['n']}]"


def _of_means(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def markdown_tables(result: dict[str, Any]) -> str:
    """One table per task and budget. "Gap closed" places a strategy between
    breadth-first (0) and the path oracle (1): (H − H_bfs) / (H_path − H_bfs)
    of the means over topics; p-values are shown raw → after Holm's correction
    over every test in the table."""
    axis = result.get("axis", "fetches")
    lines = [f"x-axis: {AXIS_TEXT[axis]}.", ""]
    for task_key, by_budget in result["summary"].items():
        task = task_key.removeprefix("task")
        start = "relevant examples" if task == "1" else "neighbors (pages two links before the relevant set)"
        for budget, rows in by_budget.items():
            lines += [
                f"**Task {task}** (start from {start}), **{budget} pages** — mean ± 1 s.e. over topics, %:",
                "",
                "| strategy | topics | pages (median) | dead fetches (median) | harvest rate | target recall "
                "| avg relevance (×100) | coverage top-n SMART | coverage top-n KW·PR "
                "| gap closed BFS→path oracle: harvest | : target recall "
                "| search length 25 % of targets: median (×BFS) [reached] | 50 % "
                "| harvest > BFS: p → Holm | harvest > best-first: p → Holm |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for strategy in _strategy_order(set(rows)):
                row = rows[strategy]
                lengths = row.get("search_length", {})
                lines.append(
                    f"| {strategy} | {row['harvest_rate']['n']} | {row.get('pages_median', math.nan):.0f} "
                    f"| {row.get('dead_fetches_median', math.nan):.0f} "
                    f"| {_cell(row['harvest_rate'])} "
                    f"| {_cell(row['target_recall'])} | {_cell(row['average_relevance'])} "
                    f"| {_cell(row['coverage_smart'])} | {_cell(row['coverage_kw_pr'])} "
                    f"| {_of_means(row.get('gap_closed_of_means'))} "
                    f"| {_of_means(row.get('recall_gap_closed_of_means'))} "
                    f"| {_length(lengths.get('search_length_25pct'))} | {_length(lengths.get('search_length_50pct'))} "
                    f"| {_p(row['vs_breadth_first'])} | {_p(row.get('vs_best_first'))} |"
                )
            lines.append("")
    return "\n".join(lines)


def write_report(result: dict[str, Any], path: Path, title: str, plots: list[Path]) -> None:
    parts = [f"# {title}", "", markdown_tables(result)]
    for plot in plots:
        parts.append(f"![{plot.stem}]({plot.relative_to(path.parent)})")
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
