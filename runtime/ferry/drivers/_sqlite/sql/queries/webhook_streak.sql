-- Move endpoint :endpoint_id's failure streak for an attempt with :outcome at :at_ms: a
-- delivery resets it, anything else extends it. Answers the streak after the attempt.
INSERT INTO ferry_webhook_endpoints AS e (endpoint_id, consecutive_failures, updated_at_ms)
VALUES (:endpoint_id, CASE WHEN :outcome = 'delivered' THEN 0 ELSE 1 END, :at_ms)
ON CONFLICT (endpoint_id) DO UPDATE
SET consecutive_failures =
        CASE WHEN :outcome = 'delivered' THEN 0 ELSE e.consecutive_failures + 1 END,
    updated_at_ms = :at_ms
RETURNING consecutive_failures
