-- Store JSON ARGV[3] under record ARGV[2] of space ARGV[1], expiring at ARGV[4] (opt), at
-- ARGV[5] — if the fence holds in this same script: lease ARGV[6] (opt) still held by
-- ARGV[7] in term ARGV[8] at ARGV[5], and run ARGV[9] (opt) still held by worker ARGV[10].
-- A record is stored as "<expires>|<json>" ("" = never) in the space's hash; an expiring
-- one is also indexed by expiry for prune. Answers 1 when it landed.
local space, field, document, expires, now = ARGV[1], ARGV[2], ARGV[3], opt(ARGV[4]), ARGV[5]
local lease, run = opt(ARGV[6]), opt(ARGV[9])
if lease then
  local held = redis.call('HMGET', key('lease', lease), 'holder', 'term', 'expires')
  if held[1] ~= ARGV[7] or held[2] ~= ARGV[8] or tonumber(held[3]) <= tonumber(now) then
    return 0
  end
end
if run and not holds(fields(run, {'state', 'locked_by', 'lease'}), ARGV[10], now) then
  return 0
end
redis.call('HSET', key('record', space), field, (expires or '') .. '|' .. document)
if expires then redis.call('ZADD', key('record-expiry'), expires, #space .. ':' .. space .. field) end
return 1
