-- Whether the file has a ledger at all (a new file has none).
SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ferry_migrations')
