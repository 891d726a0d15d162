-- The newest $2 delivery attempts to endpoint $1, newest first.
SELECT webhook, endpoint_id, event_id, message_id, job_id, attempt, outcome,
       status, code, message, duration_ms, at_ms
FROM {schema}.webhook_attempts
WHERE endpoint_id = $1
ORDER BY id DESC
LIMIT $2
