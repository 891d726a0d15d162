-- Add :value to the log of (:space, :key), stamped :at_ms.
INSERT INTO ferry_record_log (space, key, value, at_ms) VALUES (:space, :key, :value, :at_ms)
