-- The ledger of applied migrations. ``checksum`` is read through to_jsonb so that a ledger
-- written before the column existed still reads (as NULL) before migrations_prepare adds it.
SELECT version, name, to_jsonb(m) ->> 'checksum' AS checksum
FROM {schema}.migrations AS m
ORDER BY version
