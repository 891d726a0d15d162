-- Every table of ferry in one SQLite file: the queue and its steps, concurrency slots,
-- paused queues, the scheduler's state, the outbox, the webhook and backfill ledgers and
-- the dashboard's revoked sessions — the same tables, columns and meanings as the
-- Postgres schema (docs/drivers.md), each name prefixed with ferry_ because the file is
-- usually the application's own: the outbox and a transactional enqueue write through
-- the application's connection, inside its transaction, so they must share its file.
-- Every instant is epoch milliseconds on the driver's clock. JSON values are stored as
-- their text. STRICT tables refuse a value of the wrong type instead of storing it.

-- AUTOINCREMENT: a run id is never reused, even after the newest runs were pruned.
CREATE TABLE ferry_jobs (
    id                     INTEGER PRIMARY KEY AUTOINCREMENT,
    name                   TEXT    NOT NULL,
    queue                  TEXT    NOT NULL,
    payload                TEXT    NOT NULL,
    idempotency_key        TEXT    NOT NULL UNIQUE,
    state                  TEXT    NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'running', 'sleeping', 'completed', 'dead', 'cancelled',
                         'moving')),
    attempts               INTEGER NOT NULL DEFAULT 0,
    max_attempts           INTEGER NOT NULL,
    priority               INTEGER NOT NULL DEFAULT 0,
    run_at_ms              INTEGER NOT NULL,
    tenant                 TEXT,
    actor                  TEXT,
    concurrency_key        TEXT,
    locked_by              TEXT,
    lease_expires_at_ms    INTEGER,
    last_error_code        TEXT,
    last_error_message     TEXT,
    result                 TEXT,
    progress_current       INTEGER,
    progress_total         INTEGER,
    created_at_ms          INTEGER NOT NULL,
    updated_at_ms          INTEGER NOT NULL,
    finished_at_ms         INTEGER,
    cancel_requested_at_ms INTEGER,
    -- While state = moving (reserved by `ferry jobs drain`): the state before the drain
    -- took it (queued or dead) and the location of the store it goes to; locked_by names
    -- the drain. No lease: a drain killed mid-way leaves it for the next drain to the same
    -- store, never for a worker.
    moving_from            TEXT,
    moving_to              TEXT
) STRICT;

-- The claim walks this index in claim order and stops after `limit` rows, so its cost
-- follows the live rows and never the completed history. SQLite uses a partial index only
-- when the query repeats its WHERE term, so the claims spell it exactly like this.
CREATE INDEX ferry_jobs_claim_order ON ferry_jobs (priority DESC, run_at_ms, id)
    WHERE state IN ('queued', 'sleeping', 'running');

-- Pruning, the throughput and outcome series and the recent latencies read finished runs
-- through these, never the live ones.
CREATE INDEX ferry_jobs_prune_order ON ferry_jobs (finished_at_ms)
    WHERE state IN ('completed', 'cancelled');
CREATE INDEX ferry_jobs_dead_order ON ferry_jobs (finished_at_ms) WHERE state = 'dead';

-- A drain rerun finds the runs an interrupted one left for its target without a scan.
CREATE INDEX ferry_jobs_moving ON ferry_jobs (moving_to, id) WHERE state = 'moving';

-- Steps go with their run: the driver's connections enable foreign keys, so pruning a run
-- deletes its steps in the same statement.
CREATE TABLE ferry_steps (
    job_id         INTEGER NOT NULL REFERENCES ferry_jobs (id) ON DELETE CASCADE,
    name           TEXT    NOT NULL,
    kind           TEXT    NOT NULL CHECK (kind IN ('run', 'sleep')),
    result         TEXT,
    started_at_ms  INTEGER NOT NULL,
    finished_at_ms INTEGER NOT NULL,
    wake_at_ms     INTEGER,
    PRIMARY KEY (job_id, name)
) STRICT;

-- One row per held slot. Every write to this table runs in a transaction that holds the
-- file's write lock, so "count the live holders, then insert" cannot race: unlike the
-- Postgres table, no slot numbers are needed to keep two holders out of one slot.
CREATE TABLE ferry_lease_slots (
    key           TEXT    NOT NULL,
    holder        TEXT    NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    PRIMARY KEY (key, holder)
) STRICT;

-- Settles and heartbeats release and extend every slot a run holds by its id.
CREATE INDEX ferry_lease_slots_holder ON ferry_lease_slots (holder);

CREATE TABLE ferry_paused_queues (
    queue        TEXT    PRIMARY KEY,
    paused_at_ms INTEGER NOT NULL
) STRICT;

-- The scheduler: at most one leader row (id = 1), a last-tick row per task, paused tasks.
CREATE TABLE ferry_scheduler_leader (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    holder         TEXT    NOT NULL,
    acquired_at_ms INTEGER NOT NULL,
    expires_at_ms  INTEGER NOT NULL
) STRICT;

CREATE TABLE ferry_scheduler_ticks (
    task               TEXT    PRIMARY KEY,
    checked_through_ms INTEGER NOT NULL,
    last_occurrence_ms INTEGER,
    last_fired_at_ms   INTEGER
) STRICT;

CREATE TABLE ferry_scheduler_paused_tasks (
    task         TEXT    PRIMARY KEY,
    paused_at_ms INTEGER NOT NULL
) STRICT;

-- The transactional outbox: rows the application wrote in its own transaction.
CREATE TABLE ferry_outbox (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    type                TEXT    NOT NULL,
    payload             TEXT    NOT NULL,
    created_at_ms       INTEGER NOT NULL,
    attempts            INTEGER NOT NULL DEFAULT 0,
    claimed_by          TEXT,
    lease_expires_at_ms INTEGER,
    last_error          TEXT,
    published_at_ms     INTEGER
) STRICT;

CREATE INDEX ferry_outbox_unpublished ON ferry_outbox (id) WHERE published_at_ms IS NULL;
CREATE INDEX ferry_outbox_prune_order ON ferry_outbox (published_at_ms)
    WHERE published_at_ms IS NOT NULL;

CREATE TABLE ferry_webhook_attempts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook     TEXT    NOT NULL,
    endpoint_id TEXT    NOT NULL,
    event_id    TEXT    NOT NULL,
    message_id  TEXT    NOT NULL,
    job_id      TEXT    NOT NULL,
    attempt     INTEGER NOT NULL,
    outcome     TEXT    NOT NULL
        CHECK (outcome IN ('delivered', 'failed', 'throttled', 'rejected', 'gone')),
    status      INTEGER,
    code        TEXT,
    message     TEXT,
    duration_ms INTEGER NOT NULL,
    at_ms       INTEGER NOT NULL
) STRICT;

CREATE INDEX ferry_webhook_attempts_by_endpoint ON ferry_webhook_attempts (endpoint_id, id DESC);

CREATE TABLE ferry_webhook_endpoints (
    endpoint_id          TEXT    PRIMARY KEY,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    disabled_at_ms       INTEGER,
    disabled_reason      TEXT,
    updated_at_ms        INTEGER NOT NULL
) STRICT;

CREATE TABLE ferry_backfills (
    key           TEXT    PRIMARY KEY,
    cursor        TEXT,
    processed     INTEGER NOT NULL,
    pages         INTEGER NOT NULL,
    done          INTEGER NOT NULL,
    job_id        INTEGER,
    updated_at_ms INTEGER NOT NULL
) STRICT;

-- Signed-out dashboard sessions, refused until their cookie would have expired anyway.
CREATE TABLE ferry_admin_revoked_sessions (
    session       TEXT    PRIMARY KEY,
    expires_at_ms INTEGER NOT NULL
) STRICT;
