-- Delete runs :ids (their steps go with them) that are still `moving` under drain
-- :drain_id: the fence, so a run another drain took over is left to that drain. Answers
-- the ids deleted.
DELETE FROM {schema}.jobs
WHERE id = ANY(:ids) AND state = 'moving' AND locked_by = :drain_id
RETURNING CAST(id AS TEXT) AS id
