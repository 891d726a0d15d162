-- Put runs $2 still `moving` under drain $1 back in the state they had, at $3 (now);
-- answers the ids released. A released queued run is found by the workers' next poll.
UPDATE {schema}.jobs
SET state = moving_from, moving_from = NULL, moving_to = NULL, locked_by = NULL,
    updated_at_ms = $3
WHERE id = ANY ($2::bigint[]) AND state = 'moving' AND locked_by = $1
RETURNING id::text
