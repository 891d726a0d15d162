-- Stop claims from queue p.queue until it is resumed.
redis.call('SADD', key('paused'), params().queue)
return {}
