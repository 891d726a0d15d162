-- Store JSON ARGV[3] under record ARGV[2] of space ARGV[1], expiring at ARGV[4] (opt), at
-- ARGV[5] — if the fence holds in this same script: lease ARGV[6] (opt) still held by
-- ARGV[7] in term ARGV[8] at ARGV[5], and run ARGV[9] (opt) still held by worker ARGV[10].
-- Stored by lib.lua's record_store. Answers 1 when it landed.
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
record_store(space, field, document, expires)
return 1
