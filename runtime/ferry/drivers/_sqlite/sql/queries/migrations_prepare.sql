-- The ledger of applied migrations (created before the first migration runs).
CREATE TABLE IF NOT EXISTS ferry_migrations (
    version       INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL,
    applied_at_ms INTEGER NOT NULL,
    checksum      TEXT
) STRICT
