-- A run may hold several slots at once: its job's concurrency key plus the worker fleet's
-- tenant, queue and global caps. Settles and heartbeats release and extend every slot a
-- run holds by its id, so the holder column needs its own index.
CREATE INDEX lease_slots_holder ON {schema}.lease_slots (holder);

COMMENT ON COLUMN {schema}.lease_slots.holder IS 'The run id holding the slot; its settle releases every slot it holds.';
