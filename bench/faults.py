"""Faults an operator meets, injected for real (issue 51): a shared Redis
frontier's server killed and restarted, with and without persistence; a
worker SIGKILLed; a JOBDIR crawl SIGKILLed again and again with its frontier
spilling to disk; the same JOBDIR crawl started twice (the second refuses),
the first SIGKILLed, started again.

    .venv/bin/python -m bench.faults [--kills 20] [--budget 800] [--seed 1]

Counted for each: URLs lost (queued before the fault, then neither fetched
nor queued at the end), pages fetched twice (the replay's access log: every
request it answered) beyond those in flight at the fault (leased, not
acknowledged — the only ones the design fetches again), and for the JOBDIR
crawl the page budget kept across resumes, spill stores left behind and
pages the history records twice. Without persistence the restarted Redis is
empty: the workers must stop with the error, fetching nothing from the
wiped frontier (what lands after the restart was in flight at it).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import redis

from bench.common import ROOT, write_section
from bench.corpora import WEBKB_DEPARTMENT_HOMES
from bench.servers import RedisServer
from crawlproject.distributed.frontier import RedisFrontier
from crawlproject.frontier.inspect import FrontierState
from crawlproject.replay import LOOPBACK_SPEED
from crawlproject.replay.process import ReplayProcess
from crawlproject.web.urls import canonicalize

QUERY = "course syllabus lecture homework"
WORKERS = 2
IN_FLIGHT = 4  # CONCURRENT_REQUESTS of a worker
REDIS_DOWN_SECONDS = 5.0  # how long the Redis server stays dead: the fault's length
ERROR_LINES: list[str] = []  # what the workers said, for the report


def crawl_command(proxy: str, folder: Path, **settings: Any) -> list[str]:
    merged = {"FOCUS_REPLAY_PROXY": proxy, "FOCUS_OUTPUT_DIR": str(folder), "LOG_FILE": str(folder.with_suffix(".log")),
              "FOCUS_STORE_PAGES": False, "LOGSTATS_INTERVAL": 0, **settings}
    command = [sys.executable, "-m", "scrapy", "crawl", "bestfirst", "-a", f"seeds={','.join(WEBKB_DEPARTMENT_HOMES)}",
               "-a", f"query={QUERY}"]
    for name, value in merged.items():
        command += ["-s", f"{name}={value}"]
    return command


def start(command: list[str], stderr: Path | None = None) -> subprocess.Popen[bytes]:
    with stderr.open("wb") if stderr else open(os.devnull, "wb") as err:  # the child keeps its own copy
        return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)  # noqa: S603


def history(folder: Path) -> list[dict[str, Any]]:
    path = folder / "history.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def lines(*folders: Path) -> int:
    return sum(
        (folder / "history.jsonl").read_bytes().count(b"\n")
        for folder in folders
        if (folder / "history.jsonl").exists()
    )


def wait_until(condition: Any, processes: list[subprocess.Popen[bytes]], seconds: float = 600) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if any(process.poll() is not None for process in processes):
            raise RuntimeError("a crawl ended before the fault")
        if time.monotonic() > deadline:
            raise RuntimeError("the crawl did not get that far")
        time.sleep(0.02)


def served(access_log: Path, before: float = float("inf")) -> Counter[str]:
    """How often the replay answered each page (its canonical URL; robots.txt
    aside) for requests that arrived before *before* (time.time())."""
    rows = [line.split("\t") for line in access_log.read_text().splitlines()]
    return Counter(
        canonicalize(url) for arrived, _, url, _ in rows if float(arrived) < before and not url.endswith("/robots.txt")
    )


def fetched_twice(access_log: Path) -> set[str]:
    return {key for key, times in served(access_log).items() if times > 1}


def recorded(folders: list[Path]) -> set[str]:
    """The canonical URL of every page the crawls recorded."""
    return {record["canonical_url"] for folder in folders for record in history(folder)}


def worker_settings(redis_url: str, key: str, budget: int) -> dict[str, Any]:
    return {
        **LOOPBACK_SPEED,
        "REDIS_URL": redis_url,
        "FOCUS_REDIS_KEY": key,
        "FOCUS_FRONTIER_BACKEND": "crawlproject.distributed.frontier.RedisFrontier",
        "DOWNLOAD_DELAY": 0.05,
        "CONCURRENT_REQUESTS": IN_FLIGHT,
        "CLOSESPIDER_ITEMCOUNT": budget,
        "FOCUS_REDIS_LEASE_SECONDS": 5,
    }


def redis_restart(base: Path, persistent: bool, budget: int, after: int) -> dict[str, Any]:
    """Two workers; the Redis server SIGKILLed once they recorded *after*
    pages, restarted on the same port and folder 5 s later."""
    name = "persistent" if persistent else "volatile"
    access = base / f"redis-{name}.access"
    first = RedisServer(persistent=persistent)
    key = f"faults:{name}"
    folders = [base / f"redis-{name}-w{i}" for i in range(WORKERS)]
    with ReplayProcess(str(ROOT.parent / "shared/corpora/webkb/webkb.warc.gz"), access_log=str(access)) as replay:
        workers = [
            start(
                crawl_command(replay.proxy_url, folder, **worker_settings(first.url, key, budget)),
                folder.with_suffix(".stderr"),
            )
            for folder in folders
        ]
        wait_until(lambda: lines(*folders) >= after, workers)
        frontier = RedisFrontier(redis.Redis.from_url(first.url), key, 1)
        queued, leased = frontier.queued_keys(), frontier.leased_keys()
        first.process.kill()
        first.process.wait()
        at_restart = {record["canonical_url"] for folder in folders for record in history(folder)}
        time.sleep(REDIS_DOWN_SECONDS)  # the fault's length, not a synchronisation
        with RedisServer(port=first.port, folder=first.folder, persistent=persistent) as second:
            codes = [process.wait(timeout=1800) for process in workers]
            final = RedisFrontier(redis.Redis.from_url(second.url), key, 1)
            still = final.queued_keys() | final.leased_keys()
            final.clear()
    first.stop()
    pages = recorded(folders)
    twice = fetched_twice(access)
    said = [
        line
        for folder in folders
        for line in folder.with_suffix(".stderr").read_text().splitlines()
        if "error:" in line
    ]
    if said:
        ERROR_LINES.append(said[0])
    return {
        "exit codes": codes,
        "queued at the kill": len(queued | leased),
        "lost": len({key for key in queued | leased if key not in pages and key not in still}) if persistent
        else "all: the restart wiped them",
        "fetched twice": len(twice),
        "fetched twice beyond those in flight": len(twice - leased),
        "pages recorded after the restart, not in flight at the kill": len(set(pages) - at_restart - leased),
        "workers that stopped with an error line": len(said),
    }


def worker_kill(base: Path, budget: int, after: int) -> dict[str, Any]:
    """Two workers on a persistent Redis; one SIGKILLed once it recorded
    *after* pages; the other goes on to its budget."""
    access = base / "worker.access"
    key = "faults:worker"
    doomed, survivor = base / "worker-doomed", base / "worker-survivor"
    with RedisServer(persistent=True) as server, \
            ReplayProcess(str(ROOT.parent / "shared/corpora/webkb/webkb.warc.gz"), access_log=str(access)) as replay:
        settings = worker_settings(server.url, key, budget)
        processes = [start(crawl_command(replay.proxy_url, folder, **settings)) for folder in (doomed, survivor)]
        wait_until(lambda: lines(doomed) >= after, processes)
        frontier = RedisFrontier(redis.Redis.from_url(server.url), key, 1)
        queued, leased = frontier.queued_keys(), frontier.leased_keys()
        os.kill(processes[0].pid, signal.SIGKILL)
        processes[0].wait()
        code = processes[1].wait(timeout=1800)
        still = frontier.queued_keys() | frontier.leased_keys()
        frontier.clear()
    pages = recorded([doomed, survivor])
    twice = fetched_twice(access)
    return {
        "survivor's exit code": code,
        "queued at the kill": len(queued | leased),
        "lost": len({key for key in queued | leased if key not in pages and key not in still}),
        "fetched twice": len(twice),
        "fetched twice beyond those in flight": len(twice - leased),
    }


def jobdir_kills(base: Path, budget: int, kills: list[int], spill_above: int) -> dict[str, Any]:
    """A JOBDIR crawl of a *budget* pages (CLOSESPIDER_PAGECOUNT: the crawl's,
    across resumes) SIGKILLed when its history reaches each of *kills* pages
    and resumed with the same command; past *spill_above* queued URLs the
    frontier spills to the JOBDIR."""
    folder, jobdir, access = base / "jobdir", base / "jobdir-job", base / "jobdir.access"
    settings = {**LOOPBACK_SPEED, "JOBDIR": jobdir, "CLOSESPIDER_PAGECOUNT": budget, "CONCURRENT_REQUESTS": 16,
                "FOCUS_FRONTIER_MAX": spill_above, "LOG_LEVEL": "WARNING"}
    queued_before: set[str] = set()
    at_kills: list[tuple[float, set[str]]] = []  # (when, queued after it)
    orphans_at_kills = 0
    with ReplayProcess(str(ROOT.parent / "shared/corpora/webkb/webkb.warc.gz"), access_log=str(access)) as replay:
        command = crawl_command(replay.proxy_url, folder, **settings)
        for point in kills:
            process = start(command)
            wait_until(lambda point=point: lines(folder) >= point, [process])  # type: ignore[misc]
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            state = FrontierState(jobdir)
            queued_before |= state.queued
            at_kills.append((time.time(), state.queued))
            orphans_at_kills += len(list(jobdir.glob("frontier-spill-*")))
        completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)  # noqa: S603
        if completed.returncode:
            raise RuntimeError(completed.stderr[-2000:])
    final = FrontierState(jobdir)
    records = history(folder)
    pages = [record["canonical_url"] for record in records]
    twice = fetched_twice(access)
    # in flight at a kill: requested before it, yet still queued (not acknowledged) after it
    in_flight = set().union(*(set(served(access, before=when)) & queued for when, queued in at_kills))
    return {
        "kills": len(kills),
        "pages answered (budget)": f"{sum(record['status'] is not None for record in records)} ({budget})",
        "queued at some kill": len(queued_before),
        "lost": len(
            {
                key
                for key in queued_before
                if key not in set(pages) and key not in final.queued and not final.fetched(key)
            }
        ),
        "fetched twice": len(twice),
        "fetched twice beyond those in flight": len(twice - in_flight),
        "pages the history records twice": len(pages) - len(set(pages)),
        "spill stores the kills left": orphans_at_kills,
        "spill stores left at the end": len(list(jobdir.glob("frontier-spill-*"))),
    }


def overlap(base: Path, budget: int, after: int) -> dict[str, Any]:
    """The same JOBDIR crawl started twice (a cron job that overlapped the
    last one): the second start while the first runs (the first held still
    meanwhile, so every byte that changes is the second's), then the first
    SIGKILLed and the command started once more."""
    import hashlib

    folder, jobdir, access = base / "overlap", base / "overlap-job", base / "overlap.access"
    settings = {**LOOPBACK_SPEED, "JOBDIR": jobdir, "CLOSESPIDER_PAGECOUNT": budget, "CONCURRENT_REQUESTS": 4,
                "DOWNLOAD_DELAY": 0.05, "CONCURRENT_REQUESTS_PER_DOMAIN": 1, "LOG_LEVEL": "INFO"}

    def files() -> dict[str, str]:
        return {str(path): hashlib.sha256(path.read_bytes()).hexdigest()
                for root in (folder, jobdir) for path in sorted(root.rglob("*")) if path.is_file()}

    with ReplayProcess(str(ROOT.parent / "shared/corpora/webkb/webkb.warc.gz"), access_log=str(access)) as replay:
        command = crawl_command(replay.proxy_url, folder, **settings)
        first = start(command)
        wait_until(lambda: lines(folder) >= after, [first])
        os.kill(first.pid, signal.SIGSTOP)
        before, began = files(), time.monotonic()
        second = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)  # noqa: S603
        refused_in, changed = time.monotonic() - began, sum(a != b for a, b in zip(before.items(), files().items()))
        os.kill(first.pid, signal.SIGCONT)
        at_kill = lines(folder)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        killed_at, in_flight = time.time(), FrontierState(jobdir).queued
        third = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)  # noqa: S603
    records = history(folder)
    pages = [record["canonical_url"] for record in records]
    said = [line for line in second.stderr.splitlines() if "error:" in line]
    log = third.stderr + (folder.with_suffix(".log").read_text() if folder.with_suffix(".log").exists() else "")
    return {
        "second start: exit code": second.returncode,
        "second start: seconds to refuse": f"{refused_in:.1f}",
        "second start: files of the first it changed": changed,
        "second start: its line names the first's PID": f"PID {first.pid}" in (said[0] if said else ""),
        "pages when the first was killed": at_kill,
        "third start: exit code": third.returncode,
        "third start: said the lock was left by a killed crawl": f"was left by PID {first.pid}" in log,
        "pages answered (budget)": f"{sum(record['status'] is not None for record in records)} ({budget})",
        "fetched twice beyond those in flight": len(
            fetched_twice(access) - (set(served(access, killed_at)) & in_flight)
        ),
        "pages the history records twice": len(pages) - len(set(pages)),
        "the second start's line": said[0].split("error: ", 1)[-1] if said else "",
    }


def table(title: str, figures: dict[str, Any]) -> str:
    rows = "".join(f"| {name} | {value} |\n" for name, value in figures.items())
    return f"**{title}**\n\n| measure | value |\n|---|---:|\n{rows}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--budget", type=int, default=800, help="pages of the JOBDIR crawl")
    parser.add_argument("--worker-budget", type=int, default=500, help="pages of each Redis worker")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    kills = sorted(random.Random(args.seed).sample(range(20, args.budget - 20), args.kills))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="faults-") as tmp:
        base = Path(tmp)
        results = {
            "Redis killed, restarted 5 s later on its append-only file": redis_restart(
                base, True, args.worker_budget, 100
            ),
            "Redis killed, restarted 5 s later without persistence": redis_restart(
                base, False, args.worker_budget, 100
            ),
            "a worker SIGKILLed (persistent Redis)": worker_kill(base, args.worker_budget, 100),
            f"a JOBDIR crawl SIGKILLed {args.kills} times, spilling": jobdir_kills(base, args.budget, kills, 40),
            "a JOBDIR crawl started twice, the first SIGKILLed, started again": overlap(base, 300, 30),
        }
    for title, figures in results.items():
        print(title, json.dumps(figures), flush=True)
    body = (
        "### Faults: Redis restarts, a killed worker, a JOBDIR crawl killed again and again\n\n"
        f"Command: `.venv/bin/python -m bench.faults --kills {args.kills} --budget {args.budget} "
        f"--worker-budget {args.worker_budget} --seed {args.seed}` ({time.monotonic() - started:.0f} s). "
        f"Best-first crawls of the WebKB replay from the four department home pages. Redis: {WORKERS} workers "
        f"({IN_FLIGHT} requests in flight each, {args.worker_budget} pages each) on one shared frontier; the server "
        f"SIGKILLed once they recorded 100 pages and restarted {REDIS_DOWN_SECONDS:.0f} s later on the same port and "
        "folder, with an append-only file or with none; a worker SIGKILLed at 100 pages, the other going on. "
        f"JOBDIR: CLOSESPIDER_PAGECOUNT={args.budget}, 16 in flight, FOCUS_FRONTIER_MAX=40 (the rest spills into "
        f"the JOBDIR), SIGKILLed when its history reached {', '.join(map(str, kills))} pages, resumed each time "
        "with the same command. Started twice: a JOBDIR crawl of 300 pages (0.05 s per host) started again once its "
        "history held 30 pages, the first held still (SIGSTOP) while the second ran, then SIGKILLed and the command "
        "started a third time. Pages fetched twice: the replay's access log (every request it answered, robots.txt "
        "aside); in flight: leased at the fault, not acknowledged.\n\n"
        + "".join(table(title, figures) for title, figures in results.items())
        + "".join(f"A worker's last line: `{line}`\n" for line in ERROR_LINES[:1])
    )
    aof, volatile, worker, jobdir, twice = results.values()
    figure = (
        f"Redis restarted on its append-only file: {aof['lost']} URLs lost, "
        f"{aof['fetched twice beyond those in flight']} "
        "fetched twice beyond those in flight; without persistence "
        f"{volatile['workers that stopped with an error line']} "
        f"of {WORKERS} workers stop with the error, "
        f"{volatile['pages recorded after the restart, not in flight at the kill']} "
        f"pages from the wiped frontier; a worker SIGKILLed: {worker['lost']} lost; {args.kills} JOBDIR kills while "
        f"spilling: {jobdir['lost']} lost, {jobdir['fetched twice beyond those in flight']} fetched twice beyond those "
        f"in flight, pages {jobdir['pages answered (budget)']}, {jobdir['spill stores left at the end']} spill stores "
        f"left, {jobdir['pages the history records twice']} history rows twice; started twice: the second exits "
        f"{twice['second start: exit code']} in {twice['second start: seconds to refuse']} s having changed "
        f"{twice['second start: files of the first it changed']} of the first's files, the first killed and "
        f"started again: pages {twice['pages answered (budget)']}, {twice['fetched twice beyond those in flight']} "
        "fetched twice beyond those in flight"
    )
    target = ("issue 51: with persistence 0 lost and refetches ≤ those in flight; without, the workers stop with the "
              "error (0 pages from a wiped frontier); 20 kills with spill: 0 lost, 0 orphans, the budget to the page, "
              "no duplicate history rows; issue 78: a second start exits 2 naming the holder and changes no byte, "
              "the next start after a SIGKILL resumes (budget exact, nothing fetched twice beyond those in flight)")
    if not args.no_write:
        write_section("faults", body, figure, target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
