-- ARGV: now, host_cap, then per URL: action ('ack' | 'release' | 'refuse'), fp, url fp.
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
