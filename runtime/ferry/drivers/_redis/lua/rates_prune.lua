-- Forget up to ARGV[2] rate windows that emptied at or before ARGV[1] (a window written
-- again since has a later expiry and stays); answers how many went.
local gone = redis.call('ZRANGEBYSCORE', key('rate-expiry'), '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, rkey in ipairs(gone) do
  redis.call('DEL', key('rate', rkey))
  redis.call('ZREM', key('rate-expiry'), rkey)
end
return #gone
