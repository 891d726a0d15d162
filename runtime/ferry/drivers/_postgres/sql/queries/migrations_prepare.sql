-- The schema and the ledger of applied migrations (run under migrations_lock).
CREATE SCHEMA IF NOT EXISTS {schema};
CREATE TABLE IF NOT EXISTS {schema}.migrations (
    version       integer PRIMARY KEY,
    name          text    NOT NULL,
    applied_at_ms bigint  NOT NULL
);
