-- Add JSON p.value to the log of (p.space, p.key), stamped p.at_ms: an entry hash, the
-- log's sorted set of entry ids, and the age index prune walks.
local p = params()
local id = int(redis.call('INCR', key('log-seq')))
redis.call('HSET', key('log-entry', id), 'log', #p.space .. ':' .. p.space .. p.key, 'doc', p.value)
redis.call('ZADD', key('log', p.space, p.key), id, id)
redis.call('ZADD', key('log-age'), int(p.at_ms), id)
return {}
