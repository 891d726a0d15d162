-- The first keyspace migration: a store written before Redis kept a migration ledger has
-- the scheduler's lease and ticks, paused tasks, revoked sessions and the webhook and
-- backfill ledgers in keys of their own; each becomes a lease, a record or a log entry
-- (lua/lease_acquire.lua, record_put.lua, log_append.lua name the new keys), and the
-- maintenance slot becomes the maintenance lease. On a new store there is nothing to move.
-- Runs, steps, the other slots and the outbox keep their keys.
local function record(space, field, expires, document)
  redis.call('HSET', key('record', space), field, (expires or '') .. '|' .. document)
  if expires then
    redis.call('ZADD', key('record-expiry'), expires, #space .. ':' .. space .. field)
  end
end
local function log(space, field, document, at)
  local id = int(redis.call('INCR', key('log-seq')))
  redis.call('HSET', key('log-entry', id), 'log', #space .. ':' .. space .. field, 'doc', document)
  redis.call('ZADD', key('log', space, field), id, id)
  redis.call('ZADD', key('log-age'), at, id)
end
local function number(text)
  if text == nil or text == '' then return 'null' end
  return text
end

if redis.call('EXISTS', key('leader')) == 1 then
  redis.call('RENAME', key('leader'), key('lease', 'scheduler'))
end
-- The maintenance slot was a limit-1 concurrency slot; it becomes the lease of that name.
local maintainer = redis.call('ZRANGE', key('slot', ' maintenance'), 0, 0, 'WITHSCORES')
if maintainer[1] then
  redis.call('HSET', key('lease', 'maintenance'), 'holder', maintainer[1], 'term', '1',
    'acquired', maintainer[2], 'expires', maintainer[2])
  slot_drop(' maintenance', maintainer[1])
end
local ticks = redis.call('HGETALL', key('ticks'))
for i = 1, #ticks, 2 do
  local parts = {}
  for part in string.gmatch(ticks[i + 1] .. '|', '([^|]*)|') do table.insert(parts, part) end
  record('scheduler-ticks', ticks[i], nil,
    '[' .. parts[1] .. ',' .. number(parts[2]) .. ',' .. number(parts[3]) .. ']')
end
local paused = redis.call('HGETALL', key('paused-tasks'))
for i = 1, #paused, 2 do record('paused-tasks', paused[i], nil, paused[i + 1]) end
local sessions = redis.call('ZRANGE', key('sessions'), 0, -1, 'WITHSCORES')
for i = 1, #sessions, 2 do record('revoked-sessions', sessions[i], sessions[i + 1], 'true') end
local backfills = redis.call('HGETALL', key('backfills'))
for i = 1, #backfills, 2 do record('backfills', backfills[i], nil, backfills[i + 1]) end

-- Webhook attempts, oldest first, then each endpoint's streak counter as the log's
-- {"streak": n} marker, and its disablement as a record — every endpoint's, also one
-- disabled with no attempt logged (found by its key: the old store kept no list of them).
local attempts = redis.call('ZRANGE', key('wh', 'by-time'), 0, -1, 'WITHSCORES')
local ordered = {}
for i = 1, #attempts, 2 do table.insert(ordered, {tonumber(attempts[i]), attempts[i + 1]}) end
table.sort(ordered, function(a, b) return a[1] < b[1] end)
local endpoints = {}
for _, entry in ipairs(ordered) do
  local stored = redis.call('HMGET', key('wh', 'attempt', entry[1]), 'endpoint', 'doc')
  if stored[1] then
    log('webhook-attempts', stored[1], stored[2], entry[2])
    endpoints[stored[1]] = entry[2]
    redis.call('DEL', key('wh', 'attempt', entry[1]))
  end
end
local cursor, stem = '0', key('wh', 'endpoint', '')
repeat
  local found = redis.call('SCAN', cursor, 'MATCH', stem .. '*', 'COUNT', 1000)
  cursor = found[1]
  for _, name in ipairs(found[2]) do
    local endpoint = string.sub(name, #stem + 1)
    if endpoints[endpoint] == nil then endpoints[endpoint] = false end
  end
until cursor == '0'
for endpoint, at in pairs(endpoints) do
  local state = redis.call('HMGET', key('wh', 'endpoint', endpoint), 'failures', 'disabled_at',
    'disabled_reason')
  if at then
    log('webhook-attempts', endpoint, '{"streak":' .. (state[1] or '0') .. '}', at)
  end
  if state[2] then
    record('webhook-endpoints', endpoint, nil, '{"disabled_at_ms":' .. state[2]
      .. ',"disabled_reason":' .. cjson.encode(state[3] or '') .. '}')
  end
  redis.call('DEL', key('wh', 'endpoint', endpoint), key('wh', 'by-endpoint', endpoint))
end
redis.call('DEL', key('ticks'), key('paused-tasks'), key('sessions'), key('backfills'),
  key('wh', 'by-time'), key('wh', 'seq'))
