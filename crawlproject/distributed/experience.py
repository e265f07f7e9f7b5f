"""One link learner for all the workers of a crawl: each worker publishes
what its fetches taught (crawlproject.models.online_link_model.Experience, packed)
to a Redis stream beside the shared frontier (``<FOCUS_REDIS_KEY>:experience``)
and reads every other worker's, so that every worker's model learns from
every fetch of the crawl — in another order, to the same effect.

A worker often fetches a link another worker queued: only that worker
holds the link's features (it read the page the link is on), so the
fetching worker forwards its verdict — the URL key and the page's
relevance, or a dead end — and the worker that holds the link learns it as
its own, and shares the experience with everyone. A verdict whose link's
holder has ended is lost (its features went with it).

Round trips are awaited on ``redis.asyncio`` (crawlproject.distributed.connection):
the reactor never waits for Redis; what arrives is applied on the reactor
when it arrives. The stream keeps the last :data:`STREAM_LENGTH` batches
(approximately, as Redis trims): a worker that joins late learns from those.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import deferred_from_coro
from twisted.internet import threads

from crawlproject.distributed.connection import async_redis_from_settings, redis_key
from crawlproject.models.online_link_model import Experience, pack_all, unpack_all

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)
STREAM_LENGTH = 100_000  # batches kept in the stream
READ_COUNT = 200  # batches read per round trip


class SharedExperience:
    def __init__(
        self, client: Any, asynchronous: bool, key: str, apply: Callable[[list[Experience]], None],
        apply_verdicts: Callable[[list[tuple[str, float | None]]], None] | None = None,
    ):
        self.client, self.asynchronous = client, asynchronous
        self.key = key
        self.apply = apply
        self.apply_verdicts = apply_verdicts
        self.verdicts: list[tuple[str, float | None]] = []  # of links other workers queued
        self.worker = uuid.uuid4().hex[:12]
        self.last_id = "0-0"
        self.outbox: list[Experience] = []
        self.busy = False
        self.published = 0
        self.received = 0
        self.crawler: Crawler | None = None

    @classmethod
    def from_crawler(
        cls, crawler: Crawler, apply: Callable[[list[Experience]], None], spider_name: str,
        apply_verdicts: Callable[[list[tuple[str, float | None]]], None] | None = None,
    ) -> SharedExperience:
        client, asynchronous = async_redis_from_settings(crawler.settings)
        key = redis_key(crawler.settings, spider_name) + ":experience"
        shared = cls(client, asynchronous, key, apply, apply_verdicts)
        shared.crawler = crawler
        return shared

    def share(self, experience: Experience) -> None:
        """One of this worker's experiences, sent with the next exchange."""
        self.outbox.append(experience)

    def forward(self, key: str, relevance: float | None) -> None:
        """The verdict on a link this worker did not queue, for the worker
        that did (it holds the link's features)."""
        self.verdicts.append((key, relevance))

    def waiting(self) -> int:
        """What the next exchange would send."""
        return len(self.outbox) + len(self.verdicts)

    async def final_exchange(self) -> None:
        """At the end of the crawl: what is left goes out, what others sent
        comes in (the closing crawl waits for it)."""
        outgoing, self.outbox = self.outbox, []
        verdicts, self.verdicts = self.verdicts, []
        try:
            await self._exchange(outgoing, verdicts)
        except Exception as exc:  # noqa: BLE001 (a failed exchange must not fail the close)
            logger.warning("Sharing the link learner's last experience through Redis failed: %s", exc)

    def exchange(self) -> None:
        """Send what this worker learnt and take the others' — in the
        background; one exchange at a time."""
        if self.busy:
            return
        self.busy = True
        outgoing, self.outbox = self.outbox, []
        verdicts, self.verdicts = self.verdicts, []
        done = deferred_from_coro(self._exchange(outgoing, verdicts))
        done.addErrback(self._failed, outgoing, verdicts)
        done.addBoth(self._idle)

    async def _exchange(
        self, outgoing: list[Experience], verdicts: list[tuple[str, float | None]] | None = None
    ) -> None:
        verdicts = verdicts or []
        if outgoing or verdicts:
            message: dict[str, Any] = {"worker": self.worker, "batch": pack_all(outgoing)}
            if verdicts:
                message["verdicts"] = json.dumps(verdicts, separators=(",", ":")).encode()
            await self._call("xadd", self.key, message, maxlen=STREAM_LENGTH, approximate=True)
            self.published += len(outgoing)
            if self.crawler is not None and self.crawler.stats is not None:
                self.crawler.stats.inc_value("focus/learner/examples_shared", len(outgoing))
                self.crawler.stats.inc_value("focus/learner/verdicts_forwarded", len(verdicts))
        found = await self._call("xread", {self.key: self.last_id}, count=READ_COUNT)
        for _, entries in found or []:
            for entry_id, fields in entries:
                self.last_id = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
                worker = fields.get(b"worker", fields.get("worker", b""))
                if (worker.decode() if isinstance(worker, bytes) else worker) == self.worker:
                    continue
                experiences = unpack_all(fields.get(b"batch", fields.get("batch", b"")))
                self.received += len(experiences)
                self.apply(experiences)
                forwarded = fields.get(b"verdicts", fields.get("verdicts"))
                if forwarded and self.apply_verdicts is not None:
                    self.apply_verdicts([(key, relevance) for key, relevance in json.loads(forwarded)])

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        method = getattr(self.client, name)
        if self.asynchronous:
            return await method(*args, **kwargs)
        from scrapy.utils.defer import maybe_deferred_to_future

        return await maybe_deferred_to_future(threads.deferToThread(method, *args, **kwargs))

    def _failed(self, failure: Any, outgoing: list[Experience], verdicts: list[tuple[str, float | None]]) -> None:
        self.outbox[:0] = outgoing  # sent with the next exchange
        self.verdicts[:0] = verdicts
        logger.warning("Sharing the link learner's experience through Redis failed: %s", failure.value)

    def _idle(self, _: Any) -> None:
        self.busy = False
