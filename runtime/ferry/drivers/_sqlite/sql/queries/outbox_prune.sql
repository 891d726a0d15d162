-- Delete up to :batch entries published before :before.
DELETE FROM ferry_outbox
WHERE id IN (
    SELECT id FROM ferry_outbox
    WHERE published_at_ms < :before
    ORDER BY published_at_ms
    LIMIT :batch
)
