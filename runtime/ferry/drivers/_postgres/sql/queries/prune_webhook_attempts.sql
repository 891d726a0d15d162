-- Delete up to $2 webhook attempt rows made before $1; answers how many went. The
-- endpoints' streaks live in webhook_endpoints and stay.
WITH gone AS (
    DELETE FROM {schema}.webhook_attempts
    WHERE id IN (
        SELECT id FROM {schema}.webhook_attempts
        WHERE at_ms < $1
        ORDER BY id
        LIMIT $2
    )
    RETURNING 1
)
SELECT count(*) FROM gone
