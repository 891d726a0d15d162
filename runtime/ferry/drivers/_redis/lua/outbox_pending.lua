-- How many entries are not yet published: those never claimed, and those leased.
local pending = redis.call('ZCARD', key('outbox', 'new')) + redis.call('ZCARD', key('outbox', 'leased'))
return rows({{pending = pending}})
