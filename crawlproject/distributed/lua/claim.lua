-- ARGV: now, host_cap, lease (ms), fp, entry tail, score, payload id, payload.
-- Returns 1 when the key is leased to the caller.
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
redis.call('HSET', leased, fp, score .. '\0' .. entry)
redis.call('ZADD', leases, now + lease, fp)
if pid ~= NO_PAYLOAD and payload ~= '' then redis.call('HSETNX', payloads, pid, payload) end
ref(pid, 1)
if cap > 0 then redis.call('HINCRBY', hosts, origin_of(entry), 1) end
apply_refs()
return 1
