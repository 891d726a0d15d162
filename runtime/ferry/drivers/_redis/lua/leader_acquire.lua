-- Take or renew the scheduler lease for holder ARGV[1] at ARGV[2] until ARGV[3]; answers 1
-- when held. Taken only when free or lapsed; renewed (keeping the first acquisition
-- instant) by its holder, even after lapsing if nobody took it meanwhile. Each change of
-- holder increments the lease's term, a fencing token an operator can read beside it.
local holder, now, expires = ARGV[1], ARGV[2], ARGV[3]
local lease = redis.call('HMGET', key('leader'), 'holder', 'acquired', 'expires')
if lease[1] == holder then
  redis.call('HSET', key('leader'), 'expires', expires)
  return 1
end
if lease[1] and tonumber(lease[3]) > tonumber(now) then return 0 end
redis.call('HINCRBY', key('leader'), 'term', 1)
redis.call('HSET', key('leader'), 'holder', holder, 'acquired', now, 'expires', expires)
return 1
