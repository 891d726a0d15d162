-- Record one delivery attempt (JSON document ARGV[3]) to endpoint ARGV[1], made at ARGV[2],
-- and move the endpoint's failure streak in the same script: a delivery (ARGV[4] = "1")
-- resets it, anything else extends it. Answers the streak after this attempt.
local endpoint, at = ARGV[1], ARGV[2]
local id = int(redis.call('INCR', key('wh', 'seq')))
redis.call('HSET', key('wh', 'attempt', id), 'endpoint', endpoint, 'doc', ARGV[3])
redis.call('ZADD', key('wh', 'by-endpoint', endpoint), id, id)
redis.call('ZADD', key('wh', 'by-time'), at, id)
if ARGV[4] == '1' then
  redis.call('HSET', key('wh', 'endpoint', endpoint), 'failures', '0')
  return 0
end
return redis.call('HINCRBY', key('wh', 'endpoint', endpoint), 'failures', 1)
