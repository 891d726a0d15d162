-- Forget record (p.space, p.key) (prune drops its expiry entry, if any).
local p = params()
redis.call('HDEL', key('record', p.space), p.key)
return {}
