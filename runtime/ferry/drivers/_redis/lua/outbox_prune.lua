-- Delete up to ARGV[2] entries published before ARGV[1]; answers how many went.
local gone = redis.call('ZRANGEBYSCORE', key('outbox', 'published'), '-inf', '(' .. ARGV[1],
  'LIMIT', 0, ARGV[2])
for _, member in ipairs(gone) do
  redis.call('DEL', key('outbox', int(tonumber(member))))
  redis.call('ZREM', key('outbox', 'published'), member)
end
return #gone
