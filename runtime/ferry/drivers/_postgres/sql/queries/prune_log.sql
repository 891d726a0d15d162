-- Delete up to $2 log entries stamped before $1; answers how many went.
WITH gone AS (
    DELETE FROM {schema}.record_log
    WHERE id IN (SELECT id FROM {schema}.record_log WHERE at_ms < $1 ORDER BY id LIMIT $2)
    RETURNING 1
)
SELECT count(*) FROM gone
