-- Delete every run of $1 (ids) no worker or drain holds, with its steps (the foreign key
-- cascades); running and moving runs stay. Answers, per run found, its name and state,
-- and `changed` (deleted).
WITH target AS (
    SELECT id, name, state FROM {schema}.jobs WHERE id = ANY ($1::bigint[]) FOR UPDATE
),
deleted AS (
    DELETE FROM {schema}.jobs AS j
    USING target
    WHERE j.id = target.id AND target.state NOT IN ('running', 'moving')
    RETURNING j.id
)
SELECT t.id::text, t.name, t.state, t.id IN (SELECT id FROM deleted) AS changed
FROM target AS t
