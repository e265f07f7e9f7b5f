"""What a worker has to tell the shared frontier, buffered until the next
round trip: pushes (a page's links, sent with the settlement of that page:
about one round trip per page), settlements of leases (acknowledged,
released, refused) and claims of redirect targets — in that order, so a
page's links are queued before its lease is acknowledged.

A payload (what rebuilds a Request) is serialised once per object — the
links of one page share one — and sent once per round trip.
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any

import xxhash

from crawlproject.distributed import scripts
from crawlproject.distributed.wire import RoundTrip, entry_tail, fingerprint, now_ms

if TYPE_CHECKING:
    from collections.abc import Collection

#: Payload objects whose serialisation is remembered (a page's links share one).
_PAYLOADS_REMEMBERED = 4096


class Outbox:
    """The buffers of one worker, and the round trip made of them.

    :param fifo: scores are ignored (every push is sent with score 0).
    :param max_size: the shared frontier's bound, and *host_cap* its per-host cap, as the scripts take them.
    """

    def __init__(self, fifo: bool, max_size: int, host_cap: int):
        self.fifo, self.max_size, self.host_cap = fifo, max_size, host_cap
        self.pushes: list[tuple[Any, ...]] = []
        self.settles: list[str] = []
        self.claims: list[tuple[str, list[Any]]] = []  # redirect targets claimed, not sent yet
        self._batch_payloads: set[str] = set()  # payload ids the buffered pushes send
        self._payload_ids: dict[int, tuple[Any, str, bytes]] = {}  # id(payload) → payload, id, blob

    def __bool__(self) -> bool:
        return bool(self.pushes or self.settles or self.claims)

    def push(self, key: str, score: float, payload: Any, force: bool, url: str | None) -> int:
        """Buffer a push; returns how many are buffered."""
        pid, blob = self.payload_id(payload)
        if blob:
            if pid in self._batch_payloads:
                blob = b""  # sent once per batch
            else:
                self._batch_payloads.add(pid)
        found = url if url is not None and url != key else ""
        key_fingerprint = fingerprint(key)
        self.pushes.append((
            key_fingerprint, entry_tail(key, found), "0" if self.fifo else repr(-(score + 0.0)),
            pid, blob, "1" if force else "0", fingerprint(found) if found else key_fingerprint,
        ))
        return len(self.pushes)

    def settle(self, action: str, fp: str, url_fp: str = "") -> None:
        """``ack``, ``release`` or ``refuse`` (*url_fp*: the URL refused) a lease."""
        self.settles += [action, fp, url_fp]

    def claim(self, fp: str, arguments: list[Any]) -> None:
        self.claims.append((fp, arguments))

    def payload_id(self, payload: Any) -> tuple[str, bytes]:
        """The payload's id and serialisation (remembered by identity: a
        page's links share one payload object)."""
        if payload is None:
            return scripts.NO_PAYLOAD, b""
        known = self._payload_ids.get(id(payload))
        if known is None or known[0] is not payload:
            blob = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
            known = (payload, format(xxhash.xxh3_64_intdigest(blob), "016x"), blob)
            if len(self._payload_ids) >= _PAYLOADS_REMEMBERED:
                self._payload_ids.clear()
            self._payload_ids[id(payload)] = known
        return known[1], known[2]

    def take(self, pop: list[Any] | None, renew: tuple[int, Collection[str]] | None) -> RoundTrip:
        """The next round trip, taken out of the buffers: pushes, settlements,
        claims, then a renewal (*renew*: the new expiry and the leases) and a
        POP (*pop*: its arguments after the time), each when there is one."""
        commands: list[tuple[str, list[Any]]] = []
        if self.pushes:
            arguments: list[Any] = [self.max_size, self.host_cap]
            for push in self.pushes:
                arguments.extend(push)
            commands.append(("PUSH", arguments))
        if self.settles:
            commands.append(("SETTLE", [now_ms(), self.host_cap, *self.settles]))
        for _, claim in self.claims:
            commands.append(("CLAIM", claim))
        if renew is not None:
            commands.append(("RENEW", [renew[0], *renew[1]]))
        if pop is not None:
            commands.append(("POP", [now_ms(), self.host_cap, *pop]))
        trip = RoundTrip(commands, self.pushes, self.settles, self.claims, int(pop[0]) if pop else 0,
                         renew is not None)
        self.pushes, self.settles, self.claims = [], [], []
        self._batch_payloads.clear()
        return trip

    def put_back(self, trip: RoundTrip) -> None:
        """A round trip that failed: its buffers first again, in order."""
        self.pushes = trip.pushes + self.pushes
        self.settles = trip.settles + self.settles
        self.claims = trip.claims + self.claims

    def clear(self) -> None:
        self.pushes, self.settles, self.claims = [], [], []
