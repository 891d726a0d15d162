-- Record one delivery attempt and move the endpoint's failure streak in one statement:
-- a delivery resets it, anything else extends it. Answers the streak after this attempt.
-- $1 webhook, $2 endpoint, $3 event, $4 message id, $5 run id, $6 attempt, $7 outcome,
-- $8 HTTP status, $9 code, $10 message, $11 duration ms, $12 at (now).
WITH attempt AS (
    INSERT INTO {schema}.webhook_attempts (
        webhook, endpoint_id, event_id, message_id, job_id, attempt, outcome,
        status, code, message, duration_ms, at_ms
    )
    VALUES ($1, $2, $3, $4, $5, $6, $7::text, $8, $9, $10, $11, $12)
)
INSERT INTO {schema}.webhook_endpoints AS e (endpoint_id, consecutive_failures, updated_at_ms)
VALUES ($2, CASE WHEN $7::text = 'delivered' THEN 0 ELSE 1 END, $12)
ON CONFLICT (endpoint_id) DO UPDATE
SET consecutive_failures =
        CASE WHEN $7::text = 'delivered' THEN 0 ELSE e.consecutive_failures + 1 END,
    updated_at_ms = $12
RETURNING consecutive_failures
