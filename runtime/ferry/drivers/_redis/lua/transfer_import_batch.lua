-- Write runs as a drain carries them (see RunTransfer.import_runs), at ARGV[1] (now):
-- ARGV[2] runs, each as 19 opts (`_columns.stored_columns`: name, queue, payload, key,
-- state, attempts, max_attempts, priority, run_at, tenant, actor, concurrency key, error
-- code, error message, progress current, total, created, finished, rate key), then its
-- step count and (name, document) pairs in the order they ran.
-- A key already held writes nothing and answers the holder (the caller judges whether it
-- is the same run). Answers per run: "imported", id — or "held", id, state, name, queue,
-- payload, created. Each run with its steps is written by this one script: atomic, and
-- on the AOF once answered.
local arg = reader(ARGV)
local now = arg()
local answers, woken = {}, {}
for _ = 1, tonumber(arg()) do
  local name, queue, payload, idem = opt(arg()), opt(arg()), opt(arg()), opt(arg())
  local state, attempts, max_attempts = opt(arg()), opt(arg()), opt(arg())
  local priority, run_at = opt(arg()), opt(arg())
  local tenant, actor, ckey = opt(arg()), opt(arg()), opt(arg())
  local error_code, error_message = opt(arg()), opt(arg())
  local progress_current, progress_total = opt(arg()), opt(arg())
  local created, finished, rkey = opt(arg()), opt(arg()), opt(arg())
  local steps = {}
  for _ = 1, tonumber(arg()) do
    local step = arg()
    table.insert(steps, {step, arg()})
  end
  local holder = redis.call('HGET', key('idem'), idem)
  if holder then
    local held = fields(holder, {'state', 'name', 'queue', 'payload', 'created'})
    table.insert(answers, {'held', holder, held.state or false, held.name or false,
      held.queue or false, held.payload or false, held.created or false})
  else
    local id = int(redis.call('INCR', key('seq')))
    remember(id, {
      name = name, queue = queue, payload = payload, key = idem,
      max_attempts = max_attempts, run_at = run_at, priority = priority,
      state = state, attempts = attempts, created = created, updated = now,
      tenant = tenant, actor = actor, ckey = ckey, err_code = error_code,
      err_msg = error_message, pcur = progress_current, ptot = progress_total,
      finished = finished, rkey = rkey,
    })
    if state ~= 'queued' then
      finished_add(id, state, queue, finished or now)
    elseif enqueued(id, queue, priority, name, run_at, now) then
      woken[queue] = true
    end
    for n, step in ipairs(steps) do
      redis.call('HSET', steps_key(id), step[1], n .. '|' .. step[2])
    end
    table.insert(answers, {'imported', id})
  end
end
for queue in pairs(woken) do wake(queue) end
return answers
