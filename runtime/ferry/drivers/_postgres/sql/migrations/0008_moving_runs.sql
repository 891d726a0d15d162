-- `ferry jobs drain` moves queued (and dead) runs to another store. A run it has reserved
-- is `moving`: outside the states the claim reads, so no worker takes it, and holding no
-- lease that could lapse, so a drain killed mid-way makes nothing claimable again; only a
-- drain to the same target finishes it (it takes the run over, copies it, deletes it).
ALTER TABLE {schema}.jobs DROP CONSTRAINT jobs_state_check;
-- NOT VALID: every row already passed the narrower check this one widens, so validating
-- would re-read the whole table under this migration's exclusive lock to prove nothing.
-- New and updated rows are checked as before.
ALTER TABLE {schema}.jobs ADD CONSTRAINT jobs_state_check CHECK (
    state IN ('queued', 'running', 'sleeping', 'completed', 'dead', 'cancelled', 'moving')
) NOT VALID;

ALTER TABLE {schema}.jobs ADD COLUMN moving_from text, ADD COLUMN moving_to text;

-- A rerun finds the runs an interrupted drain left for its target without a table scan.
CREATE INDEX jobs_moving ON {schema}.jobs (moving_to, id) WHERE state = 'moving';

COMMENT ON COLUMN {schema}.jobs.moving_from IS 'While state = moving: the state before the drain reserved the run (queued or dead), restored on the target.';
COMMENT ON COLUMN {schema}.jobs.moving_to IS 'While state = moving: the location of the store the drain moves the run to; locked_by names the drain.';
