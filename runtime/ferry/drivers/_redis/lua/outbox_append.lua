-- Append one outbox entry (type ARGV[1], JSON payload ARGV[2]) at ARGV[3], appended under
-- trace context ARGV[4] (opt); answers its id.
-- There is no application transaction on Redis to join: the entry exists once this
-- script has run, and the relay is woken at once.
local id = int(redis.call('INCR', key('outbox', 'seq')))
redis.call('HSET', key('outbox', id), 'type', ARGV[1], 'payload', ARGV[2],
  'created', ARGV[3], 'attempts', '0')
local traceparent = opt(ARGV[4])
if traceparent then redis.call('HSET', key('outbox', id), 'tp', traceparent) end
redis.call('ZADD', key('outbox', 'new'), id, pad(id))
redis.call('PUBLISH', key('outbox', 'wake'), id)
return id
