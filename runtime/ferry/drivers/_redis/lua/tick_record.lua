-- Advance task ARGV[1] to checked-through ARGV[2], having fired occurrence ARGV[3] at
-- ARGV[4] (opt both). Fenced on the lease: it lands only while holder ARGV[5] holds an
-- unexpired lease at ARGV[6], so a node that lost leadership mid-round cannot move state
-- its successor is already reading. Every field only moves forward (protocol.advanced).
-- Answers 1 when it landed. A tick is stored as "checked|occurrence|fired" ("" = none).
local task, checked, occurrence, fired = ARGV[1], ARGV[2], opt(ARGV[3]), opt(ARGV[4])
local lease = redis.call('HMGET', key('leader'), 'holder', 'expires')
if lease[1] ~= ARGV[5] or tonumber(lease[2]) <= tonumber(ARGV[6]) then return 0 end
local function latest(a, b)
  if a == nil or a == '' then return b end
  if b == nil or b == '' then return a end
  if tonumber(a) >= tonumber(b) then return a end
  return b
end
local stored = redis.call('HGET', key('ticks'), task)
if stored then
  local old = {}
  for part in string.gmatch(stored .. '|', '([^|]*)|') do table.insert(old, part) end
  checked = latest(old[1], checked)
  occurrence = latest(old[2], occurrence)
  fired = latest(old[3], fired)
end
redis.call('HSET', key('ticks'), task, checked .. '|' .. (occurrence or '') .. '|' .. (fired or ''))
return 1
