-- Let claims from queue p.queue proceed again, and wake idle workers for its backlog.
local queue = params().queue
if redis.call('SREM', key('paused'), queue) == 1 then wake(queue) end
return {}
