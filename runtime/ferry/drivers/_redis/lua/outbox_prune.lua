-- Delete up to p.batch entries published before p.before; a row per entry deleted.
local p = params()
local gone = redis.call('ZRANGEBYSCORE', key('outbox', 'published'), '-inf', '(' .. int(p.before),
  'LIMIT', 0, p.batch)
for _, member in ipairs(gone) do
  redis.call('DEL', key('outbox', int(tonumber(member))))
  redis.call('ZREM', key('outbox', 'published'), member)
end
return deleted(#gone)
