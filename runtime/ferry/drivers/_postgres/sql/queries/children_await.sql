-- Mark run $1 as awaiting its children (step.wait, just before it parks) if worker $2
-- holds its lease at $3; answers a row when it did. What the mark does is the triggers' of
-- migration 0023 (ferry.drivers.fan_in): the park that follows ends at once when no child
-- is pending, and the last child to end wakes it.
UPDATE {schema}.jobs
SET awaiting_children = true
WHERE id = $1 AND state = 'running' AND locked_by = $2 AND lease_expires_at_ms > $3
RETURNING true
