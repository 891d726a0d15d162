-- Lapse lease ARGV[1] if holder ARGV[2] has it; the hash (and its term) stays for the
-- next taker.
local lease = key('lease', ARGV[1])
if redis.call('HGET', lease, 'holder') == ARGV[2] then redis.call('HSET', lease, 'expires', '0') end
return 1
