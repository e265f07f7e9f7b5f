-- ARGV: per URL: queue member, new score. Re-scores the URLs still queued.
local queue = KEYS[1]..':queue'
for i = 1, #ARGV, 2 do
  redis.call('ZADD', queue, 'XX', ARGV[i + 1], ARGV[i])
end
return 1
