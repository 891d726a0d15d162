-- The newest p.limit entries of the log of (p.space, p.key), newest first.
local p = params()
if p.limit <= 0 then return {} end
local ids = redis.call('ZREVRANGE', key('log', p.space, p.key), 0, p.limit - 1)
local found = {}
for _, id in ipairs(ids) do
  local doc = redis.call('HGET', key('log-entry', id), 'doc')
  if doc then found[#found + 1] = {value = doc} end
end
return rows(found)
