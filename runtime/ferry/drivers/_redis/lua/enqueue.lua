-- Write a batch of runs; a key that already has a run resolves to it instead.
-- ARGV: now, superseded key bytes, count, then 14 per request: name, queue, payload (JSON
-- text), idempotency key, max_attempts, run_at (opt; absent: now), tenant (opt), actor
-- (opt), concurrency key (opt), priority, rate key (opt), trace context (opt), dedupe
-- active only (1/0), dedupe window ms (opt). Answers id, deduplicated (1/0) per request,
-- in order.
-- The check and the write are one script, so two enqueues of one key never both write;
-- a later request of the same key in the batch finds the earlier one's run.
-- A run holding the key outside the request's dedupe rule (ended, when it dedupes only
-- against active runs; created `window` ms or more ago) keeps its hash but gives the key
-- up: its key becomes `<key> [superseded: run <id>]` padded with spaces to the superseded
-- key bytes, more than an enqueued key may have, and the new run takes the key.
-- A queue that got a run due now is woken (message: the queue); one that got runs for
-- later is told when the soonest of them falls due (message: `<queue>@<run_at_ms>`), so
-- an idle worker wakes for it then rather than at its next poll.
local arg = reader(ARGV)
local now = arg()
local superseded_bytes = tonumber(arg())
local answers = {}
local woken = {}
local later = {}

-- The run holding `idem`, if it is outside the request's rule, gives the key up.
local function give_up_key(idem, active_only, window)
  local existing = redis.call('HGET', key('idem'), idem)
  if not existing or not (active_only or window) then return end
  local held = fields(existing, {'state', 'created'})
  if (active_only and (held.state == 'completed' or held.state == 'dead'
        or held.state == 'cancelled'))
      or (window and tonumber(held.created) <= tonumber(now) - tonumber(window)) then
    local moved = idem .. ' [superseded: run ' .. existing .. ']'
    moved = moved .. string.rep(' ', superseded_bytes - #moved)
    redis.call('HSET', job_key(existing), 'key', moved)
    redis.call('HSET', key('idem'), moved, existing)
    redis.call('HDEL', key('idem'), idem)  -- the run admitted next takes the key
  end
end

for _ = 1, tonumber(arg()) do
  local name, queue, payload, idem = arg(), arg(), arg(), arg()
  local max_attempts, run_at = arg(), opt(arg()) or now
  local tenant, actor, ckey, priority = opt(arg()), opt(arg()), opt(arg()), arg()
  local rkey, traceparent = opt(arg()), opt(arg())
  local active_only, window = arg() == '1', opt(arg())
  give_up_key(idem, active_only, window)
  local id, deduplicated = admit({
    name = name, queue = queue, payload = payload, key = idem,
    max_attempts = max_attempts, run_at = run_at, priority = priority,
    tenant = tenant, actor = actor, ckey = ckey, rkey = rkey, tp = traceparent,
  }, now)
  if deduplicated then
    table.insert(answers, id)
    table.insert(answers, 1)
  else
    if enqueued(id, queue, priority, name, run_at, now) then
      woken[queue] = true
    elseif later[queue] == nil or tonumber(run_at) < later[queue] then
      later[queue] = tonumber(run_at)
    end
    table.insert(answers, id)
    table.insert(answers, 0)
  end
end
for queue in pairs(woken) do wake(queue) end
for queue, at in pairs(later) do
  wake(queue .. '@' .. string.format('%d', at))
end
return answers
