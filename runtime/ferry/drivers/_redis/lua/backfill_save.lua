-- Save checkpoint ARGV[5] under backfill key ARGV[4] if worker ARGV[2] still holds run
-- ARGV[1] at ARGV[3]; answers 1 when it landed (fenced like a step, so a worker that lost
-- its lease cannot rewind the checkpoint its successor writes).
local id, worker, now, backfill, document = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if not holds(fields(id, {'state', 'locked_by', 'lease'}), worker, now) then return 0 end
redis.call('HSET', key('backfills'), backfill, document)
return 1
