-- Runs that ended completed or dead at or after p.since, counted per queue and per bucket
-- of p.bucket ms (bucket k starts at p.since + k * p.bucket), as outcome_series.sql answers
-- them: only buckets holding a run, by queue then start.
-- Each bucket costs two O(log n) reads (the next run at or after the cursor, then a
-- ZCOUNT of its bucket), so the work follows the buckets returned, not the runs in them.
local p = params()
local since, width = p.since, p.bucket
local found = {}
local queues = redis.call('SMEMBERS', key('queues'))
table.sort(queues)
for _, queue in ipairs(queues) do
  local buckets, starts = {}, {}
  for _, state in ipairs({'completed', 'dead'}) do
    local ended = key('fin', state, queue)
    local cursor = since
    while true do
      local next_run = redis.call('ZRANGEBYSCORE', ended, int(cursor), '+inf',
        'WITHSCORES', 'LIMIT', 0, 1)
      if #next_run == 0 then break end
      local at = tonumber(next_run[2])
      local start = since + (at - since) - ((at - since) % width)
      if not buckets[start] then
        buckets[start] = {queue = queue, start_ms = start, completed = 0, dead = 0}
        starts[#starts + 1] = start
      end
      buckets[start][state] = redis.call('ZCOUNT', ended, int(start), '(' .. int(start + width))
      cursor = start + width
    end
  end
  table.sort(starts)
  for _, start in ipairs(starts) do found[#found + 1] = buckets[start] end
end
return rows(found)
