-- Cancel every run of $1 (ids) at $2: a queued or sleeping run ends cancelled at once; a
-- running one gets its cancel recorded for its worker to act on (see the heartbeat).
-- Answers, per run found, its name and state before, and `changed`.
WITH target AS (
    SELECT id, name, state FROM {schema}.jobs WHERE id = ANY ($1::bigint[]) FOR UPDATE
),
cancelled AS (
    UPDATE {schema}.jobs AS j
    SET state = 'cancelled', finished_at_ms = $2, updated_at_ms = $2,
        last_error_code = $3, last_error_message = $4
    FROM target
    WHERE j.id = target.id AND target.state IN ('queued', 'sleeping')
    RETURNING j.id
),
requested AS (
    UPDATE {schema}.jobs AS j
    SET cancel_requested_at_ms = coalesce(j.cancel_requested_at_ms, $2), updated_at_ms = $2
    FROM target
    WHERE j.id = target.id AND target.state = 'running'
    RETURNING j.id
)
SELECT t.id::text, t.name, t.state,
       t.id IN (SELECT id FROM cancelled UNION ALL SELECT id FROM requested) AS changed
FROM target AS t
