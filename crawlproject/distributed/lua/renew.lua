-- ARGV: expiry (ms), then fingerprints: leases this worker still holds.
local leases = KEYS[1]..':leases'
for i = 2, #ARGV do
  if redis.call('ZSCORE', leases, ARGV[i]) then redis.call('ZADD', leases, ARGV[1], ARGV[i]) end
end
return 1
