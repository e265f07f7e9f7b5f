-- Shared helpers, prepended to every script.
local ns = KEYS[1]
local queue, entries, leased, leases = ns..':queue', ns..':entries', ns..':leased', ns..':leases'
local fetched, refused, payloads, refs = ns..':fetched', ns..':refused', ns..':payloads', ns..':refs'
local hosts, seqkey = ns..':hosts', ns..':seq'
local NO_PAYLOAD = '................'

local function member_of(entry) return string.sub(entry, 1, 27) end
local function pid_of(entry) return string.sub(entry, 28, 43) end
local function origin_of(entry)
  return string.sub(entry, 44, string.find(entry, '\0', 44, true) - 1)
end
-- a leased value: score \0 entry
local function unlease(value)
  local cut = string.find(value, '\0', 1, true)
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
