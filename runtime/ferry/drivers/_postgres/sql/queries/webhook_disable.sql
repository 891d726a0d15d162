-- Disable endpoint $1 at $2 for reason $3 (a disabled endpoint keeps its first reason).
INSERT INTO {schema}.webhook_endpoints AS e (endpoint_id, disabled_at_ms, disabled_reason, updated_at_ms)
VALUES ($1, $2, $3, $2)
ON CONFLICT (endpoint_id) DO UPDATE
SET disabled_at_ms = coalesce(e.disabled_at_ms, $2),
    disabled_reason = coalesce(e.disabled_reason, $3),
    updated_at_ms = $2
