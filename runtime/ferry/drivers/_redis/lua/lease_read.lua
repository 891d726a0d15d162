-- Lease p.name if it is unexpired at p.now.
local p = params()
local held = redis.call('HMGET', key('lease', p.name), 'holder', 'term', 'acquired', 'expires')
if not (held[1] and held[4]) or tonumber(held[4]) <= p.now then return {} end
return lease_row(p.name, held[1], held[2], held[3], held[4])
