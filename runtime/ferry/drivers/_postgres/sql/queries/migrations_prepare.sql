-- The schema and the ledger of applied migrations (run under migrations_lock).
CREATE SCHEMA IF NOT EXISTS {schema};
CREATE TABLE IF NOT EXISTS {schema}.migrations (
    version       integer PRIMARY KEY,
    name          text    NOT NULL,
    applied_at_ms bigint  NOT NULL
);
ALTER TABLE {schema}.migrations ADD COLUMN IF NOT EXISTS checksum text;
COMMENT ON COLUMN {schema}.migrations.checksum IS 'sha256 of the migration file as applied; ferry refuses a schema whose ledger disagrees with the files it ships.';
