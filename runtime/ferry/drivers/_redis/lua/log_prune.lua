-- Delete up to ARGV[2] log entries stamped before ARGV[1]; answers how many went.
local gone = redis.call('ZRANGEBYSCORE', key('log-age'), '-inf', '(' .. ARGV[1], 'LIMIT', 0, ARGV[2])
for _, id in ipairs(gone) do
  local log = redis.call('HGET', key('log-entry', id), 'log')
  if log then
    local sep = string.find(log, ':', 1, true)
    local length = tonumber(string.sub(log, 1, sep - 1))
    redis.call('ZREM', key('log', string.sub(log, sep + 1, sep + length), string.sub(log, sep + length + 1)), id)
  end
  redis.call('DEL', key('log-entry', id))
  redis.call('ZREM', key('log-age'), id)
end
return #gone
