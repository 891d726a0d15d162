-- Delete runs :ids (a JSON array; their steps go with them) that are still `moving` under
-- drain :drain_id: the fence, so a run another drain took over is left to that drain.
DELETE FROM ferry_jobs
WHERE id IN (SELECT value FROM json_each(:ids)) AND state = 'moving' AND locked_by = :drain_id
RETURNING CAST(id AS TEXT) AS id
