-- Delete up to p.batch log entries stamped before p.before; a row per entry deleted.
local p = params()
local gone = redis.call('ZRANGEBYSCORE', key('log-age'), '-inf', '(' .. int(p.before), 'LIMIT', 0, p.batch)
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
return deleted(#gone)
