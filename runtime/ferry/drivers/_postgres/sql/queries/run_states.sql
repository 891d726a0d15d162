-- The runs of :ids (their name and state), locked until the operator's action that reads
-- them commits: a worker's claim or settle waits for it instead of slipping in between.
SELECT id AS pk, name, state FROM {schema}.jobs WHERE id = ANY (:ids::bigint[]) ORDER BY id
FOR UPDATE
