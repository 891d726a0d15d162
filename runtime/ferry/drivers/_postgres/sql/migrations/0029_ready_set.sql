-- The claimable set, apart from the run history. `jobs` stays the record of every run and
-- is written by primary key only; which runs a claim may take lives in `ready`, one small
-- row per claimable run (queued or sleeping), in claim order.
--
-- Why: a claim walks its index in claim order from the start, and every run it took leaves
-- an entry behind it there. Vacuum removes those entries only once no snapshot can still
-- see them, so while anything holds the xmin horizon back (a long REPEATABLE READ
-- transaction, a lagging replica slot, a forgotten BEGIN) every claim walks every run
-- claimed since: on `jobs_claim_order` that made a claim 8x slower after 150 s at 300
-- runs/s. TRUNCATE frees a table's dead rows whatever the horizon, so the part claims walk
-- is two partitions that take turns (PgQ's rotation): runs become ready in the current
-- one; ferry.drivers._postgres.ready switches the current partition when the other's dead
-- entries pile up, moves the rows still ready out of the retired one and truncates it.
-- Runs due more than a lookahead from now wait in `ready_later`, which claims never read
-- and rotation never moves (a million runs sleeping for a week are never copied around);
-- they are promoted shortly before they fall due.
--
-- A ready row is a hint, checked against `jobs` by the claim that takes it: a run cancelled,
-- reserved by a drain or made due at another instant leaves its old row behind, and the
-- claim that meets it drops it without running anything. So only what makes a run
-- claimable writes here (enqueue, a fan-out's children, a requeueing settle, retry,
-- import, rescue; a drain's release and a fan-in's wake through migration 0030's
-- trigger); what takes a run out of the queue never needs to find its row.
CREATE TABLE {schema}.ready (
    part            smallint NOT NULL,
    id              bigint   NOT NULL,
    priority        integer  NOT NULL,
    run_at_ms       bigint   NOT NULL,
    queue           text     NOT NULL,
    name            text     NOT NULL,
    concurrency_key text
) PARTITION BY LIST (part);

CREATE TABLE {schema}.ready_0 PARTITION OF {schema}.ready FOR VALUES IN (0);
CREATE TABLE {schema}.ready_1 PARTITION OF {schema}.ready FOR VALUES IN (1);
CREATE TABLE {schema}.ready_later PARTITION OF {schema}.ready FOR VALUES IN (2);

-- Claim order in every partition: the claim merges ready_0's and ready_1's and stops after
-- `limit` rows; a drain's reserve merges all three.
CREATE INDEX ready_claim_order ON {schema}.ready (priority DESC, run_at_ms, id);
-- Promotion takes the later runs that fall due next, oldest first.
CREATE INDEX ready_later_due ON {schema}.ready_later (run_at_ms);

-- One row: which rotating partition new ready rows go to, the one being emptied (NULL:
-- none), when the current one took over, and when the set was last tended (rescue,
-- promotion, rotation: one process of the fleet at a time).
CREATE TABLE {schema}.ready_rotation (
    id             smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    current_part   smallint NOT NULL CHECK (current_part IN (0, 1)),
    retiring_part  smallint CHECK (retiring_part IN (0, 1) AND retiring_part <> current_part),
    switched_at_ms bigint   NOT NULL,
    tended_at_ms   bigint   NOT NULL
);
INSERT INTO {schema}.ready_rotation (current_part, switched_at_ms, tended_at_ms)
VALUES (0, 0, 0);

-- Every queued and sleeping run of the store becomes ready. A migration has no clock of
-- the driver's, so runs due later go to the current partition too: the claim's index
-- keeps them after every due run, and a rotation files them under ready_later.
INSERT INTO {schema}.ready (part, id, priority, run_at_ms, queue, name, concurrency_key)
SELECT 0, id, priority, run_at_ms, queue, name, concurrency_key
FROM {schema}.jobs
WHERE state IN ('queued', 'sleeping');

-- Claims no longer read `jobs` in claim order, and the index cost every state change an
-- entry. Running runs are found by their lease instead: the rescue that puts a run whose
-- lease lapsed back in the queue walks this (the claim took such runs over in the old
-- design, walking every running run ahead of the due ones on every claim). Its predicate
-- also names moving_to (NULL for every running run) so that no fence can use the index:
-- a batch of settles or renewals tests state, worker and lease, and the planner would
-- otherwise read this small index whole instead of probing the primary key — under a
-- pinned horizon, mostly dead entries of runs long settled.
DROP INDEX {schema}.jobs_claim_order;
CREATE INDEX jobs_lease_order ON {schema}.jobs (lease_expires_at_ms)
    WHERE state = 'running' AND moving_to IS NULL;

COMMENT ON TABLE {schema}.ready IS 'The claimable set: a row per queued or sleeping run, partitioned by part (0 and 1 rotate, 2 is ready_later); checked against jobs when claimed.';
COMMENT ON COLUMN {schema}.ready.part IS 'Which partition holds the row: 0 or 1 (the rotating pair claims read), 2 (ready_later: due after the lookahead).';
COMMENT ON COLUMN {schema}.ready.run_at_ms IS 'The run''s run_at_ms when the row was written; a row whose run has another one (or is no longer queued or sleeping) is stale and dropped by the claim that meets it.';
COMMENT ON TABLE {schema}.ready_rotation IS 'The rotation of ready_0 and ready_1: the current partition, the one being emptied, and when the set was last tended.';
