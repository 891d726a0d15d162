-- Delete up to ARGV[2] webhook attempts made before ARGV[1] (endpoint streaks stay);
-- answers how many went.
local gone = redis.call('ZRANGEBYSCORE', key('wh', 'by-time'), '-inf', '(' .. ARGV[1],
  'LIMIT', 0, ARGV[2])
for _, id in ipairs(gone) do
  local attempt = key('wh', 'attempt', id)
  local endpoint = redis.call('HGET', attempt, 'endpoint')
  if endpoint then redis.call('ZREM', key('wh', 'by-endpoint', endpoint), id) end
  redis.call('DEL', attempt)
  redis.call('ZREM', key('wh', 'by-time'), id)
end
return #gone
