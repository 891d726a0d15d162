-- The claim and the settle, as functions: `claim`, `settle` and `settle_and_claim` call
-- them (one script can run both over one ARGV, which is what settle_and_claim is).

-- Lapsed leases moved back to the claim index per claim. Unconditional (whatever queue or
-- job the claimer serves) and bounded, so a mass crash is worked off a batch at a time and
-- the run lands where the worker that serves it looks.
local RESCUE_BATCH = 100

-- Runs a claim may examine past ones it cannot take (their concurrency key is full): the
-- bound on one script's work. A key that is found full is skipped without a lookup.
local SCAN_BUDGET = 1000

local function rescue_lapsed(now)
  local lapsed = redis.call('ZRANGEBYSCORE', key('leases'), '-inf', now, 'LIMIT', 0, RESCUE_BATCH)
  for _, member in ipairs(lapsed) do
    redis.call('ZREM', key('leases'), member)
    local id = int(tonumber(member))
    local run = fields(id, {'state', 'queue', 'priority', 'name', 'run_at', 'lease'})
    if run.state == 'running' and run.lease and tonumber(run.lease) <= tonumber(now) then
      due_add(id, run.queue, run.priority, run.name, run.run_at)
    end
  end
end

-- The claim groups of `queues` (nil: every queue) and `names` (nil: every job), by
-- priority, highest first; a paused queue's only when `with_paused`.
local function claim_levels(queues, names, with_paused)
  if queues == nil then queues = redis.call('SMEMBERS', key('queues')) end
  local levels, order = {}, {}
  for _, queue in ipairs(queues) do
    if with_paused or redis.call('SISMEMBER', key('paused'), queue) == 0 then
      for _, member in ipairs(redis.call('SMEMBERS', key('groups', queue))) do
        local sep = string.find(member, ':', 1, true)
        local priority, name = string.sub(member, 1, sep - 1), string.sub(member, sep + 1)
        if names == nil or names[name] then
          local level = tonumber(priority)
          if levels[level] == nil then
            levels[level] = {}
            table.insert(order, level)
          end
          table.insert(levels[level], {
            key = group_key(queue, priority, name), offset = 0, pending = 0, done = false,
          })
        end
      end
    end
  end
  table.sort(order, function(a, b) return a > b end)
  local sorted = {}
  for i, level in ipairs(order) do sorted[i] = levels[level] end
  return sorted
end

local function before(a, b)
  if a.score ~= b.score then return a.score < b.score end
  return a.member < b.member
end

-- Visit the runs of `levels` scored at most `upto` in claim order: by priority, then
-- within a priority by score (run_at) and id across the level's groups — a merge of each
-- group's page, refilling a group before its next run could be passed over. Stops when
-- `visit(candidate)` answers false; `visit` sets `candidate.removed` when it took the run
-- out of its group.
local function walk(levels, upto, page, visit)
  local function fetch(group, pool)
    local found = redis.call(
      'ZRANGEBYSCORE', group.key, '-inf', upto, 'WITHSCORES', 'LIMIT', group.offset, page)
    local n = #found / 2
    group.offset, group.pending, group.done = group.offset + n, n, n < page
    for i = 1, #found, 2 do
      table.insert(pool, {member = found[i], score = tonumber(found[i + 1]), group = group})
    end
  end
  for _, groups in ipairs(levels) do
    local pool = {}
    for _, group in ipairs(groups) do fetch(group, pool) end
    table.sort(pool, before)
    local i = 1
    while i <= #pool do
      local candidate = pool[i]
      i = i + 1
      local go_on = visit(candidate)
      local group = candidate.group
      if candidate.removed then group.offset = group.offset - 1 end
      if not go_on then return end
      group.pending = group.pending - 1
      if group.pending == 0 and not group.done then
        local rest = {}
        for j = i, #pool do table.insert(rest, pool[j]) end
        fetch(group, rest)
        table.sort(rest, before)
        pool, i = rest, 1
      end
    end
  end
end

