-- One run with every column `jobs show` reports (its steps: run_steps).
SELECT CAST(id AS TEXT) AS id, name, queue, state, attempts, max_attempts, tenant,
       run_at_ms, created_at_ms, updated_at_ms, last_error_code, last_error_message,
       payload, idempotency_key, actor, concurrency_key, locked_by, lease_expires_at_ms,
       result, progress_current, progress_total, finished_at_ms, cancel_requested_at_ms,
       CAST(parent_id AS TEXT) AS parent_id, children_pending,
       (SELECT count(*) FROM ferry_jobs AS c WHERE c.parent_id = j.id) AS children_count,
       failures, traceparent, rate_key, rate_deferred_until_ms
FROM ferry_jobs AS j
WHERE id = :id
