"""Reads of the whole shared queue: re-scores, samples of its scores, and the
keys queued or leased (for tools and tests).

Each read is the network part of a RedisFrontier call and touches no worker
state, so a crawl runs it in a thread while the reactor goes on
(:class:`QueueReads`). A re-score writes only the scores of URLs still queued
(the RESCORE script): a URL popped meanwhile keeps its place.
"""

from __future__ import annotations

import logging
import pickle
from typing import TYPE_CHECKING, Any

from crawlproject.distributed import scripts
from crawlproject.distributed.wire import fingerprint, parse_entry
from crawlproject.web.urls import host_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from twisted.internet.defer import Deferred

    from crawlproject.distributed.wire import Scripts

    #: scorer(key, score, payload) → the new score
    Scorer = Callable[[str, float, Any], float]

logger = logging.getLogger(__name__)


class QueueReads:
    """Re-scores and samples of one shared queue: at once without a reactor
    (*in_thread* None: tools and tests), else in a thread, one re-score at a
    time — one asked for while another runs is run once after it, with the
    latest scorer — and a sample served from the last draw while the next is
    drawn (a paused Redis must not stop the crawl for the estimate of what is
    left).

    :param prepare: called before each re-score (the worker gives back what it
        prefetched and sends what it buffered: they are re-scored with the rest).
    :param count_trips: told the round trips each read took.
    :param stopping: whether the worker closes (a re-score stops at its next chunk).
    """

    def __init__(self, server: Any, key: str, scripts: Scripts, in_thread: Callable[..., Deferred[Any]] | None,
                 prepare: Callable[[], None], count_trips: Callable[[int], None], stopping: Callable[[], bool]):
        self.server, self.key, self.scripts, self.in_thread = server, key, scripts, in_thread
        self._prepare, self._count_trips, self._stopping = prepare, count_trips, stopping
        self._rescoring: Deferred[Any] | None = None  # a re-score running in a thread
        self._next_scorer: Scorer | None = None
        self._sampling: Deferred[Any] | None = None  # a sample on its way
        self._last_sample: list[tuple[float, str]] = []

    def rescore(self, scorer: Scorer, keys: list[str] | None = None) -> None:
        self._prepare()
        if self.in_thread is None:
            self._count_trips(rescore_keys(self.server, self.key, self.scripts, scorer, keys) if keys is not None
                              else rescore_all(self.server, self.key, self.scripts, scorer, self._stopping))
            return
        if keys is not None:
            self.in_thread(rescore_keys, self.server, self.key, self.scripts, scorer, keys).addCallbacks(
                self._count_trips, self._failed)
            return
        if self._rescoring is not None:
            self._next_scorer = scorer
            return
        self._rescoring = self.in_thread(rescore_all, self.server, self.key, self.scripts, scorer, self._stopping)
        self._rescoring.addCallbacks(self._count_trips, self._failed)
        self._rescoring.addBoth(self._rescored)

    def sample(self, count: int) -> list[tuple[float, str]]:
        if self.in_thread is None:
            self._count_trips(1)
            return draw_sample(self.server, self.key, count)
        if self._sampling is None:
            self._sampling = self.in_thread(draw_sample, self.server, self.key, count)
            self._sampling.addCallbacks(self._sampled, self._sample_failed)
        return list(self._last_sample)

    def _failed(self, failure: Any) -> None:
        logger.error("Re-scoring %s failed: %s", self.key, failure.value)

    def _rescored(self, _: Any) -> None:
        self._rescoring = None
        scorer, self._next_scorer = self._next_scorer, None
        if scorer is not None:
            self.rescore(scorer)

    def _sampled(self, sample: list[tuple[float, str]]) -> None:
        self._sampling, self._last_sample = None, sample
        self._count_trips(1)

    def _sample_failed(self, failure: Any) -> None:
        self._sampling = None  # the last sample stays; the next asks again
        logger.warning("A sample of the shared frontier %s's scores failed (%s)", self.key, failure.value)


