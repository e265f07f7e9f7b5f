"""The Lua scripts of the Redis frontier: each call is one atomic step on the
shared frontier, for a whole batch of URLs (crawlproject.distributed.frontier).

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

MEMBER_BYTES = 27  # 12 hex of push counter + 15 hex of fingerprint
PID_BYTES = 16
NO_PAYLOAD = "." * PID_BYTES

# Shared helpers, prepended to every script.
_HELPERS = """
local ns = KEYS[1]
local queue, entries, leased, leases = ns..':queue', ns..':entries', ns..':leased', ns..':leases'
local fetched, refused, payloads, refs = ns..':fetched', ns..':refused', ns..':payloads', ns..':refs'
local hosts, seqkey = ns..':hosts', ns..':seq'
local NO_PAYLOAD = '................'

local function member_of(entry) return string.sub(entry, 1, 27) end
local function pid_of(entry) return string.sub(entry, 28, 43) end
local function origin_of(entry)
  return string.sub(entry, 44, string.find(entry, '\\0', 44, true) - 1)
end
-- a leased value: score \\0 entry
local function unlease(value)
  local cut = string.find(value, '\\0', 1, true)
  return string.sub(value, 1, cut - 1), string.sub(value, cut + 1)
end

-- Payload reference counts, summed per payload and applied once.
local ref_deltas = {}
local function ref(pid, delta)
  if pid ~= NO_PAYLOAD then ref_deltas[pid] = (ref_deltas[pid] or 0) + delta end
end
local function apply_refs()
  for pid, delta in pairs(ref_deltas) do
    if delta ~= 0 and redis.call('HINCRBY', refs, pid, delta) <= 0 then
      redis.call('HDEL', refs, pid)
      redis.call('HDEL', payloads, pid)
    end
  end
  ref_deltas = {}
end

