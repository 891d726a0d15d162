-- The runs of :ids (their name, state and parent), read under the write lock the
-- operator's action holds until it commits.
SELECT id AS pk, name, state, parent_id
FROM ferry_jobs WHERE id IN (SELECT value FROM json_each(:ids))
ORDER BY id
