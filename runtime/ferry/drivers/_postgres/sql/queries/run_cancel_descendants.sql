-- Cancel the descendants of run $1 that have not ended, at $2 (ferry.drivers.fan_in): the
-- second statement of an operator's cancel, after run_cancel in the same transaction. That
-- first statement locked run $1, which a concurrent enqueue_children waits for, so this
-- statement's snapshot holds every child written before the cancel, and none can be
-- written after it. Queued and sleeping descendants end cancelled at once (error $3, $4);
-- running ones get their cancel recorded for their workers, as run_cancel does. Each row is
-- locked first and judged on its newest version (a child a worker just claimed is asked,
-- not ended). Answers how many changed.
WITH RECURSIVE tree AS (
    SELECT id FROM {schema}.jobs WHERE parent_id = $1
    UNION ALL
    SELECT j.id FROM {schema}.jobs AS j JOIN tree ON j.parent_id = tree.id
),
target AS (
    SELECT j.id, j.state
    FROM {schema}.jobs AS j
    JOIN tree ON j.id = tree.id
    WHERE j.state IN ('queued', 'sleeping', 'running')
    FOR UPDATE OF j
),
cancelled AS (
    UPDATE {schema}.jobs AS j
    SET state = 'cancelled', finished_at_ms = $2, updated_at_ms = $2,
        last_error_code = $3, last_error_message = $4
    FROM target
    WHERE j.id = target.id AND target.state IN ('queued', 'sleeping')
    RETURNING j.id
),
requested AS (
    UPDATE {schema}.jobs AS j
    SET cancel_requested_at_ms = coalesce(j.cancel_requested_at_ms, $2), updated_at_ms = $2
    FROM target
    WHERE j.id = target.id AND target.state = 'running'
    RETURNING j.id
),
-- Result waiters hear of each run ended here.
told AS (
    SELECT pg_notify({ended_channel}, id::text) FROM cancelled
)
SELECT (SELECT count(*) FROM cancelled) + (SELECT count(*) FROM requested)
       + 0 * (SELECT count(*) FROM told)  -- reading `told` is what runs it
