-- Runs that ended completed or dead at or after ARGV[1], counted per queue and per bucket
-- of ARGV[2] ms (bucket k starts at ARGV[1] + k * ARGV[2]); only buckets holding a run.
-- Answers queue, state, bucket start, count per bucket and state.
-- Each bucket costs two O(log n) reads (the next run at or after the cursor, then a
-- ZCOUNT of its bucket), so the work follows the buckets returned, not the runs in them.
local since, width = tonumber(ARGV[1]), tonumber(ARGV[2])
local answer = {}
local queues = redis.call('SMEMBERS', key('queues'))
table.sort(queues)
for _, queue in ipairs(queues) do
  for _, state in ipairs({'completed', 'dead'}) do
    local ended = key('fin', state, queue)
    local cursor = since
    while true do
      local next_run = redis.call('ZRANGEBYSCORE', ended, int(cursor), '+inf',
        'WITHSCORES', 'LIMIT', 0, 1)
      if #next_run == 0 then break end
      local at = tonumber(next_run[2])
      local start = since + (at - since) - ((at - since) % width)
      local count = redis.call('ZCOUNT', ended, int(start), '(' .. int(start + width))
      table.insert(answer, {queue, state, int(start), count})
      cursor = start + width
    end
  end
end
return answer
