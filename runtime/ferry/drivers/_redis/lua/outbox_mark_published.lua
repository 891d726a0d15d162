-- Mark entries ARGV[3..] published at ARGV[2] if relay ARGV[1] still holds them (the
-- claimer, never published yet); answers the ids that landed.
local relay, now = ARGV[1], ARGV[2]
local marked = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local entry = key('outbox', id)
  local held = redis.call('HMGET', entry, 'claimed_by', 'published')
  if held[1] == relay and not held[2] then
    redis.call('HSET', entry, 'published', now)
    redis.call('HDEL', entry, 'claimed_by', 'lease', 'last_error')
    redis.call('ZREM', key('outbox', 'leased'), pad(id))
    redis.call('ZADD', key('outbox', 'published'), now, pad(id))
    table.insert(marked, id)
  end
end
return marked
