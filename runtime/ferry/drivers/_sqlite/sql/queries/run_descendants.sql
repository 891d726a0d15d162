-- The descendants of the runs of :ids that have not ended (their children, their
-- children's children…), read under the write lock for an operator's cancel of those runs.
WITH RECURSIVE tree (id) AS (
    SELECT id FROM ferry_jobs WHERE parent_id IN (SELECT value FROM json_each(:ids))
    UNION ALL
    SELECT j.id FROM ferry_jobs AS j JOIN tree ON j.parent_id = tree.id
)
SELECT j.id AS pk, j.state, j.parent_id
FROM ferry_jobs AS j
JOIN tree ON j.id = tree.id
WHERE j.state IN ('queued', 'sleeping', 'running')
