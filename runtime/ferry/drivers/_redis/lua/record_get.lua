-- The value of record (p.space, p.key) unless it expired by p.now.
local p = params()
local value = record_live(redis.call('HGET', key('record', p.space), p.key), p.now)
if not value then return {} end
return rows({{value = value}})
