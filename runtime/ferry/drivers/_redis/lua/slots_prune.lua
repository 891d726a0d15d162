-- Forget up to ARGV[2] slots that expired at or before ARGV[1] (left by workers that died
-- holding them); answers how many went.
local gone = redis.call('ZRANGEBYSCORE', key('slots'), '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, member in ipairs(gone) do
  local sep = string.find(member, ':', 1, true)
  local length = tonumber(string.sub(member, 1, sep - 1))
  local holder = string.sub(member, sep + 1, sep + length)
  slot_drop(string.sub(member, sep + length + 1), holder)
end
return #gone
