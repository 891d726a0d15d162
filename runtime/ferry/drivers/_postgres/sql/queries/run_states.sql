-- The runs of :ids (their name, state and parent), locked until the operator's action that
-- reads them commits: a worker's claim or settle waits for it instead of slipping in
-- between, and so does a fan-out of one of them (enqueue_children locks its parent).
SELECT id AS pk, name, state, parent_id
FROM {schema}.jobs WHERE id = ANY (:ids::bigint[]) ORDER BY id
FOR UPDATE
