-- The first :limit children of run :id (those it enqueued with step.enqueue), oldest
-- first, with the columns a list shows (ferry_jobs_children walks them in order).
SELECT CAST(id AS TEXT) AS id, name, queue, state, attempts, max_attempts, tenant, run_at_ms,
       created_at_ms, updated_at_ms, last_error_code, last_error_message
FROM ferry_jobs
WHERE parent_id = :id
ORDER BY parent_id, id
LIMIT :limit
