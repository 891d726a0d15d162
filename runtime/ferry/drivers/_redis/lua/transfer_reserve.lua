--! include runs
-- Reserve up to p.limit runs for drain p.drain_id moving them to store p.target (see
-- RunTransfer.reserve), at p.now: they turn `moving` — out of the claim index, no lease
-- to lapse. p.include_dead also takes dead runs; p.queues restricts queues (absent: any).
-- Taken in this order: runs an earlier drain left moving to the same store, then queued
-- runs in claim order (due or not), then dead ones by when they died — never a run of a
-- fan-out (one with a parent or children): a parent's steps name its children by their
-- ids here. Answers the runs reserved; their steps are read after (step_load: a moving run
-- records none, so the two reads cannot disagree).
local p = params()
local drain, target, limit, now, queues = p.drain_id, p.target, p.limit, int(p.now), p.queues
local picked = {}
if limit <= 0 then return {} end

local function in_fan_out(id)
  return redis.call('HEXISTS', job_key(id), 'parent') == 1
    or redis.call('EXISTS', key('children', id)) == 1
end

local function reserve(id, from, queue)
  local jk = job_key(id)
  if from ~= 'moving' then
    redis.call('HSET', jk, 'moving_from', from, 'moving_to', target)
    restate(id, queue, from, 'moving')
    redis.call('ZADD', key('moving', target), id, id)
  end
  redis.call('HSET', jk, 'state', 'moving', 'locked_by', drain, 'updated', now)
  table.insert(picked, id)
end

-- An interrupted drain's reservations for this target, whatever its filters.
for _, id in ipairs(redis.call('ZRANGE', key('moving', target), 0, -1)) do
  if #picked >= limit then break end
  local run = fields(id, {'state', 'locked_by', 'queue'})
  if run.state == 'moving' and run.locked_by ~= drain then reserve(id, 'moving', run.queue) end
end

if #picked < limit then
  walk(claim_levels(queues, nil, true), '+inf', math.max(limit, 10), function(candidate)
    local id = int(tonumber(candidate.member))
    local run = fields(id, {'state', 'queue', 'priority', 'name'})
    if run.state == 'queued' and not in_fan_out(id) then
      due_remove(id, run.queue, run.priority, run.name)
      candidate.removed = true
      redis.call('ZREM', key('queued', run.queue), pad(id))
      reserve(id, 'queued', run.queue)
    end
    return #picked < limit
  end)
end

if p.include_dead and #picked < limit then
  local pool = {}
  for _, queue in ipairs(queues or redis.call('SMEMBERS', key('queues'))) do
    local want, offset, found = limit - #picked, 0, 0
    repeat
      local dead = redis.call('ZRANGE', key('fin', 'dead', queue), offset, offset + want - 1,
        'WITHSCORES')
      offset = offset + #dead / 2
      for i = 1, #dead, 2 do
        if found < want and not in_fan_out(int(tonumber(dead[i]))) then
          table.insert(pool, {member = dead[i], score = tonumber(dead[i + 1]), queue = queue})
          found = found + 1
        end
      end
    until #dead / 2 < want or found >= want
  end
  table.sort(pool, before)
  for _, candidate in ipairs(pool) do
    if #picked >= limit then break end
    local id = int(tonumber(candidate.member))
    redis.call('ZREM', key('fin', 'dead', candidate.queue), candidate.member)
    reserve(id, 'dead', candidate.queue)
  end
end

local answer = {}
for i, id in ipairs(picked) do answer[i] = run_columns(id, stored_run(id)) end
return rows(answer)
