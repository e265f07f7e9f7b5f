"""The crawl report: one self-contained HTML file a person opens
after a crawl — what was found, where, by which links, how sure the judge
is, what is left and why the crawl stopped.

Read from the crawl's folder alone (history.jsonl, summary.json, crawl.json),
so ``scrapy report CRAWL_DIR`` makes it again for any finished crawl; the
crawl writes it at its end (``FOCUS_REPORT``). Plots are inline SVG
(matplotlib), so the file needs nothing beside it.
"""

from __future__ import annotations

import html
import io
import json
import logging
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import matplotlib

matplotlib.use("Agg")  # files only, no display
# its font search says 90 lines at DEBUG (Scrapy's template level) on every report
logging.getLogger("matplotlib").setLevel(logging.INFO)
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from crawlproject.corpus.collection import counts_as_relevant  # noqa: E402
from crawlproject.web.urls import host_of  # noqa: E402

REPORT_NAME = "report.html"
#: hosts drawn apart in the plot of relevant pages against fetches
PLOTTED_HOSTS = 5
#: relevant pages listed (best first)
LISTED_PAGES = 200
#: hops of the path that led to a page shown before "…"
PATH_HOPS = 4


class ReportError(ValueError):
    """A folder that holds no crawl."""


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line torn by a kill: the repair cuts it when the crawl resumes
    return records


