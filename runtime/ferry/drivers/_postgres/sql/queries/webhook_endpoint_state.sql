-- The failure streak and disablement of endpoint $1 (no row: never attempted).
SELECT consecutive_failures, disabled_at_ms, disabled_reason
FROM {schema}.webhook_endpoints
WHERE endpoint_id = $1
