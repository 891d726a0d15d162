-- Disable endpoint ARGV[1] at ARGV[2] for reason ARGV[3], unless it already is disabled
-- (the first disablement's instant and reason stay).
local endpoint = key('wh', 'endpoint', ARGV[1])
if redis.call('HEXISTS', endpoint, 'disabled_at') == 0 then
  redis.call('HSET', endpoint, 'disabled_at', ARGV[2], 'disabled_reason', ARGV[3])
end
return 1
