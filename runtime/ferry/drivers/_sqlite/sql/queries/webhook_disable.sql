-- Disable endpoint :endpoint_id at :at_ms for :reason (a disabled endpoint keeps its first).
INSERT INTO ferry_webhook_endpoints AS e (endpoint_id, disabled_at_ms, disabled_reason, updated_at_ms)
VALUES (:endpoint_id, :at_ms, :reason, :at_ms)
ON CONFLICT (endpoint_id) DO UPDATE
SET disabled_at_ms = coalesce(e.disabled_at_ms, :at_ms),
    disabled_reason = coalesce(e.disabled_reason, :reason),
    updated_at_ms = :at_ms
