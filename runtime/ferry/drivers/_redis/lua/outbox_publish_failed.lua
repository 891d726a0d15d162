-- Note why the publish of entry p.id by relay p.relay_id failed (p.error), if that relay
-- still holds it; the entry is offered again once its lease lapses.
local p = params()
local entry = key('outbox', int(p.id))
local held = redis.call('HMGET', entry, 'claimed_by', 'published')
if held[1] == p.relay_id and not held[2] then
  redis.call('HSET', entry, 'last_error', p.error)
end
return {}
