-- Delete up to :batch webhook attempt rows made before :before (endpoint streaks stay).
DELETE FROM ferry_webhook_attempts
WHERE id IN (
    SELECT id FROM ferry_webhook_attempts WHERE at_ms < :before ORDER BY id LIMIT :batch
)
