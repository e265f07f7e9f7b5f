"""What a running crawl shows its user (the dashboard, the metrics): counts
kept as pages arrive, a time series sampled every second, and what the
strategy is learning — all from the crawl's own items, stats and strategy.

The state is a plain dict (:meth:`CrawlWatch.snapshot`), the same for the
dashboard's JSON API, the Prometheus collector, the snapshot a Redis worker
publishes and the one ``scrapy dashboard`` reads back from a crawl folder.
"""

from __future__ import annotations

import math
import time
from collections import Counter, deque
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

#: Stats keys that count URLs a crawl refused, by why (shown as "refusals").
REFUSAL_PREFIXES = ("focus/url_refused/", "focus/refused/")
SAMPLE_LIMIT = 3600  # samples kept; older ones are thinned to every other


class CrawlWatch:
    """Counts and series of one crawl (one worker of a distributed one)."""

    def __init__(self, worker: str, relevant_label: Callable[[str], bool] | None = None, clock: Any = time.time):
        self.worker = worker
        self.clock = clock
        self.started = clock()
        self.relevant_label = relevant_label  # FOCUS_LABELS: the evaluation's relevance, when given
        self.fetched = 0
        self.ok = 0
        self.dead = 0
        self.near_duplicates = 0  # pages that nearly copy one fetched before (policy.near_duplicates)
        self.relevance_sum = 0.0
        self.judged_relevant = 0  # pages the crawl's own judge called relevant (the items' `relevant`)
        self.labelled_relevant = 0  # by FOCUS_LABELS
        self.statuses: Counter[str] = Counter()
        self.hosts: Counter[str] = Counter()
        self.recent_hosts: deque[tuple[float, str]] = deque(maxlen=2000)
        self.latest_relevant: deque[dict[str, Any]] = deque(maxlen=25)
        self.fetched_keys: set[str] = set()  # pages answered 2xx: what a user may label
        self.user_labels: dict[str, bool] = {}
        self.label_effects: deque[dict[str, Any]] = deque(maxlen=20)
        self.series: list[list[float]] = []  # [t, fetched, ok, dead, Σ relevance, judged, labelled, user-relevant]
        self.finished: str | None = None

    # -- what happens ---------------------------------------------------------

    def page(self, item: Mapping[str, Any]) -> None:
        """A PageItem of the crawl."""
        self.fetched += 1
        status = item.get("status")
        self.statuses[str(status) if status is not None else "failed"] += 1
        url = str(item.get("canonical_url") or item.get("url") or "")
        host = urlsplit(url).hostname or ""
        self.hosts[host] += 1
        self.recent_hosts.append((self.clock(), host))
        if status is None or not 200 <= int(status) < 300:
            self.dead += 1
            return
        self.ok += 1
        self.fetched_keys.add(url)
        if item.get("near_duplicate_of"):
            self.near_duplicates += 1
            return  # a copy of a page fetched before brings nothing new
        relevance = item.get("relevance")
        if relevance is not None and math.isfinite(relevance):
            self.relevance_sum += relevance
        # the judge's own call (a calibrated judge's threshold is no fixed 0.5); an item
        # of a spider that does not say: at 0.5
        called = item.get("relevant", relevance is not None and relevance >= 0.5)
        self.judged_relevant += bool(called)
        labelled = self.relevant_label is not None and self.relevant_label(url)
        self.labelled_relevant += labelled
        if called or labelled:
            self.latest_relevant.appendleft({
                "url": url, "fetched_url": item.get("url"), "relevance": relevance, "score": item.get("score"),
                "order": item.get("order"), "labelled": labelled,
            })

    def sample(self) -> None:
        """One point of the time series (every second while the crawl runs)."""
        user = sum(self.user_labels.values())
        self.series.append([round(self.clock() - self.started, 2), self.fetched, self.ok, self.dead,
                            round(self.relevance_sum, 3), self.judged_relevant, self.labelled_relevant, user])
        if len(self.series) > SAMPLE_LIMIT:
            self.series = self.series[::2]  # a long crawl keeps its shape, at half the resolution

    def labelled(self, key: str, relevant: bool, effect: dict[str, Any]) -> None:
        self.user_labels[key] = relevant
        self.label_effects.appendleft({"url": key, "relevant": relevant, **effect})

    # -- what it shows ----------------------------------------------------------

    def pages_per_second(self, window: float) -> float:
        """Pages per second over the last *window* seconds (the series)."""
        if len(self.series) < 2:
            elapsed = max(self.clock() - self.started, 1e-9)
            return float(self.fetched / elapsed)
        now = self.series[-1]
        for point in reversed(self.series):
            if now[0] - point[0] >= window:
                return (now[1] - point[1]) / max(now[0] - point[0], 1e-9)
        first = self.series[0]
        return (now[1] - first[1]) / max(now[0] - first[0], 1e-9)

    def snapshot(
        self, stats: Mapping[str, Any], frontier_scores: list[float], learning: dict[str, Any]
    ) -> dict[str, Any]:
        now = self.clock()
        recent = Counter(host for t, host in self.recent_hosts if now - t <= 60)
        refusals = {
            key.rsplit("/", 1)[1]: value for key, value in stats.items()
            if key.startswith(REFUSAL_PREFIXES) and isinstance(value, int | float)
        }
        refusals["robots.txt"] = stats.get("robotstxt/forbidden", 0)
        traps = {name: stats.get(key, 0) for name, key in (
            ("host cap", "frontier/host_cap"), ("links cut", "focus/page/links_cut_pages"),
            ("repeated segments", "focus/url_refused/repeated_segments"),
            ("counter traps", "focus/url_refused/counter_trap"),
        )}
        traps["near-duplicates"] = self.near_duplicates
        return {
            "worker": self.worker,
            "elapsed": round(now - self.started, 1),
            "finished": self.finished,
            "pages": {"fetched": self.fetched, "ok": self.ok, "dead": self.dead,
                      "relevance_sum": round(self.relevance_sum, 3), "judged_relevant": self.judged_relevant,
                      "labelled_relevant": self.labelled_relevant if self.relevant_label else None,
                      # one harvest, the progress line's and the summary's: by FOCUS_LABELS
                      # when given (the user's truth), else by the crawl's own judge
                      "harvest": round((self.labelled_relevant if self.relevant_label else self.judged_relevant)
                                       / self.ok, 4) if self.ok else 0.0,
                      "harvest_by": "labels" if self.relevant_label else "judge",
                      "judged_harvest": round(self.judged_relevant / self.ok, 4) if self.ok else 0.0},
            "rates": {"10s": round(self.pages_per_second(10), 2), "1min": round(self.pages_per_second(60), 2),
                      "5min": round(self.pages_per_second(300), 2)},
            "statuses": dict(self.statuses),
            "refusals": {k: v for k, v in refusals.items() if v},
            "traps": traps,
            "frontier": {"queued": stats.get("frontier/queued", 0), "leased": stats.get("frontier/leased", 0),
                         "evicted": stats.get("frontier/evicted", 0), "scores": histogram(frontier_scores)},
            "politeness": {"waits": stats.get("focus/politeness/waits", 0),
                           "late_turns": stats.get("focus/politeness/late_turns", 0),
                           "crawl_delay_hosts": stats.get("robotstxt/crawl_delay_hosts", 0)},
            "hosts": {"busiest": recent.most_common(12), "all": len(self.hosts)},
            "learning": learning,
            "latest_relevant": list(self.latest_relevant),
            "labels": {"relevant": sum(self.user_labels.values()),
                       "irrelevant": len(self.user_labels) - sum(self.user_labels.values()),
                       "effects": list(self.label_effects)},
            "series": self.series,
        }


def histogram(scores: list[float], bins: int = 20) -> dict[str, list[Any]]:
    """Counts of the queued scores in *bins* equal bins (∞ and −∞ left out).

    >>> histogram([0.0, 0.1, 0.1, 1.0], bins=2)
    {'edges': [0.0, 0.5, 1.0], 'counts': [3, 1]}
    """
    finite = [s for s in scores if math.isfinite(s)]
    if not finite:
        return {"edges": [], "counts": []}
    low, high = min(finite), max(finite)
    width = (high - low) / bins or 1.0
    counts = [0] * bins
    for score in finite:
        counts[min(int((score - low) / width), bins - 1)] += 1
    return {"edges": [round(low + i * width, 6) for i in range(bins + 1)], "counts": counts}
