-- Mark entries p.ids published at p.now if relay p.relay_id still holds them (the
-- claimer, never published yet); a row per entry that landed.
local p = params()
local now = int(p.now)
local marked = {}
for _, n in ipairs(p.ids) do
  local id = int(n)
  local entry = key('outbox', id)
  local held = redis.call('HMGET', entry, 'claimed_by', 'published')
  if held[1] == p.relay_id and not held[2] then
    redis.call('HSET', entry, 'published', now)
    redis.call('HDEL', entry, 'claimed_by', 'lease', 'last_error')
    redis.call('ZREM', key('outbox', 'leased'), pad(id))
    redis.call('ZADD', key('outbox', 'published'), now, pad(id))
    marked[#marked + 1] = {id = n}
  end
end
return rows(marked)
