-- The library every script starts with (scripts.py prepends it): key names, the run's
-- indexes, slots. KEYS[1] is the prefix with its hash tag, e.g. "{ferry}": every key of a
-- prefix is in one hash slot, which is what lets one script touch many of them.
--
-- Every value crosses as a string and is written back as one: instants and ids are
-- integers below 2^53, compared with tonumber() and formatted with %d, never tostring()
-- (which would write 1.7e+12). Optional arguments arrive as "" (absent) or "=" .. value.
local P = KEYS[1]

local function key(...)
  return P .. ':' .. table.concat({...}, ':')
end

local function job_key(id) return P .. ':job:' .. id end
local function steps_key(id) return P .. ':steps:' .. id end
local function int(n) return string.format('%d', n) end

-- Sorted-set members that order like the ids they carry (ZSETs break score ties by
-- member bytes, and "10" sorts before "9").
local function pad(id) return string.format('%020d', tonumber(id)) end

-- Strings in byte order (code-point order, for UTF-8), as table.sort's comparator: Lua's
-- own `<` follows the server's collation locale.
local function bytes_less(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

local function opt(value)
  if value == nil or value == '' then return nil end
  return string.sub(value, 2)
end

-- A statement's named parameters (statements.py): one JSON object in ARGV[1]; a parameter
-- that is None in Python is absent here (nil).
local function params() return cjson.decode(ARGV[1]) end

-- A stored integer as a row carries it: its digits, written into the row's JSON as they
-- are (cjson writes 14 significant digits, and a progress count may be any int64).
local WHOLE = {}
local function whole(digits) return setmetatable({digits}, WHOLE) end

-- A statement's rows, each a table of its columns, answered as JSON objects; an integral
-- number is written whole too (below 2^53, where a double holds it exactly).
local function rows(list)
  local answer = {}
  for i, row in ipairs(list) do
    local columns = {}
    for column, value in pairs(row) do
      local text
      if getmetatable(value) == WHOLE then
        text = value[1]
      elseif type(value) == 'number' and value % 1 == 0 and math.abs(value) < 2^53 then
        text = string.format('%d', value)
      else
        text = cjson.encode(value)
      end
      columns[#columns + 1] = cjson.encode(column) .. ':' .. text
    end
    answer[i] = '{' .. table.concat(columns, ',') .. '}'
  end
  return answer
end

-- A prune's rows: one (empty) row per item it deleted.
local function deleted(count)
  local answer = {}
  for i = 1, count do answer[i] = '{}' end
  return answer
end

-- An argument reader, so that one script can run two operations over one ARGV.
local function reader(args)
  local i = 0
  return function()
    i = i + 1
    return args[i]
  end
end

-- Store a record: "<expires>|<json>" ("" = never) in its space's hash, an expiring one
-- also indexed by expiry for prune (record_put and heartbeat write, record_live reads).
local function record_store(space, field, document, expires)
  redis.call('HSET', key('record', space), field, (expires or '') .. '|' .. document)
  if expires then
    redis.call('ZADD', key('record-expiry'), expires, #space .. ':' .. space .. field)
  end
end

-- A stored record's JSON document, unless it expired by now (nil then, or when none).
local function record_live(stored, now)
  if not stored then return nil end
  local bar = string.find(stored, '|', 1, true)
  local expires = string.sub(stored, 1, bar - 1)
  if expires ~= '' and tonumber(expires) <= now then return nil end
  return string.sub(stored, bar + 1)
end

-- A lease's row, as the statements on leases answer it.
local function lease_row(name, holder, term, acquired, expires)
  return rows({{name = name, holder = holder, term = tonumber(term),
    acquired_at_ms = tonumber(acquired), expires_at_ms = tonumber(expires)}})
end

-- A step is stored in its run's steps hash as "<n>|<document>", n counting the run's steps
-- (the order they were recorded in), the document a JSON object of kind, result,
-- started_at_ms, finished_at_ms and wake_at_ms in that order (as 0.1.0 wrote it). It is
-- built and read as text: decoding would cost a result its large numbers' digits (cjson
-- keeps 14) and turn its empty arrays into objects.
local function step_document(step)
  local function opt_ms(ms) return ms and int(ms) or 'null' end
  return '{"kind":' .. cjson.encode(step.kind) .. ',"result":' .. step.result
    .. ',"started_at_ms":' .. int(step.started_at_ms) .. ',"finished_at_ms":'
    .. opt_ms(step.finished_at_ms) .. ',"wake_at_ms":' .. opt_ms(step.wake_at_ms) .. '}'
end

-- Run `id`'s stored steps as the rows step_load answers (result as JSON text; each row's
-- JSON spliced as text: cheaper than a table to encode), in the order they ran, ties in
-- the order they were recorded.
local function run_steps(id)
  local stored, steps, found = redis.call('HGETALL', steps_key(id)), {}, {}
  for i = 1, #stored, 2 do
    local n, kind, result, started, finished, wake = string.match(stored[i + 1],
      '^(%d+)|{"kind":"(%a+)","result":(.*),"started_at_ms":(%-?%d+),'
      .. '"finished_at_ms":([%-%dnul]+),"wake_at_ms":([%-%dnul]+)}$')
    steps[#steps + 1] = {'{"job_id":"' .. id .. '","name":' .. cjson.encode(stored[i])
      .. ',"kind":"' .. kind .. '","result":' .. cjson.encode(result) .. ',"started_at_ms":'
      .. started .. ',"finished_at_ms":' .. finished .. ',"wake_at_ms":' .. wake .. '}',
      tonumber(started), tonumber(n)}
  end
  table.sort(steps, function(a, b) return a[2] < b[2] or (a[2] == b[2] and a[3] < b[3]) end)
  for i, step in ipairs(steps) do found[i] = step[1] end
  return found
end

-- Every field of run `id`'s hash, by name (empty when there is no such run).
local function stored_run(id)
  local stored, run = redis.call('HGETALL', job_key(id)), {}
  for i = 1, #stored, 2 do run[stored[i]] = stored[i + 1] end
  return run
end

-- A run's fields, by name, from one HMGET.
local function fields(id, names)
  local values = redis.call('HMGET', job_key(id), unpack(names))
  local run = {}
  for i, name in ipairs(names) do
    if values[i] then run[name] = values[i] end
  end
  return run
end

-- A run's hash fields (a `fields` table) as the columns the SQL statements answer for it:
-- their names, integers whole (`whole`: their stored digits). A claim's positional reply
-- is named in driver.py (_CLAIMED).
local COLUMNS = {key = 'idempotency_key', ckey = 'concurrency_key', rkey = 'rate_key',
  rdef = 'rate_deferred_until_ms', run_at = 'run_at_ms', created = 'created_at_ms',
  updated = 'updated_at_ms', lease = 'lease_expires_at_ms', finished = 'finished_at_ms',
  cancel_req = 'cancel_requested_at_ms', err_code = 'last_error_code',
  err_msg = 'last_error_message', pcur = 'progress_current', ptot = 'progress_total',
  parent = 'parent_id', pending = 'children_pending', tp = 'traceparent'}
local INTEGERS = {attempts = true, max_attempts = true, priority = true, run_at = true,
  created = true, updated = true, lease = true, finished = true, cancel_req = true,
  pcur = true, ptot = true, pending = true, rdef = true}

local function run_columns(id, run)
  local row = {id = id}
  for field, value in pairs(run) do
    row[COLUMNS[field] or field] = INTEGERS[field] and whole(value) or value
  end
  return row
end

-- The fields of a run a list shows (RunSummary's columns).
local SUMMARY = {'name', 'queue', 'state', 'attempts', 'max_attempts', 'tenant', 'run_at',
  'created', 'updated', 'err_code', 'err_msg'}

-- An operator's action on the runs of `ids` (ferry.drivers._stores.actions):
-- `act(id, run)` changes run `id` (its fields `names`, with name and state) if the action
-- applies to it, answering whether it did. Answers a row per run found: its id, name,
-- state before and whether it changed.
local function acted(ids, names, act)
  local found = {}
  for _, pk in ipairs(ids) do
    local id = int(pk)
    local run = fields(id, names)
    if run.state ~= nil then
      found[#found + 1] = {id = id, name = run.name, state = run.state, changed = act(id, run)}
    end
  end
  return rows(found)
end

-- The claim index: one sorted set per (queue, priority, job name) of the runs a claim may
-- take (queued, sleeping, and running with a lapsed lease), scored by run_at. The queue's
-- byte length makes the name unambiguous whatever characters a queue or job name holds.
local function group_key(queue, priority, name)
  return P .. ':due:' .. #queue .. ':' .. queue .. ':' .. priority .. ':' .. name
end

local function due_add(id, queue, priority, name, run_at)
  redis.call('ZADD', group_key(queue, priority, name), run_at, pad(id))
  redis.call('SADD', key('groups', queue), priority .. ':' .. name)
end

local function due_remove(id, queue, priority, name)
  local group = group_key(queue, priority, name)
  redis.call('ZREM', group, pad(id))
  if redis.call('ZCARD', group) == 0 then
    redis.call('SREM', key('groups', queue), priority .. ':' .. name)
  end
end

-- A run moves from one state to another: the state index and the per-queue counts.
local function restate(id, queue, from, to)
  if from then
    redis.call('ZREM', key('ix', 's', from), id)
    redis.call('HINCRBY', key('counts', queue), from, -1)
  end
  redis.call('ZADD', key('ix', 's', to), id, id)
  redis.call('HINCRBY', key('counts', queue), to, 1)
end

-- Ended runs by finish instant, per state and queue: prune, charts and latencies read them.
local function finished_add(id, state, queue, at)
  redis.call('ZADD', key('fin', state, queue), at, pad(id))
end

-- Slots: key -> holder -> expiry, each holder's keys, and every slot by expiry (prune).
local function slot_member(slot, holder) return #holder .. ':' .. holder .. slot end

local function slot_drop(slot, holder)
  redis.call('ZREM', key('slot', slot), holder)
  redis.call('SREM', key('held', holder), slot)
  redis.call('ZREM', key('slots'), slot_member(slot, holder))
end

-- Forget the expired holders of one key; answers how many went.
local function slot_expire(slot, now)
  local gone = redis.call('ZRANGEBYSCORE', key('slot', slot), '-inf', now)
  for _, holder in ipairs(gone) do slot_drop(slot, holder) end
  return #gone
end

-- Take one of `limit` slots of `slot` for `holder` until `expires` (a holder re-taking its
-- own slot only extends it); answers whether it holds one. Counting every live holder,
-- not only `limit` of them, keeps a lowered limit.
local function slot_take(slot, holder, limit, now, expires)
  slot_expire(slot, now)
  local slots = key('slot', slot)
  if not redis.call('ZSCORE', slots, holder) and redis.call('ZCARD', slots) >= limit then
    return false
  end
  redis.call('ZADD', slots, expires, holder)
  redis.call('SADD', key('held', holder), slot)
  redis.call('ZADD', key('slots'), expires, slot_member(slot, holder))
  return true
end

-- Every slot a run holds (its concurrency key and the fleet's caps) goes with its settle.
local function slots_release(holder)
  for _, slot in ipairs(redis.call('SMEMBERS', key('held', holder))) do
    slot_drop(slot, holder)
  end
end

-- ... and is extended with every renewal of its lease.
local function slots_extend(holder, expires)
  for _, slot in ipairs(redis.call('SMEMBERS', key('held', holder))) do
    redis.call('ZADD', key('slot', slot), 'XX', expires, holder)
    redis.call('ZADD', key('slots'), 'XX', expires, slot_member(slot, holder))
  end
end

-- Rate windows (ferry.drivers.rates): a key's last `limit` start instants and projected
-- starts, each a comma-separated ascending list in the hash `rate:<key>`; `rate-expiry`
-- orders the keys by when their window empties (prune).
local function instants(text, floor)
  local list = {}
  for item in string.gmatch(text or '', '[^,]+') do
    local instant = tonumber(item)
    if instant > floor then table.insert(list, instant) end
  end
  table.sort(list)
  return list
end

local function last(list, count)
  local kept = {}
  for i = math.max(#list - count + 1, 1), #list do table.insert(kept, int(list[i])) end
  return kept
end

-- ferry.drivers.rates.take for one run of key `rkey` (`booked`: it was deferred before):
-- answers nil when it may start now (its start is logged), else the instant it is
-- deferred to (booked). Runs of a claim are decided one after another, in claim order.
local function rate_take(rkey, limit, per, now, booked)
  local window = key('rate', rkey)
  local stored = redis.call('HMGET', window, 'starts', 'booked')
  local floor = now - per
  local starts, projected = instants(stored[1], floor), instants(stored[2], floor)
  local hint = nil
  if #starts < limit then
    table.insert(starts, now)
    if not booked then table.insert(projected, now) end
  else
    -- Never before the log of real starts has room, nor before the bookings ahead of it
    -- have had their turn.
    hint = starts[#starts - limit + 1] + per
    if #projected >= limit then hint = math.max(hint, projected[#projected - limit + 1] + per) end
    table.insert(projected, hint)
  end
  table.sort(projected)
  starts, projected = last(starts, limit), last(projected, limit)
  redis.call('HSET', window, 'starts', table.concat(starts, ','),
    'booked', table.concat(projected, ','))
  local latest = math.max(tonumber(starts[#starts] or now), tonumber(projected[#projected] or now))
  redis.call('ZADD', key('rate-expiry'), latest + per, rkey)
  return hint
end

-- The fence (ferry.drivers.settle.holds_lease): `worker` holds the run with a lease that
-- has not lapsed at `now`.
local function holds(run, worker, now)
  return run.state == 'running' and run.locked_by == worker
    and run.lease ~= nil and tonumber(run.lease) > tonumber(now)
end

local function wake(queue)
  redis.call('PUBLISH', key('wake'), queue)
end

-- Store new run `id` from `run` (field -> value; a nil field stays absent) under its
-- idempotency key, in every index, counted in its state: what forget takes away.
local function remember(id, run)
  local hash = {}
  for field, value in pairs(run) do
    table.insert(hash, field)
    table.insert(hash, value)
  end
  redis.call('HSET', job_key(id), unpack(hash))
  redis.call('HSET', key('idem'), run.key, id)
  redis.call('SADD', key('queues'), run.queue)
  redis.call('ZADD', key('ix', 'all'), id, id)
  redis.call('ZADD', key('ix', 'q', run.queue), id, id)
  redis.call('ZADD', key('ix', 'n', run.name), id, id)
  if run.tenant then redis.call('ZADD', key('ix', 't', run.tenant), id, id) end
  if run.parent then redis.call('ZADD', key('children', run.parent), id, id) end
  restate(id, run.queue, nil, run.state)
end

-- One enqueue request's 12 arguments (each an opt: `_columns.stored_columns`, as
-- `codec.request_args` sends them) read from `arg` as the run fields `admit` writes; its
-- run_at is absent when the request named none.
local function request_of(arg)
  local run = {}
  for _, field in ipairs({'name', 'queue', 'payload', 'key', 'max_attempts', 'run_at',
                          'tenant', 'actor', 'ckey', 'priority', 'rkey', 'tp'}) do
    run[field] = opt(arg())
  end
  return run
end

-- Write new queued run `run` (field -> value) unless its idempotency key (run.key) has a
-- run already; answers the run's id and whether the key had one (then nothing is written).
local function admit(run, now)
  local existing = redis.call('HGET', key('idem'), run.key)
  if existing then return existing, true end
  local id = int(redis.call('INCR', key('seq')))
  run.state, run.attempts, run.created, run.updated = 'queued', '0', now, now
  remember(id, run)
  return id, false
end

-- Queued run `id` becomes claimable from `run_at` (its group) and waits in its queue's
-- `queued` set (oldest first, for stats). Answers whether it is due at `now`: only a run
-- due now wakes workers; a delayed one is found by the poll when due.
local function enqueued(id, queue, priority, name, run_at, now)
  due_add(id, queue, priority, name, run_at)
  redis.call('ZADD', key('queued', queue), run_at, pad(id))
  return tonumber(run_at) <= tonumber(now)
end

-- Delete run `id` (in `state`, of `queue`) with its steps, index entries and idempotency
-- key, which is free again: what prune and a drain's remove leave of a run.
local function forget(id, state, queue)
  local run = fields(id, {'name', 'key', 'tenant', 'parent'})
  if run.key and redis.call('HGET', key('idem'), run.key) == id then
    redis.call('HDEL', key('idem'), run.key)
  end
  redis.call('ZREM', key('ix', 'all'), id)
  redis.call('ZREM', key('ix', 'q', queue), id)
  if run.name then redis.call('ZREM', key('ix', 'n', run.name), id) end
  redis.call('ZREM', key('ix', 's', state), id)
  if run.tenant then redis.call('ZREM', key('ix', 't', run.tenant), id) end
  if run.parent then redis.call('ZREM', key('children', run.parent), id) end
  redis.call('HINCRBY', key('counts', queue), state, -1)
  redis.call('DEL', job_key(id), steps_key(id), key('children', id))
end

-- The fan-in rules (ferry.drivers.fan_in). The runs that ended, told to result waiters on
-- the ended channel, at most 400 ids to a message.
local ENDED = {completed = true, dead = true, cancelled = true}

local function tell_ended(ids)
  for i = 1, #ids, 400 do
    redis.call('PUBLISH', key('ended'), table.concat(ids, ',', i, math.min(i + 399, #ids)))
  end
end

-- Run `parent`'s count of pending children changes by `change` (a fan-out, a child that
-- ended or came back); a parent sleeping awaiting its children whose count reaches 0 is
-- due at `now`, and workers are woken.
local function parent_counted(parent, change, now)
  local jk = job_key(parent)
  if redis.call('EXISTS', jk) == 0 then return end
  if redis.call('HINCRBY', jk, 'pending', change) > 0 then return end
  local run = fields(parent, {'state', 'await', 'queue', 'priority', 'name'})
  if run.state == 'sleeping' and run.await == '1' then
    redis.call('HSET', jk, 'run_at', now)
    due_add(parent, run.queue, run.priority, run.name, now)
    wake(run.queue)
  end
end

-- Run `id` (a child of `parent`, if any) moved from state `before` to `after` (nil: it was
-- deleted, an end for its parent if it had not ended): its parent counts it, and a run that
-- ended joins `ended` (for tell_ended).
local function state_moved(id, parent, before, after, now, ended)
  local change = (ENDED[before] and 1 or 0) - ((after == nil or ENDED[after]) and 1 or 0)
  if parent and change ~= 0 then parent_counted(parent, change, now) end
  if ENDED[after] and not ENDED[before] then table.insert(ended, id) end
end
