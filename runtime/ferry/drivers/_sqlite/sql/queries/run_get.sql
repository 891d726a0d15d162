-- One run with every column `jobs show` reports, and its steps in the order they ran (a
-- JSON array; each step's result as JSON text; rowid: insertion order within a ms).
SELECT CAST(id AS TEXT) AS id, name, queue, state, attempts, max_attempts, tenant,
       run_at_ms, created_at_ms, updated_at_ms, last_error_code, last_error_message,
       payload, idempotency_key, actor, concurrency_key, locked_by, lease_expires_at_ms,
       result, progress_current, progress_total, finished_at_ms, cancel_requested_at_ms,
       CAST(parent_id AS TEXT) AS parent_id, children_pending,
       (SELECT count(*) FROM ferry_jobs AS c WHERE c.parent_id = j.id) AS children_count,
       failures, traceparent, rate_key, rate_deferred_until_ms,
       (SELECT json_group_array(json_object(
                    'name', name, 'kind', kind, 'result', result,
                    'started_at_ms', started_at_ms, 'finished_at_ms', finished_at_ms,
                    'wake_at_ms', wake_at_ms))
        FROM (SELECT * FROM ferry_steps AS s WHERE s.job_id = j.id
              ORDER BY started_at_ms, rowid)) AS steps
FROM ferry_jobs AS j
WHERE id = :id
