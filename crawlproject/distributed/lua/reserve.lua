-- ARGV: now (ms), host, delay (ms). Reserves the host's next fetch: returns
-- how long the caller waits (ms) so that no two fetches of the host, by any
-- worker, are closer than the delay.
local polite = KEYS[1]..':polite'
local now, host, delay = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local next_at = tonumber(redis.call('HGET', polite, host) or '0')
local at = math.max(now, next_at)
redis.call('HSET', polite, host, at + delay)
return at - now
