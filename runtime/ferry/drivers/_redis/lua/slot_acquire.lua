-- Take one of ARGV[3] slots of key ARGV[1] for holder ARGV[2] until ARGV[5] (ARGV[4] is
-- now); answers 1 when it holds one. Check and take are one script: no two acquirers
-- ever both see a free slot.
return slot_take(ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]) and 1 or 0
