-- Add :value (JSON text) to the log of (:space, :key), stamped :at_ms.
INSERT INTO {schema}.record_log (space, key, value, at_ms) VALUES (:space, :key, :value, :at_ms)
