-- The holders of an unexpired slot of key p.key at p.now, in code-point order.
local p = params()
local held = redis.call('ZRANGEBYSCORE', key('slot', p.key), '(' .. int(p.now), '+inf')
table.sort(held, bytes_less)
local found = {}
for i, holder in ipairs(held) do found[i] = {holder = holder} end
return rows(found)
