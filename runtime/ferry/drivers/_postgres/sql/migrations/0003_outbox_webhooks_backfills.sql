-- The transactional outbox, the webhook delivery ledger, and backfill checkpoints.
-- Instants are epoch milliseconds on the ferry clock, as in 0001.

-- One row per side effect an application committed. The relay claims unpublished rows
-- with a lease, publishes them, and marks them; a lapsed lease makes a row claimable again.
CREATE TABLE {schema}.outbox (
    id                  bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    type                text    NOT NULL,
    payload             jsonb   NOT NULL,
    created_at_ms       bigint  NOT NULL,
    attempts            integer NOT NULL DEFAULT 0,
    claimed_by          text,
    lease_expires_at_ms bigint,
    last_error          text,
    published_at_ms     bigint
);

-- The relay's claim walks only the unpublished rows, oldest first.
CREATE INDEX outbox_unpublished ON {schema}.outbox (id) WHERE published_at_ms IS NULL;
CREATE INDEX outbox_prune_order ON {schema}.outbox (published_at_ms)
    WHERE published_at_ms IS NOT NULL;

-- One row per delivery attempt of a webhook() job that reached the network.
CREATE TABLE {schema}.webhook_attempts (
    id          bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook     text    NOT NULL,
    endpoint_id text    NOT NULL,
    event_id    text    NOT NULL,
    message_id  text    NOT NULL,
    job_id      text    NOT NULL,
    attempt     integer NOT NULL,
    outcome     text    NOT NULL
        CHECK (outcome IN ('delivered', 'failed', 'throttled', 'rejected', 'gone')),
    status      integer,
    code        text,
    message     text,
    duration_ms bigint  NOT NULL,
    at_ms       bigint  NOT NULL
);

CREATE INDEX webhook_attempts_by_endpoint ON {schema}.webhook_attempts (endpoint_id, id DESC);

-- Per endpoint: the failure streak that disables it, and whether it is disabled.
CREATE TABLE {schema}.webhook_endpoints (
    endpoint_id          text    PRIMARY KEY,
    consecutive_failures integer NOT NULL DEFAULT 0,
    disabled_at_ms       bigint,
    disabled_reason        text,
    updated_at_ms        bigint  NOT NULL
);

-- One row per backfill key: where its next page starts.
CREATE TABLE {schema}.backfills (
    key           text    PRIMARY KEY,
    cursor        jsonb,
    processed     bigint  NOT NULL,
    pages         bigint  NOT NULL,
    done          boolean NOT NULL,
    job_id        bigint,
    updated_at_ms bigint  NOT NULL
);

COMMENT ON TABLE {schema}.outbox IS 'Side effects committed with the business write; the relay publishes them.';
COMMENT ON COLUMN {schema}.outbox.claimed_by IS 'The relay holding the row until lease_expires_at_ms.';
COMMENT ON COLUMN {schema}.outbox.published_at_ms IS 'When the relay published the row (NULL: not yet); pruned after retain_published.';
COMMENT ON TABLE {schema}.webhook_attempts IS 'The webhook ledger: one row per delivery attempt.';
COMMENT ON TABLE {schema}.webhook_endpoints IS 'Consecutive failures and disablement per webhook endpoint.';
COMMENT ON TABLE {schema}.backfills IS 'Backfill checkpoints: the cursor a resumed backfill starts from.';
