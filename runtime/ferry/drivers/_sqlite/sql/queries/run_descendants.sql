-- The descendants of run :id that have not ended (read under the write lock, for an
-- operator's cancel of it): its children, their children, and so on.
WITH RECURSIVE tree (id) AS (
    SELECT id FROM ferry_jobs WHERE parent_id = :id
    UNION ALL
    SELECT j.id FROM ferry_jobs AS j JOIN tree ON j.parent_id = tree.id
)
SELECT j.id, j.state, j.parent_id
FROM ferry_jobs AS j
JOIN tree ON j.id = tree.id
WHERE j.state IN ('queued', 'sleeping', 'running')
