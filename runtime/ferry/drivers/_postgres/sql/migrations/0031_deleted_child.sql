-- A child deleted before its end counts as its end for its parent (ferry.drivers.fan_in):
-- an operator's delete of a queued or sleeping child (`ferry jobs bulk delete`, the
-- dashboard's and MCP's delete: run_delete) lowers its parent's count of pending children,
-- and a parent sleeping awaiting its children whose count reaches 0 is due at once — the
-- parent's wait then reads the child as X_RUN_NOT_FOUND.
--
-- One rule in one place: migration 0023's child_ended(), which counts a child's end and
-- wakes its parent, is given the delete as well (TG_OP), and a row trigger on DELETE calls
-- it. A trigger, and not a change of the delete statement, because that statement is
-- shared with SQLite (whose store counts the parents in its transaction), and a trigger
-- counts whatever deletes the row, in the deleting statement's transaction.
--
-- Which deletes count: a child deleted while queued or sleeping. A child that ended was
-- counted when it ended (prune deletes only ended runs); a running run is never deleted;
-- a moving one is deleted by its drain once copied to the target store, where it lives on,
-- so that is no end.
--
-- The instant the parent is due from: a delete writes no instant of the driver's clock, so
-- the latest the two rows hold — the parent's park or the child's last change — both of
-- them past, so the parent is due at once (and migration 0030's trigger writes its ready
-- row, as for every parent made due sooner). A change of state keeps using the child's
-- own updated_at_ms, as before.
CREATE OR REPLACE FUNCTION {schema}.child_ended() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    parent record;
    change integer;
    parent_pk bigint;
    at_ms bigint;
BEGIN
    IF TG_OP = 'DELETE' THEN
        change := -1;  -- the trigger's WHEN: a child that had not ended
        parent_pk := OLD.parent_id;
        at_ms := OLD.updated_at_ms;
    ELSE
        change := (OLD.state IN ('completed', 'dead', 'cancelled'))::integer
                  - (NEW.state IN ('completed', 'dead', 'cancelled'))::integer;
        parent_pk := NEW.parent_id;
        at_ms := NEW.updated_at_ms;
    END IF;
    UPDATE {schema}.jobs AS p
    SET children_pending = p.children_pending + change,
        run_at_ms = CASE WHEN p.state = 'sleeping' AND p.awaiting_children
                              AND p.children_pending + change <= 0
                         THEN CASE WHEN TG_OP = 'DELETE'
                                   THEN GREATEST(at_ms, p.updated_at_ms) ELSE at_ms END
                         ELSE p.run_at_ms END
    WHERE p.id = parent_pk
    RETURNING p.queue, p.state = 'sleeping' AND p.awaiting_children
                       AND p.children_pending <= 0 AS woken
    INTO parent;
    IF parent.woken THEN
        PERFORM pg_notify({channel}, parent.queue);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_child_deleted
    AFTER DELETE ON {schema}.jobs
    FOR EACH ROW
    WHEN (OLD.parent_id IS NOT NULL AND OLD.state IN ('queued', 'sleeping'))
    EXECUTE FUNCTION {schema}.child_ended();

COMMENT ON COLUMN {schema}.jobs.children_pending IS 'How many runs this one enqueued with step.enqueue exist and have not ended (completed, dead, cancelled): a delete of one that had not ended counts as its end.';
