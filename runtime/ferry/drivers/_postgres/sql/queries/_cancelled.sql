-- A fragment both cancel statements include (run_cancel for a run, run_cancel_descendants
-- for its descendants): each run of `target` (id and state, locked and read on its newest
-- version) that is queued or sleeping ends cancelled at $2 with error $3, $4; each running
-- one gets its cancel recorded for its worker to act on (see the heartbeat). Result
-- waiters hear of each run ended here (`told`, which the statement must read to run).
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
),
told AS (
    SELECT pg_notify({ended_channel}, id::text) FROM cancelled
)
