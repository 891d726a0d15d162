-- Where runs :ids stand (handle.status, handle.result, step.wait): one row per run found.
SELECT CAST(id AS TEXT) AS id, name, state, attempts, max_attempts, progress_current,
       progress_total, CAST(result AS TEXT) AS result, last_error_code, last_error_message,
       finished_at_ms, CAST(parent_id AS TEXT) AS parent_id
FROM {schema}.jobs
WHERE id = ANY(:ids)