def _read_json(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return found if isinstance(found, dict) else {}


def _svg(figure: Any) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # the XML prologue is not allowed inside HTML


def harvest_plot(history: list[dict[str, Any]]) -> str:
    """Relevant pages (as the judge called them) against fetches: all, and
    the hosts that gave most."""
    figure, axes = plt.subplots(figsize=(8, 3.6))
    total, by_host = 0, Counter[str]()
    xs, ys = [], []
    per_host: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for fetch, record in enumerate(history, 1):
        if counts_as_relevant(record):
            total += 1
            host = host_of(record.get("url") or "")
            by_host[host] += 1
            per_host[host].append((fetch, by_host[host]))
        xs.append(fetch)
        ys.append(total)
    axes.step([0, *xs], [0, *ys], where="post", color="black", linewidth=2, label="all hosts")
    for host, _ in by_host.most_common(PLOTTED_HOSTS):
        points = [(0, 0), *per_host[host], (len(history), by_host[host])]
        axes.step([x for x, _ in points], [y for _, y in points], where="post", linewidth=1, label=host)
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("pages fetched")
    axes.set_ylabel("relevant pages found")
    axes.grid(alpha=0.3)
    if total:
        axes.legend(fontsize=8, loc="upper left")
    return _svg(figure)


def path_to(record: dict[str, Any], by_url: dict[str, dict[str, Any]]) -> list[tuple[str, str | None]]:
    """(URL, anchor text it was found by) from the seed down to *record*."""
    path, seen = [], set()
    current: dict[str, Any] | None = record
    while current is not None and current.get("url") not in seen:
        seen.add(current.get("url"))
        path.append((str(current.get("url")), current.get("found_via")))
        parent = current.get("parent_url")
        current = by_url.get(parent) if parent else None
        if parent and current is None:
            path.append((parent, None))  # a page fetched by another worker, or before a resume cut
            break
    return path[::-1]


def _link(url: str, text: str | None = None) -> str:
    return f'<a href="{html.escape(url, quote=True)}">{html.escape(text or url)}</a>'


def _path_html(path: list[tuple[str, str | None]]) -> str:
    shown = path if len(path) <= PATH_HOPS + 1 else [path[0], ("…", None), *path[-PATH_HOPS:]]
    parts = []
    for url, anchor in shown:
        if url == "…":
            parts.append("…")
            continue
        parts.append(_link(url, f"“{anchor}”" if anchor else urlsplit(url).path or url))
    return " → ".join(parts)


def _figures(summary: dict[str, Any], history: list[dict[str, Any]], called: int) -> list[tuple[str, str]]:
    ok = sum(1 for r in history if r.get("status") and 200 <= int(r["status"]) < 300)
    rows = [("pages fetched", f"{len(history):,} ({ok:,} ok)"),
            ("relevant, as the judge called them", f"{called:,}")]
    if "relevant_pages" in summary:
        rows.append(
            (
                "relevant, by the labels",
                f"{summary['relevant_pages']:,} (harvest rate {summary.get('harvest_rate', 0):.1%})",
            )
        )
    judge = summary.get("judge") or {}
    precision = judge.get("precision")
    answered = summary.get("answers")
    if answered:  # the user's answers (scrapy label): the collection's precision, measured
        rows.append(("your answers", f"{answered['given'] + answered['teach']} that teach the judge, "
                                     f"{answered['sample']} on a fair sample of its calls"))
        rows.append(("the collection's precision", answered["precision"]["said"]))
    if precision:
        rows.append(
            (
                "the judge's precision (estimated)",
                f"{precision['value']:.0%} ({precision['low']:.0%}–{precision['high']:.0%}, "
                f"from its {precision['basis']})",
            )
        )
    elif judge:
        rows.append(("the judge's precision (estimated)", "unknown: label pages in the dashboard to estimate it"))
    measured = summary.get("judge_by_labels")
    if measured:  # the crawl had labels (FOCUS_LABELS): the judge's calls measured by them
        rows.append(
            (
                "the judge's precision, by the labels",
                (
                    f"{measured['precision']:.0%} ({measured['low']:.0%}–{measured['high']:.0%}): "
                    f"{measured['labelled_relevant']:,} of the {measured['called']:,} pages it called relevant "
                    "are labelled relevant"
                )
                if measured.get("called")
                else "– (it called no page relevant)",
            )
        )
    if judge.get("threshold") is not None:
        rows.append(("called relevant from relevance", f"{judge['threshold']:.3g}"))
    left = summary.get("remaining")
    if left:
        rows.append(("relevant pages left (estimated)",
                     f"{left['expected']:.0f} ({left['low']:.0f}–{left['high']:.0f}) behind the links queued"
                     + (f", up to {left['high_all']:.0f} in all, with those no link names yet"
                        if "high_all" in left else "")
                     + f"; {left['rate_now']:.3f} per fetch now"))
    if summary.get("elapsed_seconds") is not None:
        rows.append(("time", f"{summary['elapsed_seconds']:.0f} s, {summary.get('pages_per_second', 0):.1f} pages/s"))
    rows.append(
        ("stopped because", str(summary.get("finish_reason", "unknown (no summary: still running, or killed)")))
    )
    return rows


def render(folder: Path) -> str:
    """The report of the crawl in *folder*, as HTML."""
    history_file = folder / "history.jsonl"
    if not history_file.is_file():
        raise ReportError(f"{folder} holds no crawl (no history.jsonl): name a crawl's output folder")
    history = _read_jsonl(history_file)
    summary = _read_json(folder / "summary.json")
    crawl = _read_json(folder / "crawl.json")
    by_url = {str(r.get("url")): r for r in history}
    relevant = sorted((r for r in history if counts_as_relevant(r)), key=lambda r: -(r.get("relevance") or 0.0))
    judge = (summary.get("judge") or {}).get("judge")
    name = " · ".join(str(part) for part in (
        summary.get("spider") or crawl.get("spider"), summary.get("strategy"), judge and f"judge {judge}",
        summary.get("query") and f"“{summary['query']}”", summary.get("topic_id"),
    ) if part)
    hosts: dict[str, Counter[str]] = defaultdict(Counter)
    for record in history:
        counts = hosts[host_of(str(record.get("url") or ""))]
        counts["fetched"] += 1
        status = int(record["status"]) if record.get("status") is not None else None
        counts["ok"] += int(status is not None and 200 <= status < 300)
        counts["dead"] += int(status is None or status >= 400)
        counts["relevant"] += int(counts_as_relevant(record))
    host_rows = "".join(
        f"<tr><td>{html.escape(host)}</td><td>{c['fetched']}</td><td>{c['ok']}</td><td>{c['relevant']}</td><td>{c['dead']}</td></tr>"
        for host, c in sorted(hosts.items(), key=lambda kv: (-kv[1]["relevant"], -kv[1]["fetched"]))
    )
    page_rows = "".join(
        f"<tr><td>{_link(str(r['url']), r.get('title') or r['url'])}</td><td>{(r.get('relevance') or 0):.3f}</td>"
        f"<td>{r.get('order', '')}</td><td class='path'>{_path_html(path_to(r, by_url))}</td></tr>"
        for r in relevant[:LISTED_PAGES]
    )
    more = (
        f"<p>… and {len(relevant) - LISTED_PAGES} more (history.jsonl has them all).</p>"
        if len(relevant) > LISTED_PAGES
        else ""
    )
    figures = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
        for k, v in _figures(summary, history, len(relevant))
    )
    no_judge = (
        ""
        if any(r.get("relevant") is not None for r in history)
        else (
            "<p class='note'>This crawl had no judge (a strategy without one, or a plain spider): "
            "no page is called relevant.</p>"
        )
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Crawl report: {html.escape(name or folder.name)}</title>
<style>
body {{ font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }}
h1 {{ font-size: 1.5em; margin-bottom: 0.1em; }} .sub {{ color: #666; margin-top: 0; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1.5em; }} td, th {{ padding: 3px 10px; border-bottom: 1px solid #e4e4e4; text-align: left; vertical-align: top; }}
th {{ font-weight: 600; }} table.figures th {{ color: #555; font-weight: normal; }}
td.path {{ font-size: 0.9em; color: #555; }} a {{ color: #1a5fb4; text-decoration: none; }} a:hover {{ text-decoration: underline; }}
.note {{ background: #fff6d5; padding: 0.5em 1em; }} svg {{ max-width: 100%; height: auto; }}
</style></head><body>
<h1>{html.escape(name or "Crawl report")}</h1>
<p class="sub">{html.escape(str(folder))} · started {html.escape(str(crawl.get("started_at", "?")))}</p>
<table class="figures" id="figures">{figures}</table>
{no_judge}
<h2>Relevant pages against fetches</h2>
<div id="harvest">{harvest_plot(history)}</div>
<h2>Relevant pages ({len(relevant)})</h2>
<table id="pages"><tr><th>page</th><th>relevance</th><th>fetch</th><th>the path that led there</th></tr>{page_rows}</table>{more}
<h2>Hosts ({len(hosts)})</h2>
<table id="hosts"><tr><th>host</th><th>fetched</th><th>ok</th><th>relevant</th><th>dead</th></tr>{host_rows}</table>
</body></html>
"""  # noqa: E501 (the page's own CSS and table heads)


def write_report(folder: str | Path, output: str | Path | None = None) -> Path:
    """Write the report of the crawl in *folder* (to *output*, default
    ``FOLDER/report.html``); its path."""
    folder = Path(folder)
    path = Path(output) if output is not None else folder / REPORT_NAME
    text = render(folder)
    path.write_text(text, encoding="utf-8")
    return path
