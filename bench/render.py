"""What rendering costs (issue 52): the same breadth-first crawl of a
corpus replay fetched plainly and by the browser (``FOCUS_RENDER=always``),
alternating, and with ``auto`` (which renders only pages scripts build).

    .venv/bin/python -m bench.render [--corpus ../shared/corpora/docsweb] [--pages 150] [--repeats 3] [--polite]

Without ``--polite`` the replay is crawled as fast as it answers (no delay,
8 per host): what the browser costs per page. With it, at the project's
politeness (1 request per host, ``DOWNLOAD_DELAY`` 1 s): what a user's
crawl loses by rendering.

Figures per mode, median of the repeats: pages/s, ms per page (wall time ÷
pages), and the peak resident memory of the crawl with every process it
started (the browser's included), sampled every 0.2 s.

    .venv/bin/python -m bench.render --script-site [--articles 12] [--repeats 10] --polite

crawls instead a site whose pages scripts build from JSON they fetch after
load (crawlproject.replay.script_site), with ``auto`` and ``always``: in every
run, how many articles were reached and how many carry the text their
script writes (issue 59: every article with its text, in every run).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from bench.common import ROOT, write_section
from crawlproject.replay import LOOPBACK_SPEED, script_site
from crawlproject.replay.process import ReplayProcess

SEEDS = {
    "docsweb": "http://httpd.apache.org/docs/2.4/index.html,http://www.sphinx-doc.org/en/5.3/index.html,"
               "http://www.gnuplot.info/docs_5.4/index.html,http://nodejs.org/docs/v18.20.4/api/index.html",
    "webkb": "http://www.cs.cornell.edu/,http://www.cs.washington.edu/,http://www.cs.wisc.edu/,http://www.cs.utexas.edu/",
}
MODES = ("never", "always", "auto")


def tree_rss(process: psutil.Process) -> int:
    total = 0
    for member in (process, *process.children(recursive=True)):
        try:
            total += member.memory_info().rss
        except psutil.Error:
            continue  # ended between the listing and the reading
    return total


def crawl(proxy: str, seeds: str, pages: int, mode: str, folder: Path, polite: bool,
          articles: int = 0) -> dict[str, float]:
    """One crawl's figures; with *articles*, the script site's articles reached and with their text."""
    settings = {
        **({} if polite else LOOPBACK_SPEED),
        "FOCUS_REPLAY_PROXY": proxy,
        "FOCUS_OUTPUT_DIR": str(folder),
        "LOG_LEVEL": "WARNING",
        "CLOSESPIDER_PAGECOUNT": pages,
        "FOCUS_RENDER": mode,
        "FOCUS_STORE_PAGES": False,
        "FOCUS_REPORT": False,
        "LOGSTATS_INTERVAL": 0,
        "FOCUS_COLLECTION": bool(articles),
    }
    command = [sys.executable, "-m", "scrapy", "crawl", "breadthfirst", "-a", f"seeds={seeds}"]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    started = time.monotonic()
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # noqa: S603
    watched, peak = psutil.Process(child.pid), 0
    while child.poll() is None:
        peak = max(peak, tree_rss(watched))
        time.sleep(0.2)  # a sampling period, not a synchronisation
    seconds = time.monotonic() - started
    if child.returncode:
        raise RuntimeError(child.stderr.read().decode()[-2000:] if child.stderr else "crawl failed")
    summary = json.loads((folder / "summary.json").read_text())
    fetched = summary["pages_fetched"]
    history = [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()]
    figures = {"pages": fetched, "pages_per_second": fetched / seconds, "ms_per_page": 1000 * seconds / fetched,
               "peak_mb": peak / 1e6, "rendered": sum(bool(r.get("rendered")) for r in history)}
    if articles:
        kept = [json.loads(line) for line in (folder / "collection/pages.jsonl").read_text().splitlines()]
        by_url = {page["url"]: page for page in kept}
        urls = [f"{script_site.HOST}/articles/{n}" for n in range(1, articles + 1)]
        figures["reached"] = sum(url in by_url for url in urls)
        figures["with_text"] = sum(url in by_url and script_site.article_text(n) in by_url[url].get("text", "")
                                   for n, url in enumerate(urls, 1))
    return figures


def run(
    proxy: str, seeds: str, args: argparse.Namespace, tmp: str, articles: int = 0
) -> dict[str, list[dict[str, float]]]:
    """Every mode, alternating, *args.repeats* times."""
    runs: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    for repeat in range(args.repeats):
        for mode in MODES:
            figures = crawl(proxy, seeds, args.pages, mode, Path(tmp) / f"{mode}-{repeat}", args.polite, articles)
            runs[mode].append(figures)
            print(mode, repeat + 1, json.dumps({k: round(v, 1) for k, v in figures.items()}), flush=True)
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/docsweb")
    parser.add_argument(
        "--script-site", action="store_true", help="a site whose scripts fetch their content after load"
    )
    parser.add_argument("--articles", type=int, default=12, help="the script site's articles")
    parser.add_argument("--pages", type=int, default=150)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--polite", action="store_true", help="the project's politeness, not the replay's speed")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if args.script_site:
            warc = script_site.write(Path(tmp) / "script-site.warc.gz", args.articles)
            with ReplayProcess(str(warc)) as replay:
                runs = run(replay.proxy_url, f"{script_site.HOST}/", args, tmp, args.articles)
            name = "script-site"
        else:
            name = args.corpus.resolve().name
            with ReplayProcess(str(sorted(args.corpus.glob("*.warc.gz"))[0])) as replay:
                runs = run(replay.proxy_url, SEEDS[name], args, tmp)
    pace = "1 request per host, 1 s apart, 16 in flight" if args.polite else "no delay, 8 per host, 16 in flight"

    def med(mode: str, figure: str) -> float:
        return statistics.median(run[figure] for run in runs[mode])

    def each(mode: str, figure: str = "pages_per_second", form: str = ".1f") -> str:
        return ", ".join(f"{run[figure]:{form}}" for run in runs[mode])

    rows = "\n".join(
        f"| {mode} | {med(mode, 'pages'):.0f} | {med(mode, 'rendered'):.0f} | {med(mode, 'pages_per_second'):.1f} "
        f"({each(mode)}) | {med(mode, 'ms_per_page'):.0f} | {med(mode, 'peak_mb'):.0f} |"
        + (f" {each(mode, 'reached', '.0f')} | {each(mode, 'with_text', '.0f')} |" if args.script_site else "")
        for mode in MODES
    )
    ratio = med("always", "pages_per_second") / med("never", "pages_per_second")
    polite = " --polite" if args.polite else ""
    if args.script_site:
        command = f"--script-site --articles {args.articles} --repeats {args.repeats}{polite}"
        what = (
            f"a breadth-first crawl of a {args.articles}-article site whose pages are shells that fetch their links "
            "and "
            f"text as JSON {script_site.DELAY_MS} ms after load (`crawlproject.replay.script_site`), replayed ({pace})"
        )
        extra_head, extra_rule = " articles reached (each run) | with their text (each run) |", "---|---|"
    else:
        command = f"--corpus ../shared/corpora/{name} --pages {args.pages} --repeats {args.repeats}{polite}"
        what = f"a breadth-first crawl of {args.pages} pages of the replay ({pace})"
        extra_head = extra_rule = ""
    body = (
        f"### Rendering: what the browser costs on {name}{', politely' if args.polite else ''}\n\n"
        f"Command: `.venv/bin/python -m bench.render {command}` — {what}, plainly, every page by the browser "
        f"(`FOCUS_RENDER=always`, scrapy-playwright driving Debian's chromium) and with `auto`, alternating, "
        f"{args.repeats} times; medians (each run in brackets). Peak memory: the crawl and every process it started "
        "(the browser's), sampled every 0.2 s.\n\n"
        f"| FOCUS_RENDER | pages | rendered | pages/s | ms/page (wall) | peak MB |{extra_head}\n"
        f"|---|---:|---:|---|---:|---:|{extra_rule}\n"
        f"{rows}\n\n"
        + ("A plain crawl reaches the front page only: its pages/s is the crawl's start-up, no figure to divide by.\n"
           if args.script_site else f"Rendered ÷ plain pages/s, same run: **{ratio:.2f}**.\n")
    )
    if args.script_site:
        every = all(r["reached"] == r["with_text"] == args.articles for mode in ("always", "auto") for r in runs[mode])
        figure = (f"script site{' politely' if args.polite else ''}: every article with its text in "
                  f"{'every' if every else 'NOT every'} run of always and auto ({args.repeats} each); "
                  f"{med('always', 'pages_per_second'):.2f} / {med('auto', 'pages_per_second'):.2f} pages/s "
                  f"(plain {med('never', 'pages_per_second'):.2f}, 0 articles), peak {med('always', 'peak_mb'):.0f} / "
                  f"{med('auto', 'peak_mb'):.0f} MB")
        target = "issue 59: every article with its text in every run; pages/s and memory"
    else:
        figure = (
            f"{name}{' politely' if args.polite else ''}: rendering every page {med('always', 'pages_per_second'):.1f} "
            f"pages/s against {med('never', 'pages_per_second'):.1f} plain ({ratio:.2f}×), peak "
            f"{med('always', 'peak_mb'):.0f} MB against {med('never', 'peak_mb'):.0f}; auto rendered "
            f"{med('auto', 'rendered'):.0f} of {med('auto', 'pages'):.0f}"
        )
        target = "issue 52: pages/s and memory with rendering"
    if not args.no_write:
        write_section(f"render-{name}{'-polite' if args.polite else ''}", body, figure, target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
