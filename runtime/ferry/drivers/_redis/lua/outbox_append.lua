-- Append one outbox entry (type p.type, JSON p.payload) at p.now, appended under trace
-- context p.traceparent (when given); answers its id.
-- There is no application transaction on Redis to join: the entry exists once this
-- script has run, and the relay is woken at once.
local p = params()
local id = int(redis.call('INCR', key('outbox', 'seq')))
redis.call('HSET', key('outbox', id), 'type', p.type, 'payload', p.payload,
  'created', int(p.now), 'attempts', '0')
if p.traceparent then redis.call('HSET', key('outbox', id), 'tp', p.traceparent) end
redis.call('ZADD', key('outbox', 'new'), id, pad(id))
redis.call('PUBLISH', key('outbox', 'wake'), id)
return rows({{id = id}})
