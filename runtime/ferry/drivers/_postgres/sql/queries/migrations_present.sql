-- Whether the schema has a migration ledger at all: read before the ledger itself, so a
-- fresh schema is told apart without an error that would abort the caller's transaction.
SELECT to_regclass('{schema}.migrations') IS NOT NULL AS present
