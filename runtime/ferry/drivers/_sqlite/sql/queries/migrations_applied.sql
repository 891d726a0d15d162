-- The ledger of applied migrations, oldest first.
SELECT version, name, checksum FROM ferry_migrations ORDER BY version
