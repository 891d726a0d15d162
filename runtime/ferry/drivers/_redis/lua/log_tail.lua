-- The newest ARGV[3] entries of the log of (space ARGV[1], key ARGV[2]), newest first.
local ids = redis.call('ZREVRANGE', key('log', ARGV[1], ARGV[2]), 0, tonumber(ARGV[3]) - 1)
local docs = {}
for i, id in ipairs(ids) do docs[i] = redis.call('HGET', key('log-entry', id), 'doc') end
return docs
