-- Give back holder $2's slot of key $1 (no-op when it holds none).
DELETE FROM {schema}.lease_slots WHERE key = $1 AND holder = $2
