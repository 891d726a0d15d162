-- Give up the scheduler lease if holder ARGV[1] has it (a no-op otherwise); the term stays,
-- so the next holder's is higher still.
if redis.call('HGET', key('leader'), 'holder') == ARGV[1] then
  redis.call('HDEL', key('leader'), 'holder', 'acquired', 'expires')
end
return 1
