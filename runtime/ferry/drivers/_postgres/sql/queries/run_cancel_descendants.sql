-- Cancel the descendants of the runs of $1 (ids) that have not ended, at $2, with error
-- $3, $4 (ferry.drivers.fan_in): the second statement of an operator's cancel, after
-- run_cancel in the same transaction. That first statement locked the runs, which a concurrent
-- enqueue_children waits for, so this statement's snapshot holds every child written
-- before the cancel, and none can be written after it. Each descendant is locked first
-- and judged on its newest version (a child a worker just claimed is asked, not ended),
-- then cancelled as run_cancel cancels a run (_cancelled.sql). Answers how many changed.
WITH RECURSIVE tree AS (
    SELECT id FROM {schema}.jobs WHERE parent_id = ANY ($1::bigint[])
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
{_cancelled}
SELECT (SELECT count(*) FROM cancelled) + (SELECT count(*) FROM requested)
       + 0 * (SELECT count(*) FROM told)  -- reading `told` is what runs it
