-- Lease up to ARGV[4] unpublished entries to relay ARGV[1] until ARGV[3] (ARGV[2] is now):
-- entries never claimed, and entries whose lease lapsed (a crashed relay, a failed
-- publish), lowest ids first. Answers id, type, payload, attempts, created, trace context
-- (false: none) per entry.
local relay, now, lease_until, limit = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
if limit <= 0 then return {} end
local pool = redis.call('ZRANGE', key('outbox', 'new'), 0, limit - 1)
for _, member in ipairs(redis.call('ZRANGEBYSCORE', key('outbox', 'leased'), '-inf', now,
    'LIMIT', 0, limit)) do
  table.insert(pool, member)
end
table.sort(pool)
local answer = {}
for i = 1, math.min(limit, #pool) do
  local member = pool[i]
  local id = int(tonumber(member))
  local entry = key('outbox', id)
  redis.call('ZREM', key('outbox', 'new'), member)
  redis.call('ZADD', key('outbox', 'leased'), lease_until, member)
  redis.call('HSET', entry, 'claimed_by', relay, 'lease', lease_until)
  local attempts = redis.call('HINCRBY', entry, 'attempts', 1)
  local values = redis.call('HMGET', entry, 'type', 'payload', 'created', 'tp')
  table.insert(answer, {id, values[1], values[2], attempts, values[3], values[4] or false})
end
return answer
