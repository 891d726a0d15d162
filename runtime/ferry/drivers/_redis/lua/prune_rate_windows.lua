-- Forget up to p.batch rate windows that emptied at or before p.before (a window written
-- again since has a later expiry and stays); a row per window deleted.
local p = params()
local gone = redis.call('ZRANGEBYSCORE', key('rate-expiry'), '-inf', int(p.before), 'LIMIT', 0, p.batch)
for _, rkey in ipairs(gone) do
  redis.call('DEL', key('rate', rkey))
  redis.call('ZREM', key('rate-expiry'), rkey)
end
return deleted(#gone)
