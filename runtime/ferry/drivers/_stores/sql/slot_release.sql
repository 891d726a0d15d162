-- Give back :holder's slot of key :key (no-op when it holds none).
DELETE FROM {schema}.lease_slots WHERE key = :key AND holder = :holder
