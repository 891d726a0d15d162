-- Let claims from queue :queue proceed again, and wake idle workers for its backlog.
WITH resumed AS (
    DELETE FROM {schema}.paused_queues WHERE queue = :queue RETURNING queue
)
SELECT pg_notify({channel}, queue) FROM resumed
