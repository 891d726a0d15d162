-- Forget up to p.batch records that expired at or before p.before (one still stored with a
-- later expiry — written again since — stays); a row per expiry entry gone.
local p = params()
local gone = redis.call('ZRANGEBYSCORE', key('record-expiry'), '-inf', int(p.before), 'LIMIT', 0, p.batch)
for _, member in ipairs(gone) do
  local sep = string.find(member, ':', 1, true)
  local length = tonumber(string.sub(member, 1, sep - 1))
  local space = key('record', string.sub(member, sep + 1, sep + length))
  local field = string.sub(member, sep + length + 1)
  if not record_live(redis.call('HGET', space, field), p.before) then redis.call('HDEL', space, field) end
  redis.call('ZREM', key('record-expiry'), member)
end
return deleted(#gone)
