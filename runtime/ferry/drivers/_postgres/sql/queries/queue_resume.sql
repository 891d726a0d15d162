-- Let claims from queue $1 proceed again, and wake idle workers for its backlog.
WITH resumed AS (
    DELETE FROM {schema}.paused_queues WHERE queue = $1 RETURNING queue
)
SELECT pg_notify({channel}, queue) FROM resumed
