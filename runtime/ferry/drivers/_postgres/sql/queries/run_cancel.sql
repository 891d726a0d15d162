-- Cancel run $1 at $2: a queued or sleeping run ends cancelled at once; a running one gets
-- its cancel recorded for its worker to act on (see the heartbeat). Its descendants are
-- run_cancel_descendants', the next statement of the same transaction. Answers the run's name
-- and state before, and `changed`; no row when the run is missing.
WITH target AS (
    SELECT id, name, state FROM {schema}.jobs WHERE id = $1 FOR UPDATE
),
cancelled AS (
    UPDATE {schema}.jobs AS j
    SET state = 'cancelled', finished_at_ms = $2, updated_at_ms = $2,
        last_error_code = 'X_CANCELLED', last_error_message = 'cancelled by an operator'
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
),
-- Result waiters hear of a run ended here.
told AS (
    SELECT pg_notify({ended_channel}, id::text) FROM cancelled
)
SELECT name, state,
       EXISTS (SELECT FROM cancelled) OR EXISTS (SELECT FROM requested) AS changed,
       (SELECT count(*) FROM told) AS told  -- reading `told` is what runs it
FROM target
