-- Renew a batch of held leases, each fenced like a settle: the check and the extend are
-- one atomic unit, so a lease that lapsed (and may be claimed by another worker) is never
-- extended. Every slot a renewed run holds is extended with it.
-- ARGV: now, count, then 5 per renewal: id, worker, lease until, progress current and
-- total (opt), then a record to put with them (a worker's presence): space (opt), key,
-- JSON, expiry. Answers per renewal: 0 not renewed, 1 renewed, 2 renewed and an operator
-- asked to cancel the run (the worker aborts the body and settles it cancelled).
local arg = reader(ARGV)
local now = arg()
local answers = {}
for n = 1, tonumber(arg()) do
  local id, worker, lease_until = arg(), arg(), arg()
  local progress_current, progress_total = opt(arg()), opt(arg())
  local run = fields(id, {'state', 'locked_by', 'lease', 'cancel_req'})
  if not holds(run, worker, now) then
    answers[n] = 0
  else
    redis.call('HSET', job_key(id), 'lease', lease_until, 'updated', now)
    if progress_current then
      redis.call('HSET', job_key(id), 'pcur', progress_current, 'ptot', progress_total)
    end
    redis.call('ZADD', key('leases'), lease_until, pad(id))
    slots_extend(id, lease_until)
    answers[n] = run.cancel_req and 2 or 1
  end
end
local space, field, document, expires = opt(arg()), arg(), arg(), arg()
if space then record_store(space, field, document, expires) end
return answers
