"""Long crawls of a big web on one machine: does the cost per page stay flat?

    .venv/bin/python -m bench.long_crawl [--pages 200000] [--web-pages 1000000] [--spiders bestfirst,linklearner:50000]

The replay serves a synthetic web (crawlproject/replay/synthetic.py,
docs/synthetic-web.md) of --web-pages pages on thousands of hosts, its text
recombined from paragraphs of the bundled corpora. Each spider crawls
--pages pages (or the pages given as ``spider:pages``) of it from the home
pages of its four biggest sites, with the
project's defaults — the frontier bounded at FOCUS_FRONTIER_MAX, the seen
set exact up to FOCUS_SEEN_EXACT_MAX, near-duplicates and sitemaps on — and
a JOBDIR, so a stopped benchmark resumes (run the same command again).

While a crawl runs the benchmark reads the crawl process's RSS every two
seconds; afterwards it cuts the crawl's history into windows of 10,000
pages and reports pages/s in each (from the pages' fetch times), the last
window's rate against the first, and the RSS at each quarter of the crawl.
The figures are one crawl per spider (a 200,000-page crawl takes tens of
minutes): the windows within it are what is compared. No quality figure
comes from this web (docs/synthetic-web.md says why).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import psutil

from bench.common import ROOT, median, write_section
from crawlproject.corpus.paragraphs import paragraph_file
from crawlproject.replay import LOOPBACK_SPEED
from crawlproject.replay.process import ReplayProcess

WINDOW = 10_000
RESULTS = ROOT / "bench" / "results" / "long-crawl"
QUERY = "function reference manual example"
CORPORA = [ROOT.parent / "shared/corpora/webkb", ROOT.parent / "shared/corpora/phpdoc-evolving"]


def sample_rss(pid: int, history: Path, done: threading.Event, out: list[tuple[float, int, int, float]]) -> None:
    """(seconds, RSS bytes, pages, CPU seconds) every two seconds while the crawl runs."""
    started = time.monotonic()
    try:
        process = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    pages, offset = 0, 0
    while not done.wait(2.0):
        try:
            rss = process.memory_info().rss
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            return
        if rss == 0 or process.status() == psutil.STATUS_ZOMBIE:  # it has ended
            return
        if history.exists():
            with history.open("rb") as f:
                f.seek(offset)
                chunk = f.read()
            pages += chunk.count(b"\n")
            offset += len(chunk)
        out.append((time.monotonic() - started, rss, pages, times.user + times.system))


def prepare_folder(folder: Path) -> bool:
    """A spider's work folder for a new run: a crawl stopped midway is kept
    (its JOBDIR resumes it); a finished one is cleared — resumed, it would
    append a new crawl to the old history and measure both. True if kept."""
    if (folder / "crawl" / "summary.json").exists():
        print(f"  {folder}: a finished crawl of an earlier run, made anew", flush=True)
        shutil.rmtree(folder)
    resumed = (folder / "job").exists()
    folder.mkdir(parents=True, exist_ok=True)
    return resumed


def crawl(spider: str, proxy: str, seeds: list[str], pages: int, folder: Path) -> dict[str, Any]:
    if prepare_folder(folder):
        print(f"  {folder}: resuming the crawl stopped there", flush=True)
    settings = {
        **LOOPBACK_SPEED, "FOCUS_REPLAY_PROXY": proxy, "FOCUS_OUTPUT_DIR": str(folder / "crawl"),
        "CLOSESPIDER_ITEMCOUNT": str(pages), "LOG_LEVEL": "INFO", "LOG_FILE": str(folder / "crawl.log"),
        "FOCUS_STORE_PAGES": "false", "JOBDIR": str(folder / "job"), "CONCURRENT_REQUESTS": "16",
    }
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        spider,
        "-a",
        f"seeds={','.join(seeds)}",
        "-a",
        f"query={QUERY}",
    ]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    samples: list[tuple[float, int, int, float]] = []
    done = threading.Event()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # noqa: S603
    sampler = threading.Thread(
        target=sample_rss, args=(process.pid, folder / "crawl" / "history.jsonl", done, samples), daemon=True
    )
    sampler.start()
    _, err = process.communicate()
    done.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{spider} crawl failed ({process.returncode}): {err.decode(errors='replace')[-2000:]}")
    (folder / "rss.json").write_text(json.dumps(samples), encoding="utf-8")
    return analyse(spider, folder, samples)


def cpu_per_page(samples: list[tuple[float, int, int, float]], first: int, last: int) -> float:
    """CPU milliseconds per page between the samples nearest pages *first* and *last*."""
    start = min(samples, key=lambda sample: abs(sample[2] - first))
    end = min(samples, key=lambda sample: abs(sample[2] - last))
    return 1000 * (end[3] - start[3]) / max(1, end[2] - start[2])


def analyse(spider: str, folder: Path, samples: list[tuple[float, int, int, float]]) -> dict[str, Any]:
    times = []
    with (folder / "crawl" / "history.jsonl").open(encoding="utf-8") as f:
        for line in f:
            times.append(datetime.fromisoformat(json.loads(line)["fetched_at"]).timestamp())
    times.sort()
    windows = []
    for start in range(0, len(times) - WINDOW + 1, WINDOW):
        seconds = times[start + WINDOW - 1] - times[start]
        windows.append(WINDOW / seconds if seconds > 0 else float("nan"))
    cpu = [cpu_per_page(samples, start, start + WINDOW) for start in range(0, len(times) - WINDOW + 1, WINDOW)]
    summary = json.loads((folder / "crawl" / "summary.json").read_text(encoding="utf-8"))
    quarters = []
    for share in (0.25, 0.5, 0.75, 1.0):
        at = [sample[1] for sample in samples if sample[2] >= share * len(times) * 0.98]
        quarters.append(at[0] / 2**20 if at else float("nan"))
    return {
        "spider": spider, "pages": len(times), "windows": windows, "cpu_ms": cpu, "samples": samples,
        "ratio": windows[-1] / windows[0] if len(windows) >= 2 else float("nan"),
        # a window without CPU samples (a resumed crawl's earlier pages) has none to compare
        "cpu_ratio": cpu[-1] / cpu[0] if len(cpu) >= 2 and cpu[0] > 0 else math.nan,
        "rss_quarters_mb": quarters, "rss_max_mb": max(sample[1] for sample in samples) / 2**20 if samples else 0,
        "summary": {k: summary.get(k) for k in ("pages_fetched", "pages_ok", "elapsed_seconds", "pages_per_second",
                                                "finish_reason", "near_duplicates", "sitemaps")},
        "seen_log": [line for line in (folder / "crawl.log").read_text(encoding="utf-8").splitlines()
                     if "Bloom filter" in line][:2],
    }


def plot(results: list[dict[str, Any]], folder: Path, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (rate, cost, memory) = plt.subplots(1, 3, figsize=(15, 4))
    for result in results:
        xs = [(i + 1) * WINDOW / 1000 for i in range(len(result["windows"]))]
        rate.plot(xs, result["windows"], marker="o", label=result["spider"])
        cost.plot(xs, result["cpu_ms"], marker="o", label=result["spider"])
        samples = result.get("samples") or json.loads(
            (folder / result["spider"] / "rss.json").read_text(encoding="utf-8")
        )
        memory.plot([s[2] / 1000 for s in samples], [s[1] / 2**20 for s in samples], label=result["spider"])
    rate.set(xlabel="pages fetched (thousands)", ylabel="pages/s in the 10,000-page window", title="Throughput")
    cost.set(xlabel="pages fetched (thousands)", ylabel="crawl process CPU ms per page", title="CPU per page")
    memory.set(xlabel="pages fetched (thousands)", ylabel="RSS (MiB)", title="Crawl process memory")
    for axis in (rate, cost, memory):
        axis.grid(alpha=0.3)
        axis.legend()
        axis.set_ylim(bottom=0)
    figure.tight_layout()
    figure.savefig(out, dpi=110)


def main() -> int:
    global WINDOW  # noqa: PLW0603 (a smoke run uses smaller windows)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200_000)
    parser.add_argument("--web-pages", type=int, default=1_000_000)
    parser.add_argument("--web-seed", type=int, default=1)
    parser.add_argument("--spiders", default="bestfirst,linklearner:50000",
                        help="spiders to run, each with its own page budget as spider:pages if given")
    parser.add_argument("--work", type=Path, default=ROOT / ".cache" / "bench" / "long-crawl",
                        help="crawl folders and JOBDIRs (kept: the same command resumes)")
    parser.add_argument("--window", type=int, default=WINDOW, help="pages per window of the figures")
    parser.add_argument("--report", action="store_true",
                        help="only write the section from the spiders' results recorded so far")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    WINDOW = args.window
    RESULTS.mkdir(parents=True, exist_ok=True)
    if not args.report:
        paragraphs = paragraph_file([c for c in CORPORA if c.is_dir()], ROOT / ".cache")
        synthetic = {"pages": args.web_pages, "seed": args.web_seed, "paragraphs": str(paragraphs)}
        with ReplayProcess("", synthetic=synthetic) as replay:
            described = replay.synthetic()
            seeds = list(described["seeds"])  # type: ignore[call-overload]
            print(f"synthetic web: {described['pages']:,} pages on {described['hosts']:,} hosts "
                  f"({described['host_kinds']})", flush=True)
            for given in args.spiders.split(","):
                spider, _, budget = given.partition(":")
                started = time.monotonic()
                result = crawl(spider, replay.proxy_url, seeds, int(budget or args.pages), args.work / spider)
                result["wall_seconds"] = time.monotonic() - started
                result["web"] = described
                result["command"] = (f"--pages {args.pages} --web-pages {args.web_pages} --spiders {given}")
                (RESULTS / f"{spider}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
                rates = ", ".join(f"{r:.0f}" for r in result["windows"])
                print(f"{spider}: {result['pages']:,} pages; pages/s per {WINDOW:,}: {rates}; last/first "
                      f"{result['ratio']:.2f}; RSS at ¼ ½ ¾ end: "
                      f"{', '.join(f'{q:.0f}' for q in result['rss_quarters_mb'])} MiB", flush=True)
    results = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(RESULTS.glob("*.json"))
               if path.name != "long-crawl.json"]
    if not results:
        raise SystemExit(f"no long crawl recorded in {RESULTS}")
    plot(results, args.work, RESULTS / "long-crawl.png")
    if not args.no_write:
        write_section("long-crawl", report(results))
    return 0


def report(results: list[dict[str, Any]]) -> str:
    described = results[0]["web"]
    rows = []
    for r in results:
        quarters = " / ".join(f"{q:.0f}" for q in r["rss_quarters_mb"])
        rows.append(
            f"| {r['spider']} | {r['pages']:,} | {r['windows'][0]:.0f} | {median(r['windows']):.0f} | "
            f"{r['windows'][-1]:.0f} | **{r['ratio']:.2f}** | {r['cpu_ms'][0]:.1f} → {r['cpu_ms'][-1]:.1f} "
            f"(**{r['cpu_ratio']:.2f}**) | {quarters} | {r['rss_max_mb']:.0f} | {r['wall_seconds'] / 60:.0f} min |"
        )
    notes = []
    for r in results:
        s = r["summary"]
        notes.append(
            f"- {r['spider']}: {s['pages_ok']:,} pages answered 200 of {s['pages_fetched']:,}; near-copies "
            f"{(s.get('near_duplicates') or {}).get('pages', 0):,}; sitemap URLs "
            f"{(s.get('sitemaps') or {}).get('urls', 0):,}; finish: {s['finish_reason']}."
            + (f" Seen set: “{r['seen_log'][0].split('] ', 1)[-1]}”" if r["seen_log"] else "")
        )
    kinds = ", ".join(f"{v:,} {k}" for k, v in described["host_kinds"].items())
    commands = "; ".join(f"`.venv/bin/python -m bench.long_crawl {r['command']}`" for r in results)
    return (
        f"{commands} (then `--report`) — one crawl per spider of the synthetic web "
        f"({described['pages']:,} pages on {described['hosts']:,} hosts: {kinds}; docs/synthetic-web.md), "
        f"from its four biggest sites' home pages, query “{QUERY}”, the project's defaults "
        f"(frontier bound {100_000:,}, seen set exact to 1,000,000, near-duplicates and sitemaps on), "
        f"loopback speed (no delay, 16 requests at once), a JOBDIR. Pages/s per window of {WINDOW:,} pages "
        f"from the pages' fetch times; the crawl process's RSS and CPU time read every 2 s (CPU per page is "
        "what other load on the machine does not change; pages/s is).\n\n"
        "| spider | pages | first window (pages/s) | median window | last window | last ÷ first | "
        "CPU ms per page, first → last window (ratio) | RSS at ¼ / ½ / ¾ / end (MiB) | RSS max (MiB) | wall time |\n"
        "|---|---:|---:|---:|---:|---:|---|---|---:|---:|\n" + "\n".join(rows) + "\n\n" + "\n".join(notes) +
        "\n\n![pages/s and RSS over the long crawls](../long-crawl/long-crawl.png)\n"
    )


if __name__ == "__main__":
    raise SystemExit(main())
