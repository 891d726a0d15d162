-- One run with every column `jobs show` reports, and its steps in the order they ran.
SELECT j.id::text, j.name, j.queue, j.state, j.attempts, j.max_attempts, j.tenant,
       j.run_at_ms, j.created_at_ms, j.updated_at_ms, j.last_error_code,
       j.last_error_message, j.payload::text, j.idempotency_key, j.actor,
       j.concurrency_key, j.locked_by, j.lease_expires_at_ms, j.result::text,
       j.progress_current, j.progress_total, j.finished_at_ms, j.cancel_requested_at_ms,
       j.parent_id::text, j.children_pending,
       (SELECT count(*) FROM {schema}.jobs AS c WHERE c.parent_id = j.id) AS children_count,
       j.failures, j.traceparent, j.rate_key, j.rate_deferred_until_ms,
       (SELECT coalesce(json_agg(json_build_object(
                    'name', s.name, 'kind', s.kind, 'result', s.result,
                    'started_at_ms', s.started_at_ms, 'finished_at_ms', s.finished_at_ms,
                    'wake_at_ms', s.wake_at_ms
                ) ORDER BY s.started_at_ms, s.seq), '[]')::text
        FROM {schema}.steps AS s
        WHERE s.job_id = j.id) AS steps
FROM {schema}.jobs AS j
WHERE j.id = $1
