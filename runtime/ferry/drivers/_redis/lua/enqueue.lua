-- Write a batch of runs; a key that already has a run resolves to it instead.
-- ARGV: now, count, then 12 per request: name, queue, payload (JSON text), idempotency
-- key, max_attempts, run_at (opt; absent: now), tenant (opt), actor (opt), concurrency
-- key (opt), priority, rate key (opt), trace context (opt). Answers id, deduplicated (1/0)
-- per request, in order.
-- The check and the write are one script, so two enqueues of one key never both write;
-- a later request of the same key in the batch finds the earlier one's run.
-- A queue that got a run due now is woken (message: the queue); one that got runs for
-- later is told when the soonest of them falls due (message: `<queue>@<run_at_ms>`), so
-- an idle worker wakes for it then rather than at its next poll.
local arg = reader(ARGV)
local now = arg()
local answers = {}
local woken = {}
local later = {}
for _ = 1, tonumber(arg()) do
  local name, queue, payload, idem = arg(), arg(), arg(), arg()
  local max_attempts, run_at = arg(), opt(arg()) or now
  local tenant, actor, ckey, priority = opt(arg()), opt(arg()), opt(arg()), arg()
  local rkey, traceparent = opt(arg()), opt(arg())
  local existing = redis.call('HGET', key('idem'), idem)
  if existing then
    table.insert(answers, existing)
    table.insert(answers, 1)
  else
    local id = int(redis.call('INCR', key('seq')))
    remember(id, {
      name = name, queue = queue, payload = payload, key = idem,
      max_attempts = max_attempts, run_at = run_at, priority = priority,
      state = 'queued', attempts = '0', created = now, updated = now,
      tenant = tenant, actor = actor, ckey = ckey, rkey = rkey, tp = traceparent,
    })
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
