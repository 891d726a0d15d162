-- The queue, its step results, its concurrency slots and its paused queues.
-- Every instant is epoch milliseconds (bigint) on the driver's clock, never the server's
-- now(): tests freeze time, and workers compare leases on the same clock that wrote them.

CREATE TABLE {schema}.jobs (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name                text    NOT NULL,
    queue               text    NOT NULL,
    payload             jsonb   NOT NULL,
    idempotency_key     text    NOT NULL UNIQUE,
    state               text    NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'running', 'sleeping', 'completed', 'dead', 'cancelled')),
    attempts            integer NOT NULL DEFAULT 0,
    max_attempts        integer NOT NULL,
    priority            integer NOT NULL DEFAULT 0,
    run_at_ms           bigint  NOT NULL,
    tenant              text,
    actor               text,
    concurrency_key     text,
    locked_by           text,
    lease_expires_at_ms bigint,
    last_error_code     text,
    last_error_message  text,
    result              jsonb,
    progress_current    bigint,
    progress_total      bigint,
    created_at_ms       bigint  NOT NULL,
    updated_at_ms       bigint  NOT NULL,
    finished_at_ms      bigint
);

-- The claim walks this index in claim order and stops after `limit` rows, so its cost
-- follows the live rows (queued, sleeping, running) and never the completed history.
-- Running rows are in it too, so a lapsed lease is reclaimed by the same ordered scan.
CREATE INDEX jobs_claim_order ON {schema}.jobs (priority DESC, run_at_ms, id)
    WHERE state IN ('queued', 'sleeping', 'running');

-- Pruning finds the oldest finished rows without reading the live ones.
CREATE INDEX jobs_prune_order ON {schema}.jobs (finished_at_ms)
    WHERE state IN ('completed', 'cancelled');

CREATE TABLE {schema}.steps (
    job_id         bigint NOT NULL REFERENCES {schema}.jobs (id) ON DELETE CASCADE,
    name           text   NOT NULL,
    -- Insertion order: steps recorded in the same millisecond still list in run order.
    seq            bigint GENERATED ALWAYS AS IDENTITY,
    kind           text   NOT NULL CHECK (kind IN ('run', 'sleep')),
    result         jsonb,
    started_at_ms  bigint NOT NULL,
    finished_at_ms bigint NOT NULL,
    wake_at_ms     bigint,
    PRIMARY KEY (job_id, name)
);

-- Slot n of a key is one row, so the primary key itself forbids two holders in one slot.
CREATE TABLE {schema}.lease_slots (
    key           text    NOT NULL,
    slot          integer NOT NULL,
    holder        text    NOT NULL,
    expires_at_ms bigint  NOT NULL,
    PRIMARY KEY (key, slot)
);

CREATE TABLE {schema}.paused_queues (
    queue        text   PRIMARY KEY,
    paused_at_ms bigint NOT NULL
);

COMMENT ON TABLE {schema}.jobs IS 'One row per run; instants are epoch ms on the ferry clock.';
COMMENT ON COLUMN {schema}.jobs.attempts IS 'Counted attempts: claim adds one, an interrupted, sleeping or deferred attempt gives it back.';
COMMENT ON COLUMN {schema}.jobs.locked_by IS 'The worker holding the lease while state = running.';
COMMENT ON COLUMN {schema}.jobs.lease_expires_at_ms IS 'When the lease lapses and the next claim may take the run over.';
COMMENT ON TABLE {schema}.steps IS 'Memoized step results of each run (step.run results, step.sleep wake instants).';
COMMENT ON TABLE {schema}.lease_slots IS 'Fleet-wide concurrency slots: at most limit rows per key are unexpired.';
COMMENT ON TABLE {schema}.paused_queues IS 'Queues whose runs are not claimed until resumed.';
