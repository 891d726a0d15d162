-- Delete up to $2 entries published before $1; answers how many went.
WITH gone AS (
    DELETE FROM {schema}.outbox
    WHERE id IN (
        SELECT id FROM {schema}.outbox
        WHERE published_at_ms < $1
        ORDER BY published_at_ms
        LIMIT $2
    )
    RETURNING 1
)
SELECT count(*) FROM gone
