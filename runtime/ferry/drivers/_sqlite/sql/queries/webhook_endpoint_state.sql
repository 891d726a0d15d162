-- The failure streak and disablement of endpoint :endpoint_id (no row: never attempted).
SELECT consecutive_failures, disabled_at_ms, disabled_reason
FROM ferry_webhook_endpoints
WHERE endpoint_id = :endpoint_id
