-- The partition being emptied (NULL: none), held for this transaction so one process at a
-- time retires it; no row when another process holds the rotation (it is tending or
-- retiring right now). Taken before ready_lock, so the partition is never held locked
-- while this waits.
SELECT retiring_part
FROM {schema}.ready_rotation
FOR UPDATE SKIP LOCKED
