-- Enable endpoint :endpoint_id again at :at_ms with a fresh failure streak.
UPDATE ferry_webhook_endpoints
SET disabled_at_ms = NULL, disabled_reason = NULL, consecutive_failures = 0,
    updated_at_ms = :at_ms
WHERE endpoint_id = :endpoint_id
