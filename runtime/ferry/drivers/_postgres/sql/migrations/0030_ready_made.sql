-- The runs made claimable by a write that is not one of the statements writing the ready
-- set themselves (migration 0029's `ready`: enqueue, a fan-out's children, the settle,
-- retry, a drain's import, the rescue and promotion, a rate deferral):
--
-- * a drain's release of a run back to the queue (moving -> queued or sleeping): a
--   statement that stays the same on every SQL driver, so it names no table of this one;
-- * a waiting run made due sooner in place: the fan-in triggers of migration 0023 wake a
--   parent whose last child ended by moving its run_at_ms to that instant, from within
--   whatever statement ended the child (a settle, a claim, a cancel) or parked the parent.
--
-- Its ready row is written here, at its new instant; a row it had before is stale from
-- then on (the claim that meets it drops it). A released run goes to ready_later when it
-- is due after the lookahead from the release (its updated_at_ms, the driver's clock); a
-- run made sooner goes where claims look, as the fan-in makes it due at once — its
-- updated_at_ms is the park's, which may be long past, so it cannot tell how soon.
-- Every other write of a run's state or instant costs the WHEN test alone (a settle or a
-- claim changes the state from or to running, a deferral makes the run later).
CREATE FUNCTION {schema}.run_made_ready() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {schema}.ready (part, id, priority, run_at_ms, queue, name, concurrency_key)
    SELECT CASE WHEN OLD.state = 'moving'
                     AND NEW.run_at_ms > NEW.updated_at_ms + {ready_lookahead_ms}
                THEN 2 ELSE r.current_part END,
           NEW.id, NEW.priority, NEW.run_at_ms, NEW.queue, NEW.name, NEW.concurrency_key
    FROM {schema}.ready_rotation AS r;
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_made_ready
    AFTER UPDATE OF state, run_at_ms ON {schema}.jobs
    FOR EACH ROW
    WHEN (NEW.state IN ('queued', 'sleeping')
          AND (OLD.state = 'moving'
               OR (OLD.state IN ('queued', 'sleeping') AND NEW.run_at_ms < OLD.run_at_ms)))
    EXECUTE FUNCTION {schema}.run_made_ready();

COMMENT ON FUNCTION {schema}.run_made_ready() IS 'Writes the ready row of a run released by a drain or made due sooner in place (fan-in); the statements that make runs claimable otherwise write their own.';
