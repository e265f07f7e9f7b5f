"""The Lua scripts of the Redis frontier: each call is one atomic step on the
shared frontier, for a whole batch of URLs (crawlproject.distributed.frontier).
The scripts are in ``lua/`` beside this module, each with its arguments and
what it returns at its top; ``helpers.lua`` is prepended to those that use
the frontier's keys.

Keys of a frontier (``ns`` = ``FOCUS_REDIS_KEY``):

* ``ns:queue``   sorted set: member = 12-hex push counter .. fingerprint,
  score = −(URL score) (ascending = best first; equal scores pop in push
  order, the member's counter deciding)
* ``ns:entries`` hash: fingerprint → entry of a queued URL
* ``ns:leased``  hash: fingerprint → score \\0 entry of a leased URL;
  ``ns:leases`` sorted set: fingerprint by lease expiry (ms)
* ``ns:fetched`` set of fingerprints; ``ns:refused`` set of URL fingerprints
* past ``exact`` fetched fingerprints (``ns:bloomcfg`` hash: exact, bits,
  hashes — written once by the first worker), the next ones go into the
  Bloom filter ``ns:bloom`` (a string of bits: ``SETBIT``/``GETBIT``, no
  module needed), probed at ``hashes`` offsets by double hashing of the
  fingerprint's two halves; ``ns:again`` holds the ones queued again on
  purpose (a forced push) until they are fetched again
* ``ns:payloads`` hash: payload id → serialised payload; ``ns:refs`` hash:
  payload id → how many entries use it
* ``ns:hosts`` hash: origin → pages leased or fetched (the per-host cap)
* ``ns:seq`` push counter; ``ns:polite`` hash: host → next allowed fetch (ms)

An entry is ``member (27 bytes) .. payload id (16 bytes, dots when none) ..
origin \\0 key \\0 url``: the fields a script reads sit at fixed offsets
(Lua's pattern matching costs microseconds an entry; ``string.sub`` and a
plain ``string.find`` do not), and the score lives in the queue only.

Speed comes from doing per batch what can be: one ``INCRBY`` for the push
counters, one ``ZCARD``, payload reference counts summed per payload, and
variadic ``ZREM``/``HDEL``/``HSET``/``ZADD``/``SADD`` for the URLs a pop
or a settlement moves.
"""

from __future__ import annotations

from importlib import resources

MEMBER_BYTES = 27  # 12 hex of push counter + 15 hex of fingerprint
PID_BYTES = 16
NO_PAYLOAD = "." * PID_BYTES


def _lua(name: str) -> str:
    return resources.files("crawlproject.distributed").joinpath(f"lua/{name}.lua").read_text(encoding="utf-8")


_HELPERS = _lua("helpers")  # the frontier's keys and the functions the scripts share
PUSH = _HELPERS + _lua("push")
POP = _HELPERS + _lua("pop")
SETTLE = _HELPERS + _lua("settle")
CLAIM = _HELPERS + _lua("claim")
RENEW = _lua("renew")
RESERVE = _lua("reserve")
RESCORE = _lua("rescore")
