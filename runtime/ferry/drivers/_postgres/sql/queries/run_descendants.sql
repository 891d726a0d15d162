-- The descendants of the runs of :ids that have not ended (their children, their
-- children's children…), for an operator's cancel of those runs, after run_states locked
-- them in the same transaction: a concurrent enqueue_children waits for that lock, so this
-- statement's snapshot holds every child written before the cancel, and none can be
-- written after it. Each descendant is locked and judged on its newest version (a child a
-- worker just claimed is asked to stop, not ended).
WITH RECURSIVE tree AS (
    SELECT id FROM {schema}.jobs WHERE parent_id = ANY (:ids::bigint[])
    UNION ALL
    SELECT j.id FROM {schema}.jobs AS j JOIN tree ON j.parent_id = tree.id
)
SELECT j.id AS pk, j.state, j.parent_id
FROM {schema}.jobs AS j
JOIN tree ON j.id = tree.id
WHERE j.state IN ('queued', 'sleeping', 'running')
ORDER BY j.id
FOR UPDATE OF j
