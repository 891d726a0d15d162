-- A fragment the claims that take every picked ready row out of the set include
-- (settle_and_claim, settle_and_rated_claim): each row `picked` locked leaves the ready set,
-- whether its run was leased, deferred (ready again at its new instant) or no longer
-- claimable at the row's instant (a stale row). Found by its ctid — a TID scan of each
-- partition, the partition telling two equal ctids apart — never by a scan of the
-- partitions. _answer counts the stale rows from it.
dropped AS (
    DELETE FROM {schema}.ready AS r
    WHERE r.part < 2
      AND r.ctid = ANY (ARRAY(SELECT ctid FROM picked))
      AND (r.tableoid, r.ctid) IN (SELECT tableoid, ctid FROM picked)
    RETURNING r.id
)
