-- Enable endpoint $1 again at $2 with a fresh failure streak.
UPDATE {schema}.webhook_endpoints
SET disabled_at_ms = NULL, disabled_reason = NULL, consecutive_failures = 0, updated_at_ms = $2
WHERE endpoint_id = $1
