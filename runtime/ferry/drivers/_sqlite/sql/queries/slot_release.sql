-- Give back holder :holder's slot of key :key (no-op when it holds none).
DELETE FROM ferry_lease_slots WHERE key = :key AND holder = :holder
