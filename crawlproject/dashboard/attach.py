"""The dashboard of a crawl read back (``scrapy dashboard``): from its output
folder — running or finished: the history is read as it grows — or from the
states the workers of a Redis crawl publish beside the shared frontier.

A label given here is written where the crawl looks for labels (the
folder's or JOBDIR's ``user-labels.tsv``; the Redis hash), so a running
crawl takes it in within seconds."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawlproject.dashboard.labels import FileLabels, RedisLabels
from crawlproject.dashboard.watch import CrawlWatch, histogram
from crawlproject.web.urls import canonicalize

if TYPE_CHECKING:
    from collections.abc import Callable


class FolderBackend:
    """A crawl's output folder: history.jsonl, summary.json, user-labels.tsv."""

    def __init__(self, folder: Path, labels_file: Path, relevant_label: Callable[[str], bool] | None = None):
        self.folder = folder
        self.watch = CrawlWatch(folder.name, relevant_label)
        self.labels = FileLabels(labels_file)
        self._read = 0

    def _follow(self) -> None:
        """Take in the history lines written since the last look."""
        history = self.folder / "history.jsonl"
        if history.is_file() and history.stat().st_size > self._read:
            with history.open("rb") as f:
                f.seek(self._read)
                data = f.read()
            end = data.rfind(b"\n") + 1
            self._read += end
            for line in data[:end].decode("utf-8", "replace").splitlines():
                try:
                    self.watch.page(json.loads(line))
                except (json.JSONDecodeError, TypeError, ValueError):
                    continue  # a torn line of a killed crawl
            self.watch.sample()
        for key, relevant in self.labels.new():
            self.watch.labelled(key, relevant, {"from": "the labels file"})
        summary = self.folder / "summary.json"
        if summary.is_file() and self.watch.finished is None:
            said = json.loads(summary.read_text(encoding="utf-8"))
            self.watch.finished = said.get("finish_reason", "finished")
            if isinstance(said.get("relevant_called"), int):  # the judge's final calls: the crawl's one count
                self.watch.judged_relevant = said["relevant_called"]

    def snapshot(self) -> dict[str, Any]:
        self._follow()
        return self.watch.snapshot({}, [], {"kind": "read back from the crawl's folder"})

    def add_label(self, url: str, relevant: bool) -> dict[str, Any]:
        self._follow()
        key = canonicalize(url)
        if key not in self.watch.fetched_keys:
            raise ValueError(f"the crawl in {self.folder} has not fetched {key} (answered 2xx)")
        if self.watch.finished is not None:
            return self._answer_finished(key, relevant)
        self.labels.add(key, relevant)
        return {"kept": str(self.labels.path), "learnt": "by the running crawl, within seconds (it polls the file)"}

    def _answer_finished(self, key: str, relevant: bool) -> dict[str, Any]:
        """A finished crawl: the answer re-judges its collection now, as
        ``scrapy label`` does (crawlproject.judges.answers)."""
        from crawlproject.judges.answers import give_answers
        from crawlproject.web.text import TermAnalyzer

        judge = give_answers(self.folder, {key: relevant}, TermAnalyzer())
        self.watch.judged_relevant = sum(judge.calls().values())
        return {"kept": str(self.folder / "answers.jsonl"),
                "learnt": f"the finished crawl re-judged: {self.watch.judged_relevant} pages relevant, "
                          f"precision {judge.precision()}"}

    def scraped(self) -> None:
        return None


class RedisBackend:
    """The workers of one Redis crawl, as each last published itself."""

    def __init__(self, client: Any, key: str):
        self.client, self.key = client, key
        self.labels = RedisLabels(client, key)

    def workers(self) -> list[dict[str, Any]]:
        found = self.client.hgetall(f"{self.key}:watch") or {}
        return [json.loads(value) for _, value in sorted(found.items())]

    def snapshot(self) -> dict[str, Any]:
        workers = self.workers()
        merged = merge(workers)
        merged["workers"] = [
            {"worker": w["worker"], "fetched": w["pages"]["fetched"], "finished": w["finished"]} for w in workers
        ]
        return merged

    def add_label(self, url: str, relevant: bool) -> dict[str, Any]:
        from crawlproject.distributed.wire import fingerprint

        key = canonicalize(url)
        if not self.client.sismember(f"{self.key}:fetched", fingerprint(key)):
            raise ValueError(f"no worker of {self.key} has fetched {key}")
        self.labels.add(key, relevant)
        return {"kept": f"{self.key}:labels", "learnt": "by every worker, within seconds"}

    def scraped(self) -> None:
        return None


def merge(states: list[dict[str, Any]]) -> dict[str, Any]:
    """One state for several workers: counts summed, the latest relevant
    pages interleaved, each worker's series summed point by point."""
    if not states:
        return CrawlWatch("no worker yet").snapshot({}, [], {})
    first = states[0]

    def total(path: tuple[str, str]) -> Any:
        values = [s[path[0]][path[1]] for s in states if s[path[0]][path[1]] is not None]
        return sum(values) if values else None

    pages = {name: total(("pages", name)) for name, value in first["pages"].items() if not isinstance(value, str)}
    by = first["pages"].get("harvest_by", "judge")
    relevant = (
        pages["labelled_relevant"]
        if by == "labels" and pages.get("labelled_relevant") is not None
        else pages["judged_relevant"]
    )
    pages["harvest"] = round(relevant / pages["ok"], 4) if pages["ok"] else 0.0
    pages["harvest_by"] = by
    pages["judged_harvest"] = round(pages["judged_relevant"] / pages["ok"], 4) if pages["ok"] else 0.0
    statuses: Counter[str] = Counter()
    refusals: Counter[str] = Counter()
    for s in states:
        statuses.update(s["statuses"])
        refusals.update(s["refusals"])
    length = max(len(s["series"]) for s in states)
    series = []
    for i in range(length):
        rows = [s["series"][min(i, len(s["series"]) - 1)] for s in states if s["series"]]
        series.append([max(r[0] for r in rows), *(sum(r[j] for r in rows) for j in range(1, len(rows[0])))])
    return {
        **first,
        "worker": f"{len(states)} workers",
        "finished": "all finished" if all(s["finished"] for s in states) else None,
        "pages": pages,
        "rates": {k: round(sum(s["rates"][k] for s in states), 2) for k in first["rates"]},
        "statuses": dict(statuses),
        "refusals": dict(refusals),
        "frontier": {**first["frontier"], "scores": first["frontier"]["scores"] or histogram([])},
        "latest_relevant": sorted((p for s in states for p in s["latest_relevant"]),
                                  key=lambda p: -(p.get("order") or 0))[:25],
        "labels": {"relevant": max(s["labels"]["relevant"] for s in states),
                   "irrelevant": max(s["labels"]["irrelevant"] for s in states),
                   "effects": [e for s in states for e in s["labels"]["effects"]][:20]},
        "series": series,
    }
