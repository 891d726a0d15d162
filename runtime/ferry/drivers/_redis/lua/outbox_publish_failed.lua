-- Note why the publish of entry ARGV[1] by relay ARGV[2] failed (ARGV[3]), if that relay
-- still holds it; the entry is offered again once its lease lapses.
local entry = key('outbox', ARGV[1])
local held = redis.call('HMGET', entry, 'claimed_by', 'published')
if held[1] == ARGV[2] and not held[2] then
  redis.call('HSET', entry, 'last_error', ARGV[3])
end
return 1
