-- Give up the scheduler lease if holder $1 has it, so a standby promotes on its next round.
DELETE FROM {schema}.scheduler_leader WHERE id = 1 AND holder = $1
