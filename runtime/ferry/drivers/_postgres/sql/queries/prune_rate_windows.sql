-- Delete the rate windows whose every start and booking left the window before $1;
-- answers how many went.
WITH gone AS (
    DELETE FROM {schema}.rate_windows WHERE expires_at_ms <= $1 RETURNING 1
)
SELECT count(*) FROM gone
