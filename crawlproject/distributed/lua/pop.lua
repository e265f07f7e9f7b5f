-- ARGV: now (ms), host_cap, n, lease (ms), host batch k, e, then e hosts
-- the caller explores, then the hosts the caller's current batch has used.
-- Pops up to n URLs, best first; with k > 1, a host is not popped twice
-- within a batch of k pops (a host is skipped while others are near the
-- top); then the best URL of each explored host none of those is of, looked
-- for among the queue's first SCAN. Returns: how many were dropped by the
-- host cap, how many were popped, how many hosts the batch has used now,
-- those hosts, then per URL popped fp, score, entry, then per distinct
-- payload id: id, payload.
local now, cap, n, lease, k = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local e = tonumber(ARGV[6])
local SCAN = 2000
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
for j = 7 + e, #ARGV do used[ARGV[j]] = true; used_count = used_count + 1 end
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
-- The explored hosts' best, past what was popped (the host of an origin: scheme://host[:port]).
local function host_of(entry) return string.match(origin_of(entry), '^[^:]+://%[?([^%]/:]*)') end
if e > 0 then
  local wanted, left = {}, 0
  for j = 7, 6 + e do wanted[ARGV[j]] = true; left = left + 1 end
  for _, index in ipairs(chosen) do
    local host = host_of(found[index])
    if wanted[host] then wanted[host] = nil; left = left - 1 end
  end
  local j = 1
  while left > 0 and j <= SCAN do
    if j > #members then
      if more then more = extend() end
      if j > #members then break end
    end
    local host = found[j] and host_of(found[j])
    if not taken[j] and host and wanted[host] then
      wanted[host] = nil
      left = left - 1
      taken[j] = true
      if cap > 0 and tonumber(redis.call('HGET', hosts, origin_of(found[j])) or '0') >= cap then
        ref(pid_of(found[j]), -1)
        dropped = dropped + 1
      else
        if cap > 0 then redis.call('HINCRBY', hosts, origin_of(found[j]), 1) end
        chosen[#chosen + 1] = j
      end
    end
    j = j + 1
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
  leased_args[#leased_args + 1] = score .. '\0' .. entry
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
