-- Lapse lease p.name if p.holder has it; the hash (and its term) stays for the next taker.
local p = params()
local lease = key('lease', p.name)
if redis.call('HGET', lease, 'holder') == p.holder then redis.call('HSET', lease, 'expires', '0') end
return {}
