-- Where runs :ids (a JSON array of row ids) stand (handle.status, handle.result,
-- step.wait): one row per run found.
SELECT CAST(id AS TEXT) AS id, name, state, attempts, max_attempts, progress_current,
       progress_total, result, last_error_code, last_error_message, finished_at_ms,
       CAST(parent_id AS TEXT) AS parent_id
FROM ferry_jobs
WHERE id IN (SELECT value FROM json_each(:ids))
