-- Write a batch of children of run ARGV[1] (step.enqueue), fenced like a step record: only
-- if worker ARGV[2] holds it at ARGV[3] (now) and no cancel of it was asked for.
-- ARGV[4] is the count, then 12 per request as enqueue.lua reads them (its run_at is not
-- read: a child is due now). Each child names its parent and is indexed under
-- children:<parent>; the parent
-- counts those written (ferry.drivers.fan_in), not those whose key had a run.
-- Answers 'not-held' or 'cancel-requested' (nothing written), else id, deduplicated
-- (1/0) per request, in order.
local arg = reader(ARGV)
local parent, worker, now = arg(), arg(), arg()
local run = fields(parent, {'state', 'locked_by', 'lease', 'cancel_req'})
if not holds(run, worker, now) then return 'not-held' end
if run.cancel_req then return 'cancel-requested' end
local answers, woken, written = {}, {}, 0
for _ = 1, tonumber(arg()) do
  local name, queue, payload, idem, max_attempts = arg(), arg(), arg(), arg(), arg()
  arg()  -- run_at: a child is due now
  local tenant, actor, ckey, priority = opt(arg()), opt(arg()), opt(arg()), arg()
  local rkey, traceparent = opt(arg()), opt(arg())
  local id, deduplicated = admit({
    name = name, queue = queue, payload = payload, key = idem,
    max_attempts = max_attempts, run_at = now, priority = priority,
    tenant = tenant, actor = actor, ckey = ckey, rkey = rkey, tp = traceparent,
    parent = parent,
  }, now)
  if not deduplicated then
    enqueued(id, queue, priority, name, now, now)
    woken[queue] = true
    written = written + 1
  end
  table.insert(answers, id)
  table.insert(answers, deduplicated and 1 or 0)
end
if written > 0 then parent_counted(parent, written, now) end
for queue in pairs(woken) do wake(queue) end
return answers
