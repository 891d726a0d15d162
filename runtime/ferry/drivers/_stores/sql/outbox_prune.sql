-- Delete up to :batch entries published before :before; a row per entry deleted.
DELETE FROM {schema}.outbox
WHERE id IN (
    SELECT id FROM {schema}.outbox
    WHERE published_at_ms < :before
    ORDER BY published_at_ms
    LIMIT :batch
)
RETURNING 1
