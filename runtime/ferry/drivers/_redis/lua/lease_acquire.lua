-- Take lease p.name for p.holder at p.now until p['until'], or renew it if p.holder holds
-- it unexpired; answers the lease when held. A take (of a free or lapsed lease, by
-- anyone) starts a new term; a renewal keeps it.
local p = params()
local lease = key('lease', p.name)
local held = redis.call('HMGET', lease, 'holder', 'term', 'acquired', 'expires')
local term, acquired = held[2], held[3]
if not held[1] or tonumber(held[4]) <= p.now then
  term, acquired = redis.call('HINCRBY', lease, 'term', 1), p.now
  redis.call('HSET', lease, 'holder', p.holder, 'acquired', int(p.now))
elseif held[1] ~= p.holder then
  return {}
end
redis.call('HSET', lease, 'expires', int(p['until']))
return lease_row(p.name, p.holder, term, acquired, p['until'])