-- Lease up to `limit` due runs to `worker`, counting an attempt; with `limits` (job name
-- -> limit) also take each keyed run's slot, skipping runs whose key is full; with `rates`
-- (job name -> limit, per) apply each rated run's window first (rate_take): a run over its
-- limit is put back queued, due when its key has room, not leased, and answered with that
-- instant as its 16th field (false for a leased run).
-- Reads: worker, now, lease until, limit, queue count (-1: any) and queues, name count
-- (-1: any) and names, limit count and (name, limit) pairs, rate count and (name, limit,
-- per) triples. Answers 16 fields per run (the 14th its trace context).
local function claim(arg)
  local worker, now, lease_until, limit = arg(), arg(), arg(), tonumber(arg())
  local queues, names, limits = nil, nil, {}
  local count = tonumber(arg())
  if count >= 0 then
    queues = {}
    for i = 1, count do queues[i] = arg() end
  end
  count = tonumber(arg())
  if count >= 0 then
    names = {}
    for _ = 1, count do names[arg()] = true end
  end
  for _ = 1, tonumber(arg()) do
    local name = arg()
    limits[name] = tonumber(arg())
  end
  local rates = {}
  for _ = 1, tonumber(arg()) do
    local name = arg()
    rates[name] = {limit = tonumber(arg()), per = tonumber(arg())}
  end
  local claimed = {}
  if limit <= 0 then return claimed end
  rescue_lapsed(now)
  local full, budget = {}, SCAN_BUDGET + limit
  local page = math.max(limit, 10)

  -- Put a run its rate limit has no room for back queued, due at `hint`: no lease, no
  -- attempt; answered so that the worker counts it and wakes for it then.
  local function defer(id, run, candidate, hint)
    due_remove(id, run.queue, run.priority, run.name)
    candidate.removed = true
    redis.call('HSET', job_key(id), 'state', 'queued', 'run_at', hint, 'rdef', hint,
      'updated', now)
    if run.state ~= 'queued' then
      redis.call('HDEL', job_key(id), 'locked_by', 'lease')
      restate(id, run.queue, run.state, 'queued')
    end
    enqueued(id, run.queue, run.priority, run.name, hint, now)
    local more = redis.call('HMGET', job_key(id),
      'key', 'attempts', 'max_attempts', 'tenant', 'actor', 'created')
    table.insert(claimed, {
      id, run.name, run.queue, 'null', more[1], more[2], more[3], more[4] or false,
      more[5] or false, run.ckey or false, hint, more[6], false, false, 0, hint,
    })
  end

  -- Examine one candidate: take it, skip it (its key is full), or drop it from the index
  -- (it is no longer claimable: a heartbeat from a worker whose clock lags, say).
  local function take(candidate)
    local id = int(tonumber(candidate.member))
    local run = fields(id, {'state', 'run_at', 'lease', 'name', 'queue', 'priority', 'ckey',
      'await', 'rkey', 'rdef'})
    local state = run.state
    local claimable = ((state == 'queued' or state == 'sleeping')
        and tonumber(run.run_at) <= tonumber(now))
      or (state == 'running' and run.lease ~= nil and tonumber(run.lease) <= tonumber(now))
    if not claimable then
      redis.call('ZREM', candidate.group.key, candidate.member)
      candidate.removed = true
      return
    end
    local rate = rates[run.name]
    if rate and run.rkey then
      local slot_limit = limits[run.name]
      if slot_limit and run.ckey and full[run.ckey] then return end  -- spend no start on it
      local hint = rate_take(run.rkey, rate.limit, rate.per, tonumber(now), run.rdef ~= nil)
      if hint then
        defer(id, run, candidate, int(hint))
        return
      end
    end
    local slot_held = false
    local slot_limit = limits[run.name]
    if slot_limit and run.ckey then
      if full[run.ckey] or not slot_take(run.ckey, id, slot_limit, now, lease_until) then
        full[run.ckey] = true  -- skipped, never claimed only to be deferred
        return
      end
      slot_held = true
    end
    due_remove(id, run.queue, run.priority, run.name)
    candidate.removed = true
    if state == 'queued' then redis.call('ZREM', key('queued', run.queue), pad(id)) end
    redis.call('HSET', job_key(id), 'state', 'running', 'locked_by', worker,
      'lease', lease_until, 'updated', now)
    if run.await then redis.call('HDEL', job_key(id), 'await') end  -- a claim ends a park
    local attempt = redis.call('HINCRBY', job_key(id), 'attempts', 1)
    restate(id, run.queue, state, 'running')
    redis.call('ZADD', key('leases'), lease_until, pad(id))
    local more = redis.call('HMGET', job_key(id),
      'payload', 'key', 'max_attempts', 'tenant', 'actor', 'created', 'tp')
    table.insert(claimed, {
      id, run.name, run.queue, more[1], more[2], attempt, more[3], more[4] or false,
      more[5] or false, run.ckey or false, run.run_at, more[6], lease_until,
      more[7] or false, slot_held and 1 or 0, false,
    })
  end

  walk(claim_levels(queues, names, false), now, page, function(candidate)
    budget = budget - 1
    take(candidate)
    return #claimed < limit and budget > 0
  end)
  return claimed
