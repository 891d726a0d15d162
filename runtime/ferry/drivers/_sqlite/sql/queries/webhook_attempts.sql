-- The newest :limit delivery attempts to endpoint :endpoint_id, newest first.
SELECT webhook, endpoint_id, event_id, message_id, job_id, attempt, outcome,
       status, code, message, duration_ms, at_ms
FROM ferry_webhook_attempts
WHERE endpoint_id = :endpoint_id
ORDER BY id DESC
LIMIT :limit
