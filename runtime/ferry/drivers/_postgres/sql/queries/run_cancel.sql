-- Cancel every run of $1 (ids) at $2 (error $3, $4): a queued or sleeping run ends
-- cancelled at once; a running one gets its cancel recorded for its worker to act on
-- (_cancelled.sql). Their descendants are run_cancel_descendants', the next statement of
-- the same transaction. Answers, per run found, its name and state before, and `changed`.
WITH target AS (
    SELECT id, name, state FROM {schema}.jobs WHERE id = ANY ($1::bigint[]) FOR UPDATE
),
{_cancelled}
SELECT t.id::text, t.name, t.state,
       t.id IN (SELECT id FROM cancelled UNION ALL SELECT id FROM requested) AS changed,
       (SELECT count(*) FROM told) AS told  -- reading `told` is what runs it
FROM target AS t
