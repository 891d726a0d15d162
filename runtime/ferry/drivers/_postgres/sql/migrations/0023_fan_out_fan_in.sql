-- Fan-out and fan-in (step.enqueue, step.wait): a run's parent, the count of its children
-- that have not ended, and whether it is parked waiting for them. The rules are
-- ferry.drivers.fan_in's. The enqueue of children counts them in its own statement
-- (enqueue_children); the triggers below apply the rest after every statement that
-- changes a run's state — a settle, a claim, an operator's cancel or retry — in its
-- transaction. Triggers and not a part of the worker's round-trip statement: one
-- statement cannot update a row twice (PostgreSQL keeps only one of the two updates),
-- and a child's settle and its parent's settle or claim often share that statement. A
-- row trigger runs after the statement, so it sees the parent as the statement left it.
-- Both fire only for rows their WHEN names: children ending or coming back, and parents
-- marked awaiting; every other run costs the WHEN test alone.
ALTER TABLE {schema}.jobs
    ADD COLUMN parent_id         bigint,
    ADD COLUMN children_pending  integer NOT NULL DEFAULT 0,
    ADD COLUMN awaiting_children boolean NOT NULL DEFAULT false;

-- A parent's children, oldest first: `jobs show`, an operator's cancel of the parent, and
-- prune (a child is kept while its parent has not ended: the parent's wait reads it).
CREATE INDEX jobs_children ON {schema}.jobs (parent_id, id) WHERE parent_id IS NOT NULL;

-- A child ended (or came back from an end): its parent's count follows, and a parent
-- sleeping awaiting its children whose count reaches 0 is due now, and idle workers hear
-- of it. The update is by id whatever the parent's state, so a parent changed by a
-- concurrent transaction is counted on its newest version (PostgreSQL re-reads a row it
-- waited for); its instant is the child's own (updated_at_ms: the driver's clock).
CREATE FUNCTION {schema}.child_ended() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    parent record;
BEGIN
    UPDATE {schema}.jobs AS p
    SET children_pending = p.children_pending + moved.change,
        run_at_ms = CASE WHEN p.state = 'sleeping' AND p.awaiting_children
                              AND p.children_pending + moved.change <= 0
                         THEN NEW.updated_at_ms ELSE p.run_at_ms END
    FROM (SELECT (OLD.state IN ('completed', 'dead', 'cancelled'))::integer
                 - (NEW.state IN ('completed', 'dead', 'cancelled'))::integer AS change) AS moved
    WHERE p.id = NEW.parent_id
    RETURNING p.queue, p.state = 'sleeping' AND p.awaiting_children
                       AND p.children_pending <= 0 AS woken
    INTO parent;
    IF parent.woken THEN
        PERFORM pg_notify({channel}, parent.queue);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_child_ended
    AFTER UPDATE OF state ON {schema}.jobs
    FOR EACH ROW
    WHEN (NEW.parent_id IS NOT NULL
          AND (OLD.state IN ('completed', 'dead', 'cancelled'))
              IS DISTINCT FROM (NEW.state IN ('completed', 'dead', 'cancelled')))
    EXECUTE FUNCTION {schema}.child_ended();

-- A run marked awaiting its children changed state: a park (running -> sleeping) with
-- none pending any more is due now (its last child ended between the wait's read and the
-- park); any other change (its claim, a failure, a cancel) clears the mark, so a later
-- step.sleep is never cut short.
CREATE FUNCTION {schema}.awaiting_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state = 'sleeping' AND OLD.state = 'running' THEN
        IF NEW.children_pending <= 0 THEN
            UPDATE {schema}.jobs SET run_at_ms = NEW.updated_at_ms WHERE id = NEW.id;
            PERFORM pg_notify({channel}, NEW.queue);
        END IF;
    ELSIF NEW.state <> 'sleeping' THEN
        UPDATE {schema}.jobs SET awaiting_children = false WHERE id = NEW.id;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_awaiting_moved
    AFTER UPDATE OF state ON {schema}.jobs
    FOR EACH ROW
    WHEN (OLD.awaiting_children)
    EXECUTE FUNCTION {schema}.awaiting_moved();

COMMENT ON COLUMN {schema}.jobs.parent_id IS 'The run that enqueued this one with step.enqueue (its fan-out), if any.';
COMMENT ON COLUMN {schema}.jobs.children_pending IS 'How many runs this one enqueued with step.enqueue have not ended (completed, dead, cancelled).';
COMMENT ON COLUMN {schema}.jobs.awaiting_children IS 'Marked by step.wait while the run is held, until its park on that wait ends: the last child to end makes it due.';
