-- Delete up to $2 records expired by $1; answers how many went.
WITH gone AS (
    DELETE FROM {schema}.records
    WHERE (space, key) IN (
        SELECT space, key FROM {schema}.records WHERE expires_at_ms <= $1 LIMIT $2
    )
    RETURNING 1
)
SELECT count(*) FROM gone
