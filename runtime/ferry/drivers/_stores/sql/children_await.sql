-- Mark run :id as awaiting its children (step.wait, just before it parks) if worker
-- :worker_id holds its lease at :now; answers a row when it did. What the mark does is
-- ferry.drivers.fan_in's (Postgres: the triggers of migration 0023; SQLite: the driver's
-- settle): the park that follows ends at once when no child is pending, and the last
-- child to end wakes it.
UPDATE {schema}.jobs
SET awaiting_children = TRUE
WHERE id = :id AND state = 'running' AND locked_by = :worker_id AND lease_expires_at_ms > :now
RETURNING id
