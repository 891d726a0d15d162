-- Write a batch of runs; a key that already has a run resolves to it instead.
-- ARGV: now, count, then 10 per request: name, queue, payload (JSON text), idempotency
-- key, max_attempts, run_at (opt; absent: now), tenant (opt), actor (opt), concurrency
-- key (opt), priority. Answers id, deduplicated (1/0) per request, in order.
-- The check and the write are one script, so two enqueues of one key never both write;
-- a later request of the same key in the batch finds the earlier one's run.
local arg = reader(ARGV)
local now = arg()
local answers = {}
local woken = {}
for _ = 1, tonumber(arg()) do
  local name, queue, payload, idem = arg(), arg(), arg(), arg()
  local max_attempts, run_at = arg(), opt(arg()) or now
  local tenant, actor, ckey, priority = opt(arg()), opt(arg()), opt(arg()), arg()
  local existing = redis.call('HGET', key('idem'), idem)
  if existing then
    table.insert(answers, existing)
    table.insert(answers, 1)
  else
    local id = int(redis.call('INCR', key('seq')))
    local run = {
      'name', name, 'queue', queue, 'payload', payload, 'key', idem,
      'max_attempts', max_attempts, 'run_at', run_at, 'priority', priority,
      'state', 'queued', 'attempts', '0', 'created', now, 'updated', now,
    }
    if tenant then table.insert(run, 'tenant'); table.insert(run, tenant) end
    if actor then table.insert(run, 'actor'); table.insert(run, actor) end
    if ckey then table.insert(run, 'ckey'); table.insert(run, ckey) end
    redis.call('HSET', job_key(id), unpack(run))
    redis.call('HSET', key('idem'), idem, id)
    redis.call('SADD', key('queues'), queue)
    redis.call('ZADD', key('ix', 'all'), id, id)
    redis.call('ZADD', key('ix', 'q', queue), id, id)
    redis.call('ZADD', key('ix', 'n', name), id, id)
    if tenant then redis.call('ZADD', key('ix', 't', tenant), id, id) end
    restate(id, queue, nil, 'queued')
    redis.call('ZADD', key('queued', queue), run_at, pad(id))
    due_add(id, queue, priority, name, run_at)
    -- Only a run due now wakes workers; a delayed one is found by the poll when due.
    if tonumber(run_at) <= tonumber(now) then woken[queue] = true end
    table.insert(answers, id)
    table.insert(answers, 0)
  end
end
for queue in pairs(woken) do wake(queue) end
return answers
