-- Delete the runs of :ids no worker or drain holds, with their steps (the foreign key
-- cascades); running and moving runs stay.
DELETE FROM {schema}.jobs WHERE id = ANY(:ids) AND state NOT IN ('running', 'moving')
RETURNING id
