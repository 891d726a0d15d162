-- The first $2 children of run $1 (those it enqueued with step.enqueue), oldest first,
-- with the columns a list shows (jobs_children walks them in order).
SELECT id::text, name, queue, state, attempts, max_attempts, tenant, run_at_ms,
       created_at_ms, updated_at_ms, last_error_code, last_error_message
FROM {schema}.jobs
WHERE parent_id = $1
ORDER BY parent_id, id
LIMIT $2
