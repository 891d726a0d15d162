-- Cancel run $1 at $2 (error $3, $4): a queued or sleeping run ends cancelled at once; a
-- running one gets its cancel recorded for its worker to act on (_cancelled.sql). Its
-- descendants are run_cancel_descendants', the next statement of the same transaction.
-- Answers the run's name and state before, and `changed`; no row when the run is missing.
WITH target AS (
    SELECT id, name, state FROM {schema}.jobs WHERE id = $1 FOR UPDATE
),
{_cancelled}
SELECT name, state,
       EXISTS (SELECT FROM cancelled) OR EXISTS (SELECT FROM requested) AS changed,
       (SELECT count(*) FROM told) AS told  -- reading `told` is what runs it
FROM target
