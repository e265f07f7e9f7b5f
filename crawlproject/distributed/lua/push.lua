-- ARGV: max_size, host_cap, then 7 values per URL: fp, entry tail (origin
-- \0 key \0 url), score, payload id, payload ('' when sent before in the
-- batch), force, url fp.
-- Returns one outcome code per URL.
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
  elseif cap > 0 and tonumber(redis.call('HGET', hosts, string.sub(tail, 1, string.find(tail, '\0', 1, true) - 1)) or '0') >= cap then
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
