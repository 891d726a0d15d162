-- Every record of p.space unexpired at p.now.
local p = params()
local stored = redis.call('HGETALL', key('record', p.space))
local found = {}
for i = 1, #stored, 2 do
  local value = record_live(stored[i + 1], p.now)
  if value then found[#found + 1] = {key = stored[i], value = value} end
end
return rows(found)
