-- Take lease ARGV[1] for holder ARGV[2] at ARGV[3] until ARGV[4], or renew it if ARGV[2]
-- holds it unexpired; answers {holder, term, acquired, expires} when held, else nil. A
-- take (of a free or lapsed lease, by anyone) starts a new term; a renewal keeps it.
local lease = key('lease', ARGV[1])
local holder, now, expires = ARGV[2], ARGV[3], ARGV[4]
local held = redis.call('HMGET', lease, 'holder', 'term', 'acquired', 'expires')
if held[1] and tonumber(held[4]) > tonumber(now) then
  if held[1] ~= holder then return nil end
  redis.call('HSET', lease, 'expires', expires)
  return {holder, held[2], held[3], expires}
end
local term = redis.call('HINCRBY', lease, 'term', 1)
redis.call('HSET', lease, 'holder', holder, 'acquired', now, 'expires', expires)
return {holder, int(term), now, expires}
