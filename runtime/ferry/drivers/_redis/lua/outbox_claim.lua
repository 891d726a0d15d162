-- Lease up to p.limit unpublished entries to p.relay_id until p['until']: entries never
-- claimed, and entries whose lease lapsed by p.now (a crashed relay, a failed publish),
-- lowest ids first.
local p = params()
if p.limit <= 0 then return {} end
local lease_until = int(p['until'])
local pool = redis.call('ZRANGE', key('outbox', 'new'), 0, p.limit - 1)
for _, member in ipairs(redis.call('ZRANGEBYSCORE', key('outbox', 'leased'), '-inf',
    int(p.now), 'LIMIT', 0, p.limit)) do
  table.insert(pool, member)
end
table.sort(pool)
local claimed = {}
for i = 1, math.min(p.limit, #pool) do
  local member = pool[i]
  local entry = key('outbox', int(tonumber(member)))
  redis.call('ZREM', key('outbox', 'new'), member)
  redis.call('ZADD', key('outbox', 'leased'), lease_until, member)
  redis.call('HSET', entry, 'claimed_by', p.relay_id, 'lease', lease_until)
  local attempts = redis.call('HINCRBY', entry, 'attempts', 1)
  local values = redis.call('HMGET', entry, 'type', 'payload', 'created', 'tp')
  claimed[i] = {id = tonumber(member), type = values[1], payload = values[2],
    attempts = attempts, created_at_ms = tonumber(values[3]), traceparent = values[4] or nil}
end
return rows(claimed)
