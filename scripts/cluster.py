"""A distributed crawl the way a user runs one: a Redis, a Scrapyd, the
project deployed with ``scrapyd-deploy``, and N crawl jobs scheduled through
Scrapyd's HTTP API that share one best-first frontier (and each host's
politeness) in Redis. Prints each worker's progress while they run, and at
the end the pages each fetched, the union's harvest rate (with labels) and
pages fetched twice (none, by design).

    .venv/bin/python -m scripts.cluster --workers 3 --pages 600
    .venv/bin/python -m scripts.cluster --redis-url redis://10.0.0.5:6379 --scrapyd-url http://10.0.0.6:6800 ...

By default it starts everything itself on loopback (redis-server from
Debian, Scrapyd from the venv, the replay of ``--corpus``) and stops it at
the end; ``--redis-url`` / ``--scrapyd-url`` / ``--proxy`` use servers
already running instead (machines of yours: each Scrapyd runs workers).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench.common import ROOT
from bench.corpora import WEBKB_DEPARTMENT_HOMES
from bench.servers import RedisServer, ScrapydServer
from crawlproject.corpus.labels import is_relevant, load_labels, parse_categories
from crawlproject.replay import LOOPBACK_SPEED
from crawlproject.replay.process import ReplayProcess

PROJECT = "crawlproject"


class Scrapyd:
    """The few calls of Scrapyd's JSON API a cluster needs."""

    def __init__(self, url: str):
        self.url = url.rstrip("/")

    def call(self, path: str, data: list[tuple[str, str]] | None = None) -> Any:
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        with urllib.request.urlopen(f"{self.url}/{path}", data=body, timeout=30) as answer:  # noqa: S310
            text = answer.read().decode()
        return json.loads(text) if ".json" in path else text

    def schedule(self, spider: str, arguments: dict[str, str], settings: dict[str, Any]) -> str:
        data = [("project", PROJECT), ("spider", spider), *arguments.items()]
        data += [("setting", f"{name}={value}") for name, value in settings.items()]
        answer = self.call("schedule.json", data)
        if answer.get("status") != "ok":
            raise SystemExit(f"cluster: error: Scrapyd refused the job: {answer.get('message', answer)}")
        return str(answer["jobid"])

    def finished(self) -> set[str]:
        return {job["id"] for job in self.call(f"listjobs.json?project={PROJECT}")["finished"]}


def deploy(scrapyd_url: str) -> None:
    """``scrapyd-deploy`` builds the project's egg and uploads it."""
    print(f"=== scrapyd-deploy to {scrapyd_url}", flush=True)
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "scrapyd_client.deploy", "env", "-p", PROJECT],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "SCRAPYD_URL": scrapyd_url}, check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"cluster: error: scrapyd-deploy failed:\n{done.stderr[-2000:]}")


def history(folder: Path) -> list[dict[str, Any]]:
    path = folder / "history.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--pages", type=int, default=600, help="pages for all workers together")
    parser.add_argument("--spider", default="bestfirst")
    parser.add_argument("--query", default="course syllabus lecture homework")
    parser.add_argument("--seeds", default=",".join(WEBKB_DEPARTMENT_HOMES))
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/webkb")
    parser.add_argument("--relevant", default="course", help="labels counted relevant in the summary")
    parser.add_argument("--redis-url", help="a Redis already running (else one is started)")
    parser.add_argument("--scrapyd-url", help="a Scrapyd already running (else one is started)")
    parser.add_argument("--proxy", help="a replay already running (else one of --corpus is started)")
    parser.add_argument("--folder", type=Path, default=ROOT / "crawls" / "cluster", help="outputs and Scrapyd files")
    parser.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE", help="more Scrapy settings")
    args = parser.parse_args()
    if args.workers < 1 or args.pages < args.workers:
        parser.error("--workers must be ≥ 1 and --pages ≥ --workers")
    args.folder = args.folder.resolve()
    args.folder.mkdir(parents=True, exist_ok=True)
    key = f"cluster-{int(time.time())}:frontier"
    with ExitStack() as servers:
        redis_url = args.redis_url or servers.enter_context(RedisServer()).url
        scrapyd_url = args.scrapyd_url or servers.enter_context(
            ScrapydServer(args.folder / "scrapyd", max_proc=args.workers)).url
        proxy = (
            args.proxy or servers.enter_context(ReplayProcess(str(args.corpus.resolve() / "webkb.warc.gz"))).proxy_url
        )
        print(f"=== Redis {redis_url}, Scrapyd {scrapyd_url}, replay {proxy}", flush=True)
        deploy(scrapyd_url)
        scrapyd = Scrapyd(scrapyd_url)
        settings: dict[str, Any] = {
            "FOCUS_FRONTIER_BACKEND": "crawlproject.distributed.frontier.RedisFrontier",
            "REDIS_URL": redis_url, "FOCUS_REDIS_KEY": key, "FOCUS_SHARED_POLITENESS": True,
            "FOCUS_REPLAY_PROXY": proxy,
            "FOCUS_OUTPUT_DIR": str(args.folder / "%(name)s-%(job)s"), "LOGSTATS_INTERVAL": 5,
            **LOOPBACK_SPEED,
        }
        for assignment in args.set:
            name, _, value = assignment.partition("=")
            settings[name] = value
        arguments = {"query": args.query, "seeds": args.seeds}
        # Each worker's share of the pages, exactly (a page budget counts the fetches in flight, an item
        # count does not: the workers went past --pages by the requests they had out when they stopped).
        shares = [args.pages // args.workers + (worker < args.pages % args.workers) for worker in range(args.workers)]
        jobs = [scrapyd.schedule(args.spider, arguments, {"CLOSESPIDER_PAGECOUNT": share, **settings})
                for share in shares]
        print(f"=== {args.workers} workers scheduled on frontier {key}: {', '.join(jobs)}", flush=True)
        folders = {job: args.folder / f"{args.spider}-{job}" for job in jobs}
        started, last = time.monotonic(), ""
        while not set(jobs) <= scrapyd.finished():
            line = " | ".join(f"worker {i + 1}: {len(history(folders[job]))} pages" for i, job in enumerate(jobs))
            if line != last:
                print(f"  {time.monotonic() - started:5.0f}s  {line}", flush=True)
                last = line
            time.sleep(1)
    records = {job: history(folder) for job, folder in folders.items()}
    union = [r for rows in records.values() for r in rows]
    keys = [r["canonical_url"] for r in union]
    print(f"\n=== Cluster summary ({time.monotonic() - started:.0f}s)")
    for i, job in enumerate(jobs):
        print(f"worker {i + 1} (job {job}): {len(records[job])} pages, output {folders[job]}")
    print(f"together: {len(union)} pages, {len(keys) - len(set(keys))} fetched twice")
    labels_path = args.corpus / "labels.tsv"
    if labels_path.exists() and args.relevant:
        labels, relevant = load_labels(labels_path), parse_categories(args.relevant)
        ok = [r for r in union if r.get("status") == 200]
        hits = sum(is_relevant(labels.get(r["canonical_url"]), relevant) for r in ok)
        print(f"harvest rate ({args.relevant}): {hits / max(1, len(ok)):.1%} ({hits}/{len(ok)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
