-- Add JSON ARGV[3] to the log of (space ARGV[1], key ARGV[2]), stamped ARGV[4]: an entry
-- hash, the log's sorted set of entry ids, and the age index prune walks.
local id = int(redis.call('INCR', key('log-seq')))
redis.call('HSET', key('log-entry', id), 'log', #ARGV[1] .. ':' .. ARGV[1] .. ARGV[2], 'doc', ARGV[3])
redis.call('ZADD', key('log', ARGV[1], ARGV[2]), id, id)
redis.call('ZADD', key('log-age'), ARGV[4], id)
return id
