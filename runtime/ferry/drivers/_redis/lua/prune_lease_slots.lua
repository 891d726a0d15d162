-- Forget up to p.batch slots that expired at or before p.before (left by workers that died
-- holding them); a row per slot deleted.
local p = params()
local gone = redis.call('ZRANGEBYSCORE', key('slots'), '-inf', int(p.before), 'LIMIT', 0, p.batch)
for _, member in ipairs(gone) do
  local sep = string.find(member, ':', 1, true)
  local length = tonumber(string.sub(member, 1, sep - 1))
  local holder = string.sub(member, sep + 1, sep + length)
  slot_drop(string.sub(member, sep + length + 1), holder)
end
return deleted(#gone)