def rescore_keys(server: Any, key: str, run: Scripts, scorer: Callable[[str, float, Any], float],
                 keys: list[str]) -> int:
    """Re-score the queued ones of *keys*: entries, scores and payloads in
    three round trips, the new scores in one script call. Returns the round trips."""
    found = server.hmget(f"{key}:entries", [fingerprint(each) for each in keys])
    entries = [entry for entry in found if entry]
    if not entries:
        return 1
    members = [entry[:27] for entry in entries]  # the queue member leads every entry
    scores = server.zmscore(f"{key}:queue", members)
    parsed = [parse_entry(entry.decode()) for entry in entries]
    pids = list({fields[2] for fields in parsed} - {scripts.NO_PAYLOAD})
    blobs = dict(zip(pids, server.hmget(f"{key}:payloads", pids), strict=True)) if pids else {}
    updates: list[Any] = []
    for member, score, (url_key, _, pid) in zip(members, scores, parsed, strict=True):
        if score is None:
            continue
        blob = blobs.get(pid)
        payload = pickle.loads(blob) if blob else None  # noqa: S301 (our Redis)
        updates += [member, repr(-(float(scorer(url_key, -float(score), payload)) + 0.0))]
    if updates:
        run.run("RESCORE", key, updates)
        return 4
    return 3


def rescore_all(server: Any, key: str, run: Scripts, scorer: Callable[[str, float, Any], float],
                stop: Callable[[], bool]) -> int:
    """Scan the whole queue a thousand at a time, score, write back, until
    done or *stop*. Returns the round trips."""
    payloads: dict[str, Any] = {scripts.NO_PAYLOAD: None}
    cursor, trips = 0, 0
    while True:
        cursor, chunk = server.zscan(f"{key}:queue", cursor, count=1000)
        trips += 1
        if chunk:
            members = [member for member, _ in chunk]
            found = server.hmget(f"{key}:entries", [member[12:] for member in members])
            trips += 1
            parsed = [parse_entry(entry.decode()) if entry else None for entry in found]
            wanted = list({fields[2] for fields in parsed if fields} - payloads.keys())
            if wanted:
                blobs = server.hmget(f"{key}:payloads", wanted)
                trips += 1
                for pid, blob in zip(wanted, blobs, strict=True):
                    payloads[pid] = pickle.loads(blob) if blob else None  # noqa: S301 (trusted)
            updates: list[Any] = []
            for (member, score), fields in zip(chunk, parsed, strict=True):
                if fields is not None:
                    url_key, _, pid = fields
                    updates += [member, repr(-(float(scorer(url_key, -float(score), payloads.get(pid))) + 0.0))]
            if updates:
                run.run("RESCORE", key, updates)
                trips += 1
        if cursor == 0 or stop():
            return trips


def draw_sample(server: Any, key: str, count: int) -> list[tuple[float, str]]:
    """Up to *count* queued URLs drawn at random: (score, host)."""
    drawn = server.zrandmember(f"{key}:queue", count, withscores=True) or []
    if drawn and not isinstance(drawn[0], list | tuple):  # RESP2: member, score, member, score…
        drawn = list(zip(drawn[::2], drawn[1::2], strict=True))
    if not drawn:
        return []
    entries = server.hmget(f"{key}:entries", [member[12:] for member, _ in drawn])  # the member ends with the fp
    return [(-float(score), host_of(parse_entry(entry.decode())[0]) if entry else "")
            for (_, score), entry in zip(drawn, entries, strict=True)]


def queued_keys(server: Any, key: str) -> set[str]:
    """Every key queued in the shared frontier."""
    return {parse_entry(entry.decode())[0] for entry in server.hvals(f"{key}:entries")}


def leased_keys(server: Any, key: str) -> set[str]:
    """Every key leased by any worker."""
    values = server.hvals(f"{key}:leased")
    return {parse_entry(value.decode().split("\0", 1)[1])[0] for value in values}
