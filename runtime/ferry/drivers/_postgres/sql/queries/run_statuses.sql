-- Where runs $1 stand (handle.status, handle.result, step.wait): one row per run found.
SELECT id::text, name, state, attempts, max_attempts, progress_current, progress_total,
       result::text, last_error_code, last_error_message, finished_at_ms,
       parent_id::text
FROM {schema}.jobs
WHERE id = ANY ($1::bigint[])
