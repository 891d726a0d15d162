-- Forget up to ARGV[2] records that expired at or before ARGV[1] (one still stored with a
-- later expiry — written again since — stays); answers how many went.
local gone = redis.call('ZRANGEBYSCORE', key('record-expiry'), '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, member in ipairs(gone) do
  local sep = string.find(member, ':', 1, true)
  local length = tonumber(string.sub(member, 1, sep - 1))
  local space = key('record', string.sub(member, sep + 1, sep + length))
  local field = string.sub(member, sep + length + 1)
  local stored = redis.call('HGET', space, field)
  if stored then
    local expires = string.match(stored, '^([^|]*)|')
    if expires ~= '' and tonumber(expires) <= tonumber(ARGV[1]) then redis.call('HDEL', space, field) end
  end
  redis.call('ZREM', key('record-expiry'), member)
end
return #gone
