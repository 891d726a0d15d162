-- Serialise migrators of one schema until this transaction ends ($1: the schema name).
SELECT pg_advisory_xact_lock(hashtext('ferry migrate ' || $1::text))
