-- Import a batch of runs moved from another store (see RunTransfer.import_runs), at p.now:
-- p.runs (keys distinct), each its columns by ``_columns.stored_columns``' names as the
-- strings its hash keeps, and its steps (as step_record takes them) in the order they ran.
-- Each run with its steps is written by this one script, the holders of the keys it
-- skipped read in it too — what a SQL store does as a plan in one transaction — so it is
-- atomic, and on the AOF once answered. Answers a row per run, in order: the id it wrote it
-- under, or — its key already held — the holder (held, id, state, name, queue, payload,
-- created_at_ms) for the caller to judge.
local p = params()
local now = int(p.now)
local answers, woken = {}, {}
for i, run in ipairs(p.runs) do
  local holder = redis.call('HGET', key('idem'), run.idempotency_key)
  if holder then
    local held = fields(holder, {'state', 'name', 'queue', 'payload', 'created'})
    answers[i] = {held = true, id = holder, state = held.state, name = held.name,
      queue = held.queue, payload = held.payload, created_at_ms = tonumber(held.created)}
  else
    local id = int(redis.call('INCR', key('seq')))
    remember(id, {
      name = run.name, queue = run.queue, payload = run.payload, key = run.idempotency_key,
      max_attempts = run.max_attempts, run_at = run.run_at_ms, priority = run.priority,
      state = run.state, attempts = run.attempts, created = run.created_at_ms, updated = now,
      tenant = run.tenant, actor = run.actor, ckey = run.concurrency_key,
      err_code = run.last_error_code, err_msg = run.last_error_message,
      pcur = run.progress_current, ptot = run.progress_total, finished = run.finished_at_ms,
      rkey = run.rate_key,
    })
    if run.state ~= 'queued' then
      finished_add(id, run.state, run.queue, run.finished_at_ms or now)
    elseif enqueued(id, run.queue, run.priority, run.name, run.run_at_ms, now) then
      woken[run.queue] = true
    end
    for n, step in ipairs(run.steps) do
      redis.call('HSET', steps_key(id), step.name, n .. '|' .. step_document(step))
    end
    answers[i] = {id = id}
  end
end
for queue in pairs(woken) do wake(queue) end
return rows(answers)
