-- Every slot run :holder holds lives as long as its lease: a long run keeps its slots.
UPDATE ferry_lease_slots SET expires_at_ms = :expires_at_ms WHERE holder = :holder