-- Variadic commands over lists that may be long (Lua's unpack has a limit).
local function each_chunk(command, key, list)
  for i = 1, #list, 4000 do
    redis.call(command, key, unpack(list, i, math.min(#list, i + 3999)))
  end
end

-- The seen set: exact, then (with ns:bloomcfg) a Bloom filter.
local bloom, again = ns..':bloom', ns..':again'
local bloomcfg = redis.call('HMGET', ns..':bloomcfg', 'exact', 'bits', 'hashes')
local EXACT, BITS, HASHES = tonumber(bloomcfg[1]), tonumber(bloomcfg[2]), tonumber(bloomcfg[3])
local function bloom_offsets(fp)
  -- double hashing (Kirsch & Mitzenmacher) from the fingerprint's 60 bits
  local h1 = tonumber(string.sub(fp, 1, 8), 16)
  local h2 = tonumber(string.sub(fp, 9, 15), 16) * 2 + 1
  local offsets = {}
  for i = 0, HASHES - 1 do offsets[i + 1] = (h1 + i * h2) % BITS end
  return offsets
end
local function was_fetched(fp)
  if redis.call('SISMEMBER', fetched, fp) == 1 then return true end
  if not EXACT then return false end
  for _, offset in ipairs(bloom_offsets(fp)) do
    if redis.call('GETBIT', bloom, offset) == 0 then return false end
  end
  return redis.call('SISMEMBER', again, fp) == 0
end
local function mark_fetched(fps)
  if not EXACT then
    each_chunk('SADD', fetched, fps)
    return
  end
  local room = EXACT - redis.call('SCARD', fetched)
  for _, fp in ipairs(fps) do
    if room > 0 or redis.call('SISMEMBER', fetched, fp) == 1 then
      room = room - redis.call('SADD', fetched, fp)
    else
      for _, offset in ipairs(bloom_offsets(fp)) do redis.call('SETBIT', bloom, offset, 1) end
      redis.call('SREM', again, fp)
    end
  end
end
local function forget_fetched(fp)  -- queued again on purpose
  if redis.call('SREM', fetched, fp) == 0 and EXACT then redis.call('SADD', again, fp) end
end

-- Back in the queue as it was: a released or lapsed lease (unless the URL
-- was queued again meanwhile, by a forced push: that one stays).
local function requeue(fp, score, entry, cap)
  if redis.call('HEXISTS', entries, fp) == 1 then
    ref(pid_of(entry), -1)
  else
    redis.call('ZADD', queue, score, member_of(entry))
    redis.call('HSET', entries, fp, entry)
  end
  if cap > 0 then redis.call('HINCRBY', hosts, origin_of(entry), -1) end
end

-- Leases whose worker stopped renewing them go back to the queue.
local function recover(now, limit, cap)
  local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', now, 'LIMIT', 0, limit)
  if #expired == 0 then return 0 end
  local found = redis.call('HMGET', leased, unpack(expired))
  for i, fp in ipairs(expired) do
    if found[i] then
      local score, entry = unlease(found[i])
      requeue(fp, score, entry, cap)
    end
  end
  redis.call('ZREM', leases, unpack(expired))
  redis.call('HDEL', leased, unpack(expired))
  apply_refs()
  return #expired
end
"""

#: ARGV: max_size, host_cap, then 7 values per URL: fp, entry tail (origin
#: \\0 key \\0 url), score, payload id, payload ('' when sent before in the
#: batch), force, url fp.
#: Returns one outcome code per URL.
PUSH = _HELPERS + """
local max_size, cap = tonumber(ARGV[1]), tonumber(ARGV[2])
local n = (#ARGV - 2) / 7
local count = redis.call('ZCARD', queue)
local seq = redis.call('INCRBY', seqkey, n) - n
local any_refused = redis.call('SCARD', refused) > 0
local outcomes, blobs = {}, {}  -- a payload is sent once per batch, stored once an entry uses it
for i = 3, #ARGV, 7 do
  local fp, tail, score, pid = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local payload, force, url_fp = ARGV[i + 4], ARGV[i + 5], ARGV[i + 6]
  local outcome
  seq = seq + 1
  if payload ~= '' then blobs[pid] = payload end
  if force == '0' and (redis.call('HEXISTS', leased, fp) == 1 or was_fetched(fp)) then
    outcome = 'already_fetched'
  elseif any_refused and redis.call('SISMEMBER', refused, url_fp) == 1 then
    outcome = 'refused'
  elseif cap > 0 and tonumber(redis.call('HGET', hosts, string.sub(tail, 1, string.find(tail, '\\0', 1, true) - 1)) or '0') >= cap then
    outcome = 'host_cap'
  else
    local old = redis.call('HGET', entries, fp)
    if old then
      local old_member = member_of(old)
      if tonumber(score) >= tonumber(redis.call('ZSCORE', queue, old_member)) then
        outcome = 'duplicate'
      else
        redis.call('ZREM', queue, old_member)
        ref(pid_of(old), -1)
        count = count - 1
        outcome = 'raised'
      end
    elseif count >= max_size then
      local worst = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')
      if #worst > 0 and tonumber(worst[2]) > tonumber(score) then
        local worst_fp = string.sub(worst[1], 13)
        ref(pid_of(redis.call('HGET', entries, worst_fp)), -1)
        redis.call('ZREM', queue, worst[1])
        redis.call('HDEL', entries, worst_fp)
        count = count - 1
        outcome = 'added_evicting'
      elseif force == '1' then
        outcome = 'added_over_bound'
      else
        outcome = 'rejected_full'
      end
    else
      outcome = 'added'
    end
    if outcome == 'raised' or string.sub(outcome, 1, 5) == 'added' then
      local member = string.format('%012x', seq) .. fp
      redis.call('ZADD', queue, score, member)
      redis.call('HSET', entries, fp, member .. pid .. tail)
      count = count + 1
      ref(pid, 1)
      if blobs[pid] then
        redis.call('HSETNX', payloads, pid, blobs[pid])
        blobs[pid] = nil
      end
      if force == '1' then forget_fetched(fp) end
    end
  end
  outcomes[#outcomes + 1] = outcome
end
apply_refs()
return outcomes
"""

#: ARGV: now (ms), host_cap, n, lease (ms), host batch k, then the hosts
#: the caller's current batch has used. Pops up to n URLs, best first; with
#: k > 1, a host is not popped twice within a batch of k pops (a host is
#: skipped while others are near the top). Returns: how many were dropped by
#: the host cap, how many were popped, how many hosts the batch has used
#: now, those hosts, then per URL popped fp, score, entry, then per distinct
#: payload id: id, payload.
POP = _HELPERS + """
local now, cap, n, lease, k = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
recover(now, 1000, cap)
local window = n
if k > 1 then window = math.max(2 * n, 2 * k) end
local members, scores, fps, found = {}, {}, {}, {}
local function extend()  -- the next window of the queue; false when the queue ends there
  local more = redis.call('ZRANGE', queue, #members, #members + window - 1, 'WITHSCORES')
  if #more == 0 then return false end
  local more_fps = {}
  for j = 1, #more, 2 do more_fps[#more_fps + 1] = string.sub(more[j], 13) end
  local more_entries = redis.call('HMGET', entries, unpack(more_fps))
  for j, fp in ipairs(more_fps) do
    local at = #members + 1
    members[at], scores[at], fps[at], found[at] = more[2 * j - 1], more[2 * j], fp, more_entries[j]
  end
  return #more_fps == window
end
local more = extend()
local taken, chosen, dropped, used, used_count, i = {}, {}, 0, {}, 0, 1
for j = 6, #ARGV do used[ARGV[j]] = true; used_count = used_count + 1 end
while #chosen < n do
  if i > #members then
    if more then more = extend() end
    if i > #members then
      if used_count == 0 then break end
      used, used_count, i = {}, 0, 1  -- only hosts of this batch are left: a new batch
    end
  elseif taken[i] then
    i = i + 1
  elseif not found[i] then  -- a member without its entry (cannot happen; never loop on it)
    taken[i] = true
  else
    local origin = ''
    if k > 1 or cap > 0 then origin = origin_of(found[i]) end
    if k > 1 and used[origin] then
      i = i + 1
    else
      taken[i] = true
      if cap > 0 and tonumber(redis.call('HGET', hosts, origin) or '0') >= cap then
        ref(pid_of(found[i]), -1)
        dropped = dropped + 1
      else
        if cap > 0 then redis.call('HINCRBY', hosts, origin, 1) end
        chosen[#chosen + 1] = i
        if k > 1 then
          used[origin] = true
          used_count = used_count + 1
          if used_count >= k then used, used_count, i = {}, 0, 1 end
        end
      end
    end
  end
end
local removed_members, removed_fps = {}, {}
for index in pairs(taken) do
  removed_members[#removed_members + 1] = members[index]
  removed_fps[#removed_fps + 1] = fps[index]
end
if #removed_members > 0 then
  redis.call('ZREM', queue, unpack(removed_members))
  redis.call('HDEL', entries, unpack(removed_fps))
end
local result, lease_args, leased_args, pids, pid_list = {dropped, #chosen, used_count}, {}, {}, {}, {}
for host in pairs(used) do result[#result + 1] = host end
for _, index in ipairs(chosen) do
  local fp, entry, score = fps[index], found[index], scores[index]
  lease_args[#lease_args + 1] = now + lease
  lease_args[#lease_args + 1] = fp
  leased_args[#leased_args + 1] = fp
  leased_args[#leased_args + 1] = score .. '\\0' .. entry
  result[#result + 1] = fp
  result[#result + 1] = score
  result[#result + 1] = entry
  local pid = pid_of(entry)
  if pid ~= NO_PAYLOAD and not pids[pid] then pids[pid] = true; pid_list[#pid_list + 1] = pid end
end
if #chosen > 0 then
  redis.call('ZADD', leases, unpack(lease_args))
  redis.call('HSET', leased, unpack(leased_args))
end
if #pid_list > 0 then
  local blobs = redis.call('HMGET', payloads, unpack(pid_list))
  for j, pid in ipairs(pid_list) do
    result[#result + 1] = pid
    result[#result + 1] = blobs[j] or ''
  end
end
apply_refs()
return result
"""

#: ARGV: now, host_cap, then per URL: action ('ack' | 'release' | 'refuse'), fp, url fp.
SETTLE = _HELPERS + """
local now, cap = tonumber(ARGV[1]), tonumber(ARGV[2])
local fps = {}
for i = 4, #ARGV, 3 do fps[#fps + 1] = ARGV[i] end
local found = redis.call('HMGET', leased, unpack(fps))
local settled, gone, acked, refused_fps = {}, {}, {}, {}
for j, fp in ipairs(fps) do
  local value, action = found[j], ARGV[3 * j]
  if value and not settled[fp] then
    settled[fp] = true
    gone[#gone + 1] = fp
    local score, entry = unlease(value)
    if action == 'release' then
      requeue(fp, score, entry, cap)
    else
      ref(pid_of(entry), -1)
      if action == 'ack' then
        acked[#acked + 1] = fp
      else
        refused_fps[#refused_fps + 1] = ARGV[3 * j + 2]
        if cap > 0 then redis.call('HINCRBY', hosts, origin_of(entry), -1) end
      end
    end
  end
end
if #gone > 0 then
  each_chunk('HDEL', leased, gone)
  each_chunk('ZREM', leases, gone)
end
if #acked > 0 then mark_fetched(acked) end
if #refused_fps > 0 then each_chunk('SADD', refused, refused_fps) end
apply_refs()
return 1
"""

#: ARGV: now, host_cap, lease (ms), fp, entry tail, score, payload id, payload.
#: Returns 1 when the key is leased to the caller.
CLAIM = _HELPERS + """
local now, cap, lease = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local fp, tail, score, pid, payload = ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]
if redis.call('HEXISTS', leased, fp) == 1 or was_fetched(fp) then return 0 end
local old = redis.call('HGET', entries, fp)
if old then
  redis.call('ZREM', queue, member_of(old))
  redis.call('HDEL', entries, fp)
  ref(pid_of(old), -1)
end
local entry = string.format('%012x', redis.call('INCR', seqkey)) .. fp .. pid .. tail
redis.call('HSET', leased, fp, score .. '\\0' .. entry)
redis.call('ZADD', leases, now + lease, fp)
if pid ~= NO_PAYLOAD and payload ~= '' then redis.call('HSETNX', payloads, pid, payload) end
ref(pid, 1)
if cap > 0 then redis.call('HINCRBY', hosts, origin_of(entry), 1) end
apply_refs()
return 1
"""

#: ARGV: expiry (ms), then fingerprints: leases this worker still holds.
RENEW = """
local leases = KEYS[1]..':leases'
for i = 2, #ARGV do
  if redis.call('ZSCORE', leases, ARGV[i]) then redis.call('ZADD', leases, ARGV[1], ARGV[i]) end
end
return 1
"""

#: ARGV: now (ms), host, delay (ms). Reserves the host's next fetch: returns
#: how long the caller waits (ms) so that no two fetches of the host, by any
#: worker, are closer than the delay.
RESERVE = """
local polite = KEYS[1]..':polite'
local now, host, delay = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local next_at = tonumber(redis.call('HGET', polite, host) or '0')
local at = math.max(now, next_at)
redis.call('HSET', polite, host, at + delay)
return at - now
"""

#: ARGV: per URL: queue member, new score. Re-scores the URLs still queued.
RESCORE = """
local queue = KEYS[1]..':queue'
for i = 1, #ARGV, 2 do
  redis.call('ZADD', queue, 'XX', ARGV[i + 1], ARGV[i])
end
return 1
"""
