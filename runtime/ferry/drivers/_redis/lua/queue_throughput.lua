-- Runs completed per queue since p.since (queues with none left out), from each queue's
-- completed runs by finish instant.
local p = params()
local found = {}
for _, queue in ipairs(redis.call('SMEMBERS', key('queues'))) do
  local completed = redis.call('ZCOUNT', key('fin', 'completed', queue), '(' .. int(p.since), '+inf')
  if completed > 0 then found[#found + 1] = {queue = queue, completed = completed} end
end
return rows(found)
