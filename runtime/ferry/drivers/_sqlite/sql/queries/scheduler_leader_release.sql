-- Give up the scheduler lease if :holder has it, so a standby promotes on its next round.
DELETE FROM ferry_scheduler_leader WHERE id = 1 AND holder = :holder
