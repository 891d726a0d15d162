-- Switch the rotation at $1 (now) if partition $2 is still the current one and none is
-- being emptied: new ready rows go to the other partition from the next statement on, and
-- $2 is left to be emptied and truncated (ready_move, ready_retire). Answers the partition
-- to retire; no row when another process switched first.
UPDATE {schema}.ready_rotation
SET current_part = 1 - current_part, retiring_part = current_part, switched_at_ms = $1
WHERE current_part = $2 AND retiring_part IS NULL
RETURNING retiring_part
