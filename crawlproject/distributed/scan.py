"""Reads of the whole shared queue: re-scores, samples of its scores, and the
keys queued or leased (for tools and tests).

Each is the network part of a RedisFrontier call and touches no worker state,
so a crawl runs it in a thread while the reactor goes on. A re-score writes
only the scores of URLs still queued (the RESCORE script): a URL popped
meanwhile keeps its place.
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any

from crawlproject.distributed import scripts
from crawlproject.distributed.wire import fingerprint, parse_entry

if TYPE_CHECKING:
    from collections.abc import Callable

    from crawlproject.distributed.wire import Scripts


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


def draw_sample(server: Any, key: str, count: int) -> list[float]:
    """The scores of up to *count* queued URLs, drawn at random."""
    drawn = server.zrandmember(f"{key}:queue", count, withscores=True) or []
    if drawn and not isinstance(drawn[0], list | tuple):  # RESP2: member, score, member, score…
        drawn = list(zip(drawn[::2], drawn[1::2], strict=True))
    return [-float(score) for _, score in drawn]


def queued_keys(server: Any, key: str) -> set[str]:
    """Every key queued in the shared frontier."""
    return {parse_entry(entry.decode())[0] for entry in server.hvals(f"{key}:entries")}


def leased_keys(server: Any, key: str) -> set[str]:
    """Every key leased by any worker."""
    values = server.hvals(f"{key}:leased")
    return {parse_entry(value.decode().split("\0", 1)[1])[0] for value in values}
