-- Delete runs $2 (their steps go with them) that are still `moving` under drain $1: the
-- fence, so a run another drain took over is left to that drain. Answers the ids deleted.
DELETE FROM {schema}.jobs
WHERE id = ANY ($2::bigint[]) AND state = 'moving' AND locked_by = $1
RETURNING id::text