end

-- The newest 16384 bytes of `text` (ferry.drivers.failures' bound), cut at a character:
-- never inside a UTF-8 sequence.
local function newest(text)
  if #text <= 16384 then return text end
  local start = #text - 16384 + 1
  while start <= #text do
    local byte = string.byte(text, start)
    if byte < 0x80 or byte >= 0xC0 then break end
    start = start + 1
  end
  return string.sub(text, start)
end

-- Settle a batch of attempts, each fenced on its claimer; answers 1/0 per settle. The
-- fan-in rules (ferry.drivers.fan_in) apply to each landed settle: a park on a wait whose
-- children all ended is due now, a child that ended counts in its parent, and the runs
-- that ended are told to result waiters.
-- The rules are ferry.drivers.settle's: each settle arrives with its planned state and
-- whether it gives the attempt back, requeues, finishes the run. The one rule that
-- depends on the stored run, the cancel override, is applied here as that module says:
-- a run an operator asked to cancel never goes back to the queue.
-- Reads: now, the override's error code and message, count, then 13 per settle: id,
-- worker, state, gives back (1/0), requeues (1/0), finishes (1/0), run_at (opt), result
-- (opt JSON text), error code (opt), error message (opt), progress current, total (opt),
-- a failed attempt's record (opt: appended to the run's newest 16 kB of them).
local function settle(arg)
  local now, cancel_code, cancel_message = arg(), arg(), arg()
  local landed, woken, ended = {}, {}, {}
  for n = 1, tonumber(arg()) do
    local id, worker, planned = arg(), arg(), arg()
    local gives_back, requeues, finishes = arg() == '1', arg() == '1', arg() == '1'
    local run_at, result, error_code, error_message = opt(arg()), opt(arg()), opt(arg()), opt(arg())
    local progress_current, progress_total = opt(arg()), opt(arg())
    local failure = opt(arg())
    local run = fields(id, {'state', 'locked_by', 'lease', 'queue', 'priority', 'name',
      'run_at', 'cancel_req', 'parent', 'pending', 'await'})
    if not holds(run, worker, now) then
      landed[n] = 0
    else
      local jk = job_key(id)
      local override = run.cancel_req ~= nil and requeues
      local state = override and 'cancelled' or planned
      local ends = finishes or override
      if gives_back then redis.call('HINCRBY', jk, 'attempts', -1) end
      if not ends then run.run_at = run_at or now end  -- an ended run keeps its run_at
      if state == 'sleeping' and run.await and tonumber(run.pending or '0') <= 0 then
        run.run_at = now  -- parked on a wait whose children all ended meanwhile: due now
      end
      local update = {'state', state, 'run_at', run.run_at, 'updated', now}
      if planned == 'completed' and result then
        table.insert(update, 'result'); table.insert(update, result)
      end
      if override then
        for _, v in ipairs({'err_code', cancel_code, 'err_msg', cancel_message}) do
          table.insert(update, v)
        end
      elseif error_code then
        for _, v in ipairs({'err_code', error_code, 'err_msg', error_message or ''}) do
          table.insert(update, v)
        end
      end
      if progress_current then
        for _, v in ipairs({'pcur', progress_current, 'ptot', progress_total}) do
          table.insert(update, v)
        end
      end
      if ends then table.insert(update, 'finished'); table.insert(update, now) end
      if failure then
        table.insert(update, 'failures')
        table.insert(update, newest((redis.call('HGET', jk, 'failures') or '') .. failure))
      end
      redis.call('HSET', jk, unpack(update))
      redis.call('HDEL', jk, 'locked_by', 'lease')
      if run.await and state ~= 'sleeping' then redis.call('HDEL', jk, 'await') end
      redis.call('ZREM', key('leases'), pad(id))
      slots_release(id)
      restate(id, run.queue, 'running', state)
      if state == 'queued' then
        -- A run put straight back (interrupted by a drain, retried at once) wakes workers.
        if enqueued(id, run.queue, run.priority, run.name, run.run_at, now) then
          woken[run.queue] = true
        end
      elseif state == 'sleeping' then
        due_add(id, run.queue, run.priority, run.name, run.run_at)
        if tonumber(run.run_at) <= tonumber(now) then woken[run.queue] = true end
      end
      if ends then finished_add(id, state, run.queue, now) end
      state_moved(id, run.parent, 'running', state, now, ended)
      landed[n] = 1
    end
  end
  for queue in pairs(woken) do wake(queue) end
  tell_ended(ended)
  return landed
end
